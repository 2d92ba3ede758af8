import type { Platform } from "../core/command.ts";
import type { Outcome } from "../core/outcome.ts";
import type { HttpRoute } from "../http/host.ts";
import type { ChatSender } from "../outbound/types.ts";
import type { GateMembership } from "./membership.ts";

/**
 * What every chat platform implements, and all the bot knows of one: it is built with its
 * settings (src/adapters/index.ts), started and stopped by the bot, sends alerts, says whether it
 * is healthy, and may serve HTTP routes on the bot's one HTTP host (a webhook).
 */
export interface ChatAdapter extends ChatSender {
  readonly platform: Platform;
  /** The platform's name for people ("Telegram"), in start-up errors. */
  readonly label: string;
  /** Where start() connects (a start that fails or hangs names it); none for a local chat. */
  readonly connectsTo: string | undefined;
  /** The setting holding the bot token, named when the platform refuses it. */
  readonly tokenSetting?: string;
  /** Connects and starts taking messages; resolves once it does. */
  start(): Promise<void>;
  /** Stops taking messages and lets the replies in flight finish. */
  stop(): Promise<void>;
  /** Connected and taking messages (/healthz). */
  healthy(): boolean;
  /** Routes this platform serves on the bot's HTTP host; mounted before the host listens. */
  readonly routes: readonly HttpRoute[];
  /** Resolves when the chat ended by itself (the console's input closed); absent otherwise. */
  readonly done?: Promise<void>;
  /** What the platform does for gates (issue 29): roles, or a group's join requests. */
  readonly gateMembership?: GateMembership;
}

export type { PrivateOrigin, PrivateTarget } from "../outbound/types.ts";

/**
 * A person asked to join a group: its chat, the person, and the chat that reaches them (a
 * feature's setup gives it: FeatureSetup.onJoinRequest; the adapter is built with it).
 */
export type JoinRequestListener = (
  chatId: string,
  userId: string,
  userChatId: string,
  inviteLink?: string,
) => Promise<void>;

/** A join request with its platform (see JoinRequestListener). */
export type PlatformJoinRequestListener = (
  platform: Platform,
  ...request: Parameters<JoinRequestListener>
) => Promise<void>;

/**
 * How an adapter tells a refusal (expired button, not allowed, rate limit, a failure) from an
 * answer: by the outcome the runtime computed, never by the reply's look. A refusal is shown to
 * the invoker alone where the platform can (an alert on a Telegram button, an ephemeral Discord
 * message).
 */
export function isRefusal(outcome: Outcome): boolean {
  return outcome !== "ok";
}
