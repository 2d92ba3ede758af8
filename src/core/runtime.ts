import type { ApiClient } from "../api/client.ts";
import { ApiError, apiErrorLevel } from "../api/errors.ts";
import { UserError } from "../errors.ts";
import type { Logger } from "../log.ts";
import { cutText, sliceChars } from "../strings.ts";
import { ACTION_ID_PATTERN, type ActionStore } from "./actions.ts";
import { apiErrorMessage, asUserError } from "./api-errors.ts";
import type { ChartDrawer } from "./charts.ts";
import { CollectionRefresher } from "./collection-refresh.ts";
import {
  type AnyCommand,
  type AnyOption,
  type BotSettings,
  type CommandContext,
  type CommandStore,
  chatKey,
  type Invocation,
  type Platform,
  personKey,
} from "./command.ts";
import { short } from "./format.ts";
import { KnownCollections } from "./known-collections.ts";
import { randomBytesPooled } from "./random.ts";
import { type Admission, RateLimiter } from "./rate-limit.ts";
import { RecentWallets } from "./recent-wallets.ts";
import type { RenderableReply, Reply } from "./reply.ts";
import { NameResolver, type Resolution } from "./resolver.ts";

export interface RuntimeOptions {
  commands: readonly AnyCommand[];
  api: ApiClient;
  actions: ActionStore;
  logger: Logger;
  /** Draws the charts replies ask for (the render side implements it). */
  charts: ChartDrawer;
  settings: BotSettings;
  deadlineMs: number;
  /** Per person, on every platform but the console. */
  rateLimit: { burst: number; perMinute: number };
  /**
   * Per group chat, on the platforms where a group shares one send budget (Telegram: about 20
   * messages a minute per group). Private chats are never limited this way.
   */
  chatRateLimit?: Partial<Record<Platform, { burst: number; perMinute: number }>> | undefined;
  buttonTtlSeconds: number;
  collections?: KnownCollections;
  /**
   * How often the collection index is refreshed in the background once `refresher.start()` runs
   * (default 15 min, the top lists' freshness); 0: never in the background, only when a name
   * misses it.
   */
  collectionRefreshMs?: number;
  /** Durable state for commands that keep it (subscriptions, linked wallets, reports). */
  store: CommandStore;
  /** The wall clock: dates shown and stored, button expiry. */
  now?: () => Date;
  /** Monotonic milliseconds for in-process durations (rate limits); default performance.now. */
  monotonic?: () => number;
}

export type Outcome = "ok" | "user_error" | "api_error" | "rate_limited" | "deadline" | "bug";

export interface OutcomeEvent {
  command: string;
  kind: "command" | "button";
  outcome: Outcome;
  ms: number;
}

/**
 * What the runtime gives an adapter: the reply, and how the invocation ended. An adapter shows a
 * refusal (any outcome but "ok") apart from an answer: see `isRefusal` in src/adapters/types.ts.
 */
export interface Answered {
  reply: RenderableReply;
  outcome: Outcome;
}

/** A short id for an invocation: in the log and in the apology a person sees. */
export function newInvocationId(): string {
  return randomBytesPooled(5).toString("hex");
}

const COMMAND_NAME = /^[a-z][a-z0-9_]{0,31}$/;

/**
 * The action of the buttons that answer "which one?": the runtime runs the command again with
 * the payload as its raw arguments (the chosen collection put in). No command may define it.
 */
const RERUN_ACTION = "rerun";

/** What a command or button gives back, and how it counts (a name not found is the person's to fix). */
interface Answer {
  reply: Reply;
  outcome: "ok" | "user_error";
}

/** Builds the registry, failing fast on a bad or duplicate name (before anything connects). */
export function buildRegistry(commands: readonly AnyCommand[]): Map<string, AnyCommand> {
  const registry = new Map<string, AnyCommand>();
  for (const command of commands) {
    if (!COMMAND_NAME.test(command.name)) {
      throw new Error(
        `Command name "${command.name}" must be 1-32 characters of a-z, 0-9 and _, starting with a letter.`,
      );
    }
    if (registry.has(command.name)) throw new Error(`Two commands are named "${command.name}".`);
    const names = Object.keys(command.options);
    for (const name of names) {
      if (!COMMAND_NAME.test(name))
        throw new Error(`Option "${name}" of /${command.name} is not a valid option name.`);
    }
    if (command.actions && RERUN_ACTION in command.actions)
      throw new Error(
        `/${command.name} defines the action "${RERUN_ACTION}", which the runtime keeps.`,
      );
    const restCount = Object.values(command.options).filter((option) => option.rest).length;
    if (restCount > 1)
      throw new Error(`/${command.name} has more than one option that takes the rest of the line.`);
    registry.set(command.name, command);
  }
  return registry;
}

