/**
 * Why the bot refused a person: one code per meaning, not per message. Logs, metrics and tests
 * read the code; the person reads the message. A closed set, so the metrics label that carries it
 * stays bounded: add a code here (grouped by meaning) before using it anywhere.
 */
export const ERROR_CODES = [
  // What was typed cannot be read.
  "invalid_address",
  "invalid_ens_name",
  "invalid_token_id",
  "token_id_out_of_range",
  "invalid_link",
  "wrong_link_kind",
  "invalid_number",
  "number_out_of_range",
  "invalid_choice",
  "invalid_role",
  "invalid_schedule",
  "invalid_criteria",
  "invalid_characters",
  "invalid_argument",
  "input_too_long",
  "too_many_items",
  // What was typed is incomplete, or does not fit together.
  "missing_argument",
  "unexpected_argument",
  "conflicting_arguments",
  "duplicate_criterion",
  "chain_mismatch",
  // Something named that the bot does not know.
  "unknown_command",
  "unknown_subcommand",
  "unknown_chain",
  "unknown_collection",
  "unknown_behavior",
  "unknown_role",
  "name_not_found",
  "ambiguous_name",
  // Who may do it.
  "not_manager",
  "anonymous_sender",
  "cannot_give_role",
  "button_not_yours",
  "no_proved_wallet",
  // Where it may be done, and what this bot offers.
  "wrong_chat_kind",
  "feature_unavailable",
  "spam_unavailable",
  "collection_names_unavailable",
  "not_subscribed",
  "verify_refused",
  // Too much, too soon; the bot's own state.
  "rate_limited",
  "restarting",
  // Buttons.
  "button_unknown",
  "button_expired",
  "button_other_chat",
  "button_stale",
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === "string" && (ERROR_CODES as readonly string[]).includes(value);
}
