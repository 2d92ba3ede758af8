import { z } from "zod";
import type { ApiClient } from "../api/client.ts";
import type { Checked } from "../api/validate.ts";
import type { Chain } from "../chains.ts";
import type { Logger } from "../log.ts";
import type { Store } from "../store/types.ts";
import type { ActionStore } from "./actions.ts";
import type { KnownCollections } from "./known-collections.ts";
import type { Platform } from "./platform.ts";
import type { ButtonSpec, Reply } from "./reply.ts";
import type { NameResolver, Resolution } from "./resolver.ts";

export type { Platform } from "./platform.ts";

/** Who asked, where: everything a command may know about the platform, and nothing more. */
export interface Invocation {
  /** Unique per invocation; shown in apologies so a report can be matched to the log. */
  id: string;
  platform: Platform;
  user: {
    id: string;
    name: string;
    /**
     * Not a person's own account: Telegram's anonymous group admins and posts sent as a channel
     * speak for a chat, and the id is that chat's (`chat:<id>`). Commands that act for a person
     * (`requiresPerson`) refuse them.
     */
    anonymous?: boolean;
    /**
     * The chat where the bot talks to this person alone, when the platform has one apart from
     * this chat (Telegram: the private chat). Confidential replies go there, their buttons too.
     */
    privateChatId?: string;
  };
  /**
   * Telegram, in a group: the address of a button that opens the person's private chat with the
   * bot and sends `/start <payload>` there (a bot may not write to a person first).
   */
  privateStart?: (payload: string) => string;
  /**
   * How the platform can tell this person privately later, opaque to commands (Discord: the
   * interaction's application id and token, valid 15 minutes). A secret: never logged or shown.
   */
  confirm?: string;
  chat: { id: string; kind: "private" | "group" | "channel"; title?: string };
  /**
   * Discord, in a server: the server's id (a server's gates are the server's, whichever channel
   * they were set up in), and the names of the roles the interaction's options name, by id, as
   * Discord resolves them (a role option gives only the id).
   */
  guild?: { id: string; roleNames?: Readonly<Record<string, string>> };
  /**
   * Telegram, in the private chat: the group whose button opened it (its `/start` payload). Typed
   * by anyone, so it is a claim: whoever uses it checks the person is in that group.
   */
  startedFrom?: string;
  /**
   * The community's name (a Discord server's, a Telegram group's, the one a private chat was
   * started from) and the bot's own, for the pages that name them (/verify's), as the platform
   * gives them; read only when asked (a Discord server's name costs a REST call), bounded, none
   * on failure. Chosen by people: shown only as text.
   */
  names?: () => Promise<{ placeName?: string; botName?: string }>;
  /**
   * Whether the person may change this channel's settings (subscriptions, reports list), or those
   * of `chatId` on the same platform (a button under a confidential reply, pressed in private).
   */
  canManageChannel: (chatId?: string) => Promise<boolean>;
  /**
   * Whether the person manages the whole community (Discord: Manage Server, or Administrator;
   * elsewhere as `canManageChannel`): what seeing its members' insights takes. Absent: as
   * `canManageChannel`.
   */
  canManageCommunity?: () => Promise<boolean>;
}

/** A person across platforms, "telegram:42": what rate limits, report prompts and subscriptions name. */
export function personKey(invocation: Pick<Invocation, "platform" | "user">): string {
  return `${invocation.platform}:${invocation.user.id}`;
}

/** A chat across platforms, "discord:123". */
export function chatKey(invocation: Pick<Invocation, "platform" | "chat">): string {
  return `${invocation.platform}:${invocation.chat.id}`;
}

export interface BotSettings {
  /** Where ipfs:// images are fetched through, e.g. https://ipfs.io/ipfs/ */
  ipfsGateway: string;
  /** Spam / not-spam reports one person may make in an hour. */
  reportsPerHour: number;
  /** Scheduled digests one channel may have (default 5). */
  digestsPerChat?: number;
  /** Watches one channel may hold (WATCHES_PER_CHAT); default 10. */
  watchesPerChat?: number;
}