/** "/top <metric> <duration> [limit]". */
export function usage(command: AnyCommand): string {
  const parts = Object.entries(command.options).map(([name, option]) => {
    const label = option.placeholder || name;
    return option.required ? `<${label}>` : `[${label}]`;
  });
  return [`/${command.name}`, ...parts].join(" ");
}

/** Splits a line into tokens; double quotes group words ("Bored Apes"). */
function tokenize(text: string): string[] {
  const tokens: string[] = [];
  const pattern = /"([^"]*)"|(\S+)/g;
  for (const match of text.matchAll(pattern)) tokens.push(match[1] ?? match[2] ?? "");
  return tokens;
}

/** An address, a short form or a link: one word that is never part of a name. */
const isReference = (token: string) => /^<?(0x|https?:)/i.test(token);

/**
 * Whether an option would take this word. An option that takes names takes any word, so it counts
 * only for references: otherwise a mistyped choice ("/wallet x maybe") would become a name.
 */
function takes(option: AnyOption, token: string): boolean {
  return (!option.words || isReference(token)) && option.schema.safeParse(token).success;
}

/**
 * The raw arguments of a text command (Telegram, console): `name:value` or `name=value` for any
 * option, the rest by position, and an option marked `rest` takes what is left of the line. An
 * option that takes names takes the words up to one a later option takes ("/owners bored ape
 * yacht club 7d"), unless another such option follows ("/segment bayc mayc": one word each;
 * longer names go in double quotes).
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
  const open = names.filter((name) => raw[name] === undefined);
  for (const [index, name] of open.entries()) {
    if (positional.length === 0) break;
    const option = command.options[name];
    if (!option) continue;
    const later = open
      .slice(index + 1)
      .flatMap((laterName) => command.options[laterName] ?? [])
      // A rest-of-line option takes anything, so it does not count.
      .filter((laterOption) => !laterOption.rest);
    const isLast = index === open.length - 1;
    if (
      option.rest ||
      (isLast &&
        option.kind === "string" &&
        !option.choices &&
        !option.autocomplete &&
        !option.words &&
        positional.length > 1)
    ) {
      raw[name] = positional.splice(0).join(" ");
      continue;
    }
    const token = positional[0] ?? "";
    // An optional option that cannot take this word lets it pass to the next option that can
    // ("/report spam 0x… name.eth": the name is the wallet, not the optional token id).
    if (
      !option.required &&
      later.some((laterOption) => takes(laterOption, token)) &&
      !takes(option, token)
    )
      continue;
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
  if (positional.length > 0) {
    throw new UserError(
      `I did not expect "${sliceChars(positional.join(" "), 60)}". Usage: ${usage(command)}`,
    );
  }
  return raw;
}

class DeadlineError extends Error {
  override name = "DeadlineError";
}

/**
 * The command runtime: every invocation from every platform comes through here, is parsed,
 * rate-limited, run under a deadline and turned into a reply, and every failure into a message.
 */
export class Runtime {
  readonly registry: Map<string, AnyCommand>;
  readonly collections: KnownCollections;
  /** Keeps the collection index filled: `start()` it when the bot starts, `stop()` at the end. */
  readonly refresher: CollectionRefresher;
  private readonly recentWallets = new RecentWallets();
  /** Told of every outcome, for metrics. */
  onOutcome: ((event: OutcomeEvent) => void) | undefined;
  private readonly limiter: RateLimiter;
  private readonly chatLimiters: Partial<Record<Platform, RateLimiter>> = {};
  private readonly now: () => Date;
  private readonly inFlight = new Set<Promise<unknown>>();
  private accepting = true;

  constructor(private readonly options: RuntimeOptions) {
    this.registry = buildRegistry(options.commands);
    this.collections = options.collections ?? new KnownCollections();
    this.refresher = new CollectionRefresher({
      api: options.api,
      collections: this.collections,
      logger: options.logger.child({ part: "collection-index" }),
      intervalMs: options.collectionRefreshMs ?? 15 * 60_000,
      ...(options.monotonic ? { monotonic: options.monotonic } : {}),
    });
    this.now = options.now ?? (() => new Date());
    this.limiter = new RateLimiter(
      options.rateLimit.burst,
      options.rateLimit.perMinute,
      options.monotonic,
    );
    for (const [platform, limit] of Object.entries(options.chatRateLimit ?? {})) {
      if (limit)
        this.chatLimiters[platform as Platform] = new RateLimiter(
          limit.burst,
          limit.perMinute,
          options.monotonic,
        );
    }
  }

