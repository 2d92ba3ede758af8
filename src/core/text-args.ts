import { isErrorCode } from "../error-codes.ts";
import { UserError } from "../errors.ts";
import { sliceChars } from "../strings.ts";
import type { AnyCommand, AnyOption } from "./command.ts";
import { isBareAddress } from "./links.ts";
import { usage } from "./registry.ts";

/**
 * The text-argument grammar (Telegram, console): a line of words becomes raw option values, and
 * raw values become parsed arguments, each refusal naming the option.
 */

/** Splits a line into tokens; double quotes group words ("Bored Apes"). */
function tokenize(text: string): string[] {
  const tokens: string[] = [];
  const pattern = /"([^"]*)"|(\S+)/g;
  for (const match of text.matchAll(pattern)) tokens.push(match[1] ?? match[2] ?? "");
  return tokens;
}

/**
 * An address (with or without 0x: 40 hex digits with a letter among them, as 40 decimal digits
 * may be a token id), a short form or a link: one word that is never part of a name.
 */
const isReference = (token: string) =>
  /^<?(0x|https?:)/i.test(token) || isBareAddress(token.replace(/^<|>$/g, ""));

/**
 * Whether an option would take this word. An option that takes names takes any word, so it counts
 * only for references: otherwise a mistyped choice ("/wallet x maybe") would become a name.
 */
function takes(option: AnyOption, token: string): boolean {
  return (!option.words || isReference(token)) && option.schema.safeParse(token).success;
}

/**
 * Options a positional word may be meant for whatever its place: fixed values (a chain, a metric,
 * a period) and numbers. A word that fits one of these and nothing else lands there.
 */
const isChoice = (option: AnyOption) =>
  option.choices !== undefined && !option.words && !option.rest;
const isSlot = (option: AnyOption) => isChoice(option) || option.kind === "integer";

/** "metric (volume, sales, max_price)", "a number for limit": what an option takes. */
function whatItTakes(name: string, option: AnyOption): string {
  return option.choices
    ? `${name} (${option.choices.map((choice) => choice.value).join(", ")})`
    : `a number for ${name}`;
}

/** A word nothing takes, named with the options it could have been meant for. */
function notUnderstood(command: AnyCommand, token: string, slots: [string, AnyOption][]) {
  const what = slots.map(([name, option]) => whatItTakes(name, option));
  const last = what.pop() ?? "";
  const list = what.length === 0 ? last : `one of ${what.join(", ")} or ${last}`;
  return new UserError(
    "invalid_choice",
    `I did not understand "${sliceChars(token, 40)}": it is not ${list}. Usage: ${usage(command)}`,
  );
}

/**
 * The raw arguments of a text command (Telegram, console): `name:value` or `name=value` for any
 * option, the rest by position, and an option marked `rest` takes what is left of the line. A
 * word that fits exactly one option of fixed values (a chain, a metric, a period) lands there
 * wherever it stands ("/top 7d volume 5"), as long as it is not part of a text that takes the
 * rest of the line. An option that takes names takes the words up to one a later option takes
 * ("/owners bored ape yacht club 7d"), unless another such option follows ("/segment bayc mayc":
 * one word each; longer names go in double quotes).
 */