/** The durable state commands may use. */
export type CommandStore = Pick<Store, "wallets" | "reports" | "chatSettings" | "sql"> &
  /** The chats that refused the bot, resumed when the bot is used there (absent: nothing resumes). */
  Partial<Pick<Store, "chatPauses">>;

/**
 * The features' services the commands reach (`ctx.gates`, `ctx.verify`), declared by each feature
 * itself, as fastify's decorations and grammY's context flavors are: the feature's folder adds its
 * field with `declare module`, so the kernel names no feature. Each is absent in a bot (or a
 * test's runtime) without that feature.
 */
// biome-ignore lint/suspicious/noEmptyInterface: the features add their fields by declaration merging
export interface CommandServices {}

export interface CommandContext extends CommandServices {
  /** The chain this invocation reads: its `chain` option, else the chat's, else the first. */
  chain: Chain;
  /** Every configured chain, the default first. */
  chains: readonly Chain[];
  /** Whether the invocation named its chain (else `chain` is the chat's or the first). */
  chainGiven: boolean;
  /** The data-service client of `chain`. */
  api: ApiClient;
  invocation: Invocation;
  logger: Logger;
  /** Aborted when the command's deadline passes. */
  signal: AbortSignal;
  now: () => Date;
  settings: BotSettings;
  /** The collection index of `chain`. */
  collections: KnownCollections;
  /** Names and short forms into addresses; remembers the wallets a reply shows in this chat. */
  resolver: NameResolver;
  /**
   * Another served chain's collection index and resolver (a criterion `on base` read from a chat
   * on ethereum); undefined for a chain the bot does not serve. Absent in hand-built contexts.
   */
  onChain?: (
    chain: string,
  ) => { collections: KnownCollections; resolver: NameResolver } | undefined;
  actions: ActionStore;
  store: CommandStore;
  /** The commands as people see them here (with the chain option where it applies): for /help. */
  commands: readonly AnyCommand[];
  /**
   * Starts storing the actions of buttons the answer will carry while the command still reads
   * its data (call it after starting the reads): the reply that carries these same objects goes
   * out without waiting for their store. Absent in contexts tests build by hand.
   */
  storeButtons?: (buttons: readonly ButtonSpec[]) => void;
  /**
   * Runs `task` after the answer has gone on its way (on the next turn of the event loop, and in
   * any case before the next command starts): work the answer does not need, such as remembering
   * what it showed for later lookups. Absent in contexts tests build by hand: run it at once then.
   */
  afterReply?: (task: () => void) => void;
}

/**
 * Discord option types the definitions map to; text platforms parse every value from a string.
 * "role": Discord's role picker, which gives the role's id.
 */
export type OptionKind = "string" | "integer" | "boolean" | "role";

/**
 * One option of a command. `Present` is a type-level marker: true when the handler always gets a
 * value (the option is required, or has a fallback). `Parsed` is what the schema gives when it
 * cannot decide alone (a collection's name): `resolve` turns it into the handler's `T`.
 */
export interface OptionDef<T, Present extends boolean = boolean, Parsed = T> {
  description: string;
  kind: OptionKind;
  /** The person must give it (Discord marks it required; text platforms answer with the usage). */
  required: boolean;
  readonly __present?: Present;
  /** Parses the raw string a person typed; failures carry the reason as the message. */
  schema: z.ZodType<Parsed, string>;
  /**
   * Looks up what the schema left open (a collection's name in the index, a wallet's short form
   * among those shown), before the command runs: its handler gets only what this finds.
   */
  resolve?: (parsed: Parsed, resolver: NameResolver) => Promise<Resolution<T>>;
  /** On text platforms it may take several words (a name of several words; see parseTextArgs). */
  words?: boolean;
  /**
   * Words of this shape are meant for this option even when they do not parse (a token id of 79
   * digits): a name before it stops there, so the person hears this option's own error.
   */
  claims?: RegExp;
  /**
   * The chain a value names (a pasted explorer or marketplace link): the command reads that
   * chain when it names none.
   */
  chainOf?: (raw: string) => string | undefined;
  /** Fixed values (shown as choices on Discord and in /help). */
  choices?: readonly { name: string; value: string }[];
  /** Suggest values while typing (Discord autocomplete). */
  autocomplete?: "collection";
  /** On text platforms, this option takes the rest of the line (lists of wallets). */
  rest?: boolean;
  /**
   * On text platforms it takes a word by position only when the word is one of its values (a
   * leading chain word, "/top base volume"); any other word goes on to the next option.
   */
  onlyIfValid?: boolean;
  /**
   * Not shown (Discord, /help, usage lines, the Telegram menu) and never taken by position, but
   * accepted by name (`chain:ethereum` when the bot serves one chain).
   */
  hidden?: boolean;
  /** Value used when the option is not given. */
  fallback?: T;
  /** A short placeholder for usage lines, e.g. "collection". */
  placeholder: string;
}