  get commands(): AnyCommand[] {
    return [...this.registry.values()];
  }

  find(name: string): AnyCommand | undefined {
    return this.registry.get(name.toLowerCase());
  }

  /** A text command: "/top volume 1d" arrives as name "top" and text "volume 1d". */
  async answerText(invocation: Invocation, name: string, text: string): Promise<Answered> {
    const command = this.find(name);
    if (!command) return this.unknownCommand(name);
    let raw: Record<string, string>;
    try {
      raw = parseTextArgs(command, text);
    } catch (error) {
      return this.userError(error instanceof Error ? error.message : String(error));
    }
    return this.answerCommand(invocation, command.name, raw);
  }

  /** A command with its raw option values by name (Discord gives them so). */
  async answerCommand(
    invocation: Invocation,
    name: string,
    raw: Record<string, string | undefined>,
  ): Promise<Answered> {
    const command = this.find(name);
    if (!command) return this.unknownCommand(name);
    return this.execute(invocation, command.name, "command", (ctx) =>
      this.invoke(ctx, command, raw, `/${command.name}`),
    );
  }

  /** A button click: the id is looked up, checked against the chat, and its action run. */
  async answerButton(invocation: Invocation, id: string): Promise<Answered> {
    if (!ACTION_ID_PATTERN.test(id)) return this.userError("That button is not one of mine.");
    const stored = await this.options.actions.get(id);
    if (!stored || stored.expiresAt <= this.now().getTime()) {
      return this.userError("This button has expired. Run the command again for fresh buttons.");
    }
    if (stored.platform !== invocation.platform || stored.chatId !== invocation.chat.id) {
      return this.userError("This button belongs to another chat.");
    }
    const { action, payload } = stored.action;
    const command = this.find(stored.action.command);
    if (command && action === RERUN_ACTION) {
      const raw: Record<string, string> = {};
      for (const [key, value] of Object.entries(payload))
        if (typeof value === "string") raw[key] = value;
      return this.execute(invocation, command.name, "button", (ctx) =>
        this.invoke(ctx, command, raw, "this button"),
      );
    }
    const handler = command?.actions?.[action];
    const parsed = handler?.payload.safeParse(payload);
    if (!command || !handler || !parsed?.success)
      return this.userError("This button no longer works. Run the command again.");
    return this.execute(invocation, command.name, "button", async (ctx) => {
      assertPerson(command, invocation, "this button");
      await assertManager(command, invocation, "this button");
      return { reply: await handler.run(ctx, parsed.data), outcome: "ok" };
    });
  }

  // The reply alone, for the many tests that read only what was said.
  async runText(invocation: Invocation, name: string, text: string): Promise<RenderableReply> {
    return (await this.answerText(invocation, name, text)).reply;
  }

  async run(
    invocation: Invocation,
    name: string,
    raw: Record<string, string | undefined>,
  ): Promise<RenderableReply> {
    return (await this.answerCommand(invocation, name, raw)).reply;
  }

  async click(invocation: Invocation, id: string): Promise<RenderableReply> {
    return (await this.answerButton(invocation, id)).reply;
  }

  /**
   * Parses the raw arguments, checks who may run the command, looks up the names among them, and
   * runs it. A name that needs a choice, or matches nothing, is answered instead, with buttons
   * that run the command again with the chosen collection (what `what` was: "/x" or a button).
   */
  private async invoke(
    ctx: CommandContext,
    command: AnyCommand,
    raw: Record<string, string | undefined>,
    what: string,
  ): Promise<Answer> {
    const args = parseArgs(command, raw);
    assertPerson(command, ctx.invocation, what);
    await assertManager(command, ctx.invocation, what);
    for (const [name, option] of Object.entries(command.options)) {
      if (!option.resolve || !raw[name]?.trim()) continue;
      const resolution: Resolution<unknown> = await option.resolve(args[name], ctx.resolver);
      if (resolution.kind === "found") {
        args[name] = resolution.value;
        continue;
      }
      const given: Record<string, string> = {};
      for (const [key, value] of Object.entries(raw)) if (value !== undefined) given[key] = value;
      return {
        outcome: resolution.kind === "choose" ? "ok" : "user_error",
        reply: {
          text: resolution.text,
          tone: resolution.kind === "choose" ? "info" : "warning",
          private: true,
          buttons: resolution.choices.map((choice) => ({
            label: choice.label,
            action: {
              command: command.name,
              action: RERUN_ACTION,
              payload: { ...given, [name]: choice.value },
            },
          })),
        },
      };
    }
    return { reply: await command.run(ctx, args as never), outcome: "ok" };
  }