export function parseTextArgs(command: AnyCommand, text: string): Record<string, string> {
  const names = Object.keys(command.options);
  const raw: Record<string, string> = {};
  const positional: string[] = [];
  for (const token of tokenize(text)) {
    const named = /^([a-z][a-z0-9_]*)[:=](.+)$/i.exec(token);
    const name = named?.[1]?.toLowerCase();
    if (named && name && names.includes(name) && named[2] !== undefined) raw[name] = named[2];
    else positional.push(token);
  }
  // A hidden option is only ever given by name.
  const open = names.filter((name) => raw[name] === undefined && !command.options[name]?.hidden);
  const optionOf = (name: string) => command.options[name] as AnyOption;
  const unfilled = (name: string) => raw[name] === undefined;
  /** The open options of fixed values or numbers still without a word. */
  const slots = (): [string, AnyOption][] =>
    open
      .filter(unfilled)
      .flatMap((name) => (isSlot(optionOf(name)) ? [[name, optionOf(name)]] : []));
  /** The one option without a word yet among those of fixed values that takes this word. */
  const choiceFor = (token: string): string | undefined => {
    const fits = open.filter(
      (name) =>
        unfilled(name) &&
        isChoice(optionOf(name)) &&
        optionOf(name).schema.safeParse(token).success,
    );
    return fits.length === 1 ? fits[0] : undefined;
  };
  /** Words the required options without a word still need (their own values aside). */
  const needed = () =>
    open.filter((name) => unfilled(name) && optionOf(name).required && !isChoice(optionOf(name)))
      .length;
  for (const [index, name] of open.entries()) {
    const option = command.options[name];
    if (!option || !unfilled(name)) continue;
    const rest =
      option.rest ||
      (index === open.length - 1 &&
        option.kind === "string" &&
        !option.choices &&
        !option.autocomplete &&
        !option.words &&
        positional.length > 1);
    // A leading chain word: taken when it is one, left for the next option otherwise.
    if (option.onlyIfValid && !option.schema.safeParse(positional[0] ?? "").success) continue;
    // A word of another option's fixed values goes there, unless this option takes it or it is
    // the last word a required option has ("/stats day" names a collection).
    while (!rest && positional.length > 0) {
      const token = positional[0] ?? "";
      const target = choiceFor(token);
      if (!target || target === name || takes(option, token) || positional.length - 1 < needed())
        break;
      raw[target] = token;
      positional.shift();
    }
    if (positional.length === 0) break;
    if (rest) {
      raw[name] = positional.splice(0).join(" ");
      continue;
    }
    const later = open
      .slice(index + 1)
      .filter(unfilled)
      .flatMap((laterName) => command.options[laterName] ?? [])
      // A rest-of-line option takes anything, so it does not count.
      .filter((laterOption) => !laterOption.rest);
    const token = positional[0] ?? "";
    if (option.onlyIfValid && !option.schema.safeParse(token).success) continue;
    // An optional option before a rest-of-line one (a note) takes only words of its own shape:
    // any other word starts the note ("/report spam azuki 5 this looks fake").
    if (
      !option.required &&
      option.claims &&
      !option.claims.test(token) &&
      open.slice(index + 1).some((laterName) => command.options[laterName]?.rest)
    )
      continue;
    // An optional option that cannot take this word lets it pass to the next option that can
    // ("/report spam 0x… name.eth": the name is the wallet, not the optional token id).
    if (
      !option.required &&
      later.some((laterOption) => takes(laterOption, token)) &&
      !takes(option, token)
    )
      continue;
    // A word for fixed values or a number that fits none: said so, with what it could have
    // been, when there is more than one option it could be meant for.
    if (isSlot(option) && !takes(option, token)) {
      const taken = alreadyGiven(command, raw, token);
      if (taken) throw taken;
      // Not those the words after it are for ("/subscribe erc72 show": not badactors).
      const ahead = new Set(positional.slice(1).map(choiceFor));
      const candidates = slots().filter(([slot]) => !ahead.has(slot));
      if (candidates.length > 1) throw notUnderstood(command, token, candidates);
    }
    let count = 1;
    if (option.words && !later.some((laterOption) => laterOption.words) && !isReference(token)) {
      while (count < positional.length) {
        const next = positional[count] ?? "";
        if (
          isReference(next) ||
          later.some((laterOption) => takes(laterOption, next) || laterOption.claims?.test(next))
        )
          break;
        count++;
      }
    }
    raw[name] = positional.splice(0, count).join(" ");
  }
  // Words left over: each that fits an option of fixed values without a word goes there.
  for (const token of [...positional]) {
    const target = choiceFor(token);
    if (!target) continue;
    raw[target] = token;
    positional.splice(positional.indexOf(token), 1);
  }
  const [first] = positional;
  if (first !== undefined) {
    const taken = alreadyGiven(command, raw, first);
    if (taken) throw taken;
    const candidates = slots();
    if (candidates.length > 0) throw notUnderstood(command, first, candidates);
    throw new UserError(
      "unexpected_argument",
      `I did not expect "${sliceChars(positional.join(" "), 60)}". Usage: ${usage(command)}`,
    );
  }
  return raw;
}

/** "I did not expect "30d": duration is already 7d", for a word of an option given a value. */
function alreadyGiven(
  command: AnyCommand,
  raw: Record<string, string>,
  token: string,
): UserError | undefined {
  const name = Object.keys(command.options).find((key) => {
    const option = command.options[key] as AnyOption;
    return raw[key] !== undefined && isChoice(option) && option.schema.safeParse(token).success;
  });
  if (name === undefined) return undefined;
  return new UserError(
    "unexpected_argument",
    `I did not expect "${sliceChars(token, 40)}": ${name} is already ${sliceChars(raw[name] ?? "", 40)}. Usage: ${usage(command)}`,
  );
}

/** Parses each raw value with its option's schema; names the option in every message. */
export function parseArgs(
  command: AnyCommand,
  raw: Record<string, string | undefined>,
): Record<string, unknown> {
  const args: Record<string, unknown> = {};
  const missing: string[] = [];
  for (const [name, option] of Object.entries(command.options)) {
    const value = raw[name];
    if (value === undefined || value.trim() === "") {
      if (option.required) missing.push(option.placeholder || name);
      else args[name] = option.fallback;
      continue;
    }
    const parsed = option.schema.safeParse(value);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const reason = issue?.message ?? "is not valid";
      throw new UserError(
        errorCodeOf(issue),
        /^["A-Z]/.test(reason) ? reason : `${name}: ${reason}.`,
        { option: name },
      );
    }
    args[name] = parsed.data;
  }
  if (missing.length > 0) {
    throw new UserError(
      "missing_argument",
      `Missing ${missing.join(", ")}. Usage: ${usage(command)}\nExample: ${command.examples[0] ?? usage(command)}`,
    );
  }
  return args;
}

/** The code an option's schema gave its refusal (see parserSchema), else the generic one. */
function errorCodeOf(
  issue: { code: string; params?: Record<string, unknown> | undefined } | undefined,
) {
  const code = issue?.code === "custom" ? issue.params?.errorCode : undefined;
  return isErrorCode(code) ? code : "invalid_argument";
}