// biome-ignore lint/suspicious/noExplicitAny: the options map is heterogeneous by design
export type AnyOption = OptionDef<any, boolean, any>;
export type OptionsMap = Record<string, AnyOption>;

export type ArgsOf<O extends OptionsMap> = {
  [K in keyof O]: O[K] extends OptionDef<infer T, infer P, infer _Parsed>
    ? P extends true
      ? T
      : T | undefined
    : never;
};

export type ActionPayload = Record<string, string | number | boolean | null>;

/**
 * What a command's button runs (made by defineAction in button-actions.ts, from the schema its
 * buttons' payloads are encoded by): it names its command and action (the registry checks them
 * against where it is listed) and decodes the stored payload before `run`.
 */
export interface ActionHandler<P = unknown> {
  command: string;
  name: string;
  /** The stored payload decoded; undefined when it does not decode (an old or forged button). */
  parse(stored: ActionPayload): P | undefined;
  run(ctx: CommandContext, payload: P): Promise<Reply>;
}

export interface Command<O extends OptionsMap = OptionsMap> {
  name: string;
  description: string;
  /** Longer help: what it shows and what it needs. */
  help?: string;
  options: O;
  examples: readonly string[];
  /** Only people who may manage the channel (checked at run time on every platform). */
  requiresManageChannel?: boolean;
  /**
   * Acts for one person (their linked wallet, their reports, a private answer): refused, command
   * and buttons alike, to anonymous senders, who have no account of their own.
   */
  requiresPerson?: boolean;
  /**
   * Reads nothing chain-specific (help, settings, a linked wallet): it gets no `chain` option.
   * Every other command gets one from the runtime (see src/core/chain-option.ts).
   */
  chainless?: boolean;
  /**
   * Works with the data service's spam detection (reports): refused, command and buttons alike,
   * on a chain without it.
   */
  requiresSpam?: boolean;
  /**
   * Retired, kept answering for those who type it from habit: left out of every list people see
   * (/help, the README's table, the Telegram menu, Discord's registered commands).
   */
  hidden?: boolean;
  run(ctx: CommandContext, args: ArgsOf<NoInfer<O>>): Promise<Reply>;
  /** What the buttons under this command's replies do. */
  actions?: Record<string, ActionHandler>;
}

/** A command of any options shape (`run` is a method, so its parameter is checked bivariantly). */
export type AnyCommand = Command<OptionsMap>;

/** Keeps the options' types so `run` gets typed arguments. */
export function defineCommand<O extends OptionsMap>(command: Command<O>): Command<O> {
  return command;
}

/** Wraps a check (from src/api/validate.ts: a value or a message) as a zod schema over a raw string. */
export function parserSchema<T>(check: (raw: string) => Checked<T>): z.ZodType<T, string> {
  return z.string().transform((raw, ctx) => {
    const checked = check(raw);
    if (checked.ok) return checked.value;
    ctx.issues.push({
      code: "custom",
      message: checked.message,
      input: raw,
      params: { errorCode: checked.code },
    });
    return z.NEVER;
  });
}