  /** Suggestions while typing an option with an autocomplete source (at most 25). */
  autocomplete(name: string, option: string, text: string): { name: string; value: string }[] {
    const source = this.find(name)?.options[option]?.autocomplete;
    if (source !== "collection") return [];
    const found = this.collections.search(text, 25);
    // Discord wants the answer within 3 s: nothing waits, but the next keystroke may find more.
    if (found.length === 0) void this.refresher.refreshForMiss();
    return found.map((collection) => ({
      name: cutText(
        `${collection.name || "Unnamed collection"} (${short(collection.address)})`,
        100,
        {
          unit: "utf16",
          mark: "",
        },
      ),
      value: collection.address,
    }));
  }

  /** Stops taking new invocations and waits for those in flight (graceful shutdown). */
  async drain(): Promise<void> {
    this.accepting = false;
    await Promise.allSettled([...this.inFlight]);
  }

  /**
   * The person's limit first, then the group's: one member runs out long before the group does,
   * so others can still ask. Each overrun is refused once; the commands after it within the same
   * wait get a quiet refusal, so a flood is not answered by a flood.
   */
  private admit(invocation: Invocation): RenderableReply | undefined {
    // The console's only person is the bot's operator: there is nobody to protect the service from.
    if (invocation.platform === "console") return undefined;
    const person = this.limiter.take(personKey(invocation));
    if (!person.allowed) return this.refusal(person, "You are sending commands quickly");
    const chatLimiter = this.chatLimiters[invocation.platform];
    if (!chatLimiter || invocation.chat.kind === "private") return undefined;
    const chat = chatLimiter.take(chatKey(invocation));
    if (!chat.allowed) return this.refusal(chat, "This chat is sending me many commands");
    return undefined;
  }

  private refusal(admission: Admission & { allowed: false }, what: string): RenderableReply {
    const reply = this.userErrorReply(
      `${what}: try again in ${Math.ceil(admission.waitMs / 1000)} s.`,
    );
    return admission.repeated ? { ...reply, quiet: true } : reply;
  }

  private unknownCommand(name: string): Answered {
    return this.userError(`There is no /${sliceChars(name, 32)} command. Try /help.`);
  }

  private userError(text: string): Answered {
    return { reply: this.userErrorReply(text), outcome: "user_error" };
  }

  private userErrorReply(text: string): RenderableReply {
    return { text, tone: "warning", private: true };
  }

  private async execute(
    invocation: Invocation,
    command: string,
    kind: "command" | "button",
    body: (ctx: CommandContext) => Promise<Answer>,
  ): Promise<Answered> {
    const started = performance.now();
    const logger = this.options.logger.child({
      inv: invocation.id,
      platform: invocation.platform,
      command,
      kind,
    });
    const finish = (outcome: Outcome, reply: RenderableReply): Answered => {
      const ms = performance.now() - started;
      logger.info({ outcome, ms: Math.round(ms) }, "invocation answered");
      this.onOutcome?.({ command, kind, outcome, ms });
      return { reply, outcome };
    };
    if (!this.accepting) {
      return finish(
        "user_error",
        this.userErrorReply("The bot is restarting. Try again in a moment."),
      );
    }
    const refusal = this.admit(invocation);
    if (refusal) return finish("rate_limited", refusal);

    const controller = new AbortController();
    const ctx: CommandContext = {
      api: this.options.api,
      invocation,
      logger,
      signal: controller.signal,
      now: this.now,
      settings: this.options.settings,
      collections: this.collections,
      resolver: new NameResolver({
        collections: this.collections,
        refresher: this.refresher,
        wallets: this.recentWallets,
        chat: chatKey(invocation),
      }),
      actions: this.options.actions,
      store: this.options.store,
    };
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        controller.abort(new DeadlineError("deadline"));
        reject(new DeadlineError("deadline"));
      }, this.options.deadlineMs);
    });
    // The chart is drawn within the command's deadline, as part of its answer.
    const work = body(ctx).then(async (answer) => ({
      ...answer,
      reply: await this.drawChart(answer.reply, logger),
    }));
    this.inFlight.add(work);
    // A handler that fails after its deadline has nobody to tell: never an unhandled rejection.
    work.catch(() => {}).finally(() => this.inFlight.delete(work));
    try {
      const answer = await Promise.race([work, deadline]);
      return finish(answer.outcome, await this.materialize(answer.reply, invocation));
    } catch (error) {
      if (
        error instanceof DeadlineError ||
        (error instanceof ApiError && controller.signal.aborted)
      ) {
        return finish(
          "deadline",
          this.userErrorReply(
            `That took longer than ${Math.round(this.options.deadlineMs / 1000)} s, so I stopped. Try again, or ask for less.`,
          ),
        );
      }
      const userError = asUserError(error);
      if (userError) return finish("user_error", this.userErrorReply(userError.message));
      if (error instanceof ApiError) {
        logger[apiErrorLevel(error)]({ err: error, kind: error.kind }, "data service error");
        const text = apiErrorMessage(error);
        return finish("api_error", {
          text: error.kind === "invalid_response" ? `${text} (ref ${invocation.id})` : text,
          tone: error.kind === "not_found" || error.kind === "bad_request" ? "warning" : "error",
          private: true,
        });
      }
      logger.error({ err: error }, "command failed");
      return finish("bug", {
        text: `Sorry, something went wrong on my side. If it keeps happening, tell the bot's operator: ref ${invocation.id}.`,
        tone: "error",
        private: true,
      });
    } finally {
      clearTimeout(timer);
    }
  }

  /** The reply with its chart spec drawn into its image (or left out when it cannot be drawn). */
  private async drawChart(reply: Reply, logger: Logger): Promise<Omit<Reply, "chart">> {
    const { chart, ...rest } = reply;
    if (!chart) return rest;
    return { ...rest, image: await this.options.charts.draw(chart, logger) };
  }

  /**
   * Draws the reply's chart if it still has one, stores the actions behind the reply's buttons (one transaction) and gives the renderers only
   * their ids. The buttons belong to the chat the reply goes to (a confidential one's is the
   * private chat) and count against the invoking person's cap; an alert's, with nobody invoking,
   * against the chat's. If they cannot be stored (a full disk), the reply goes without buttons.
   */
  async materialize(
    reply: Reply,
    target: Pick<Invocation, "platform" | "chat"> & {
      user?: Pick<Invocation["user"], "id" | "privateChatId">;
    },
  ): Promise<RenderableReply> {
    const { buttons, ...rest } = await this.drawChart(reply, this.options.logger);
    if (!buttons || buttons.length === 0) return rest;
    const chatId = (reply.confidential && target.user?.privateChatId) || target.chat.id;
    const expiresAt = this.now().getTime() + this.options.buttonTtlSeconds * 1000;
    const userId = target.user?.id ?? `alert:${target.chat.id}`;
    let ids: string[];
    try {
      ids = await this.options.actions.putMany(
        buttons.map((button) => ({
          platform: target.platform,
          chatId,
          userId,
          action: button.action,
          expiresAt,
        })),
      );
    } catch (error) {
      this.options.logger.warn(
        { err: error, platform: target.platform, chat: chatId },
        "could not store button actions; the reply goes without buttons",
      );
      return rest;
    }
    return {
      ...rest,
      buttons: buttons.map((button, i) => ({
        label: button.label,
        id: ids[i] ?? "",
        ...(button.style ? { style: button.style } : {}),
      })),
    };
  }
}

async function assertManager(
  command: AnyCommand,
  invocation: Invocation,
  what: string,
): Promise<void> {
  if (command.requiresManageChannel && !(await invocation.canManageChannel()))
    throw new UserError(`Only people who can manage this channel may use ${what}.`);
}

function assertPerson(command: AnyCommand, invocation: Invocation, what: string): void {
  if (command.requiresPerson && invocation.user.anonymous) {
    throw new UserError(
      `Anonymous admins and channels cannot use ${what}: send it from your own account.`,
    );
  }
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
      const reason = parsed.error.issues[0]?.message ?? "is not valid";
      throw new UserError(/^["A-Z]/.test(reason) ? reason : `${name}: ${reason}.`);
    }
    args[name] = parsed.data;
  }
  if (missing.length > 0) {
    throw new UserError(
      `Missing ${missing.join(", ")}. Usage: ${usage(command)}\nExample: ${command.examples[0] ?? usage(command)}`,
    );
  }
  return args;
}
