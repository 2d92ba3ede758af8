import { AsyncResource } from "node:async_hooks";
import type { ApiClient } from "../api/client.ts";
import { ApiError, apiErrorLevel } from "../api/errors.ts";
import { type Chain, parseChains } from "../chains.ts";
import { type ErrorCode, type ErrorContext, UserError } from "../errors.ts";
import type { Logger } from "../log.ts";
import { cutText, sliceChars } from "../strings.ts";
import { ACTION_ID_PATTERN, type ActionStore } from "./actions.ts";
import { Admission } from "./admission.ts";
import { apiErrorMessage, asUserError } from "./api-errors.ts";
import {
  CHAIN_OPTION,
  chainNamed,
  findChain,
  servedCommands,
  spamUnavailable,
} from "./chain-option.ts";
import type { ChartDrawer } from "./charts.ts";
import { CollectionRefresher } from "./collection-refresh.ts";
import {
  type AnyCommand,
  type BotSettings,
  type CommandContext,
  type CommandServices,
  type CommandStore,
  chatKey,
  type Invocation,
  type Platform,
} from "./command.ts";
import { short } from "./format.ts";
import { KnownCollections } from "./known-collections.ts";
import { type EarlyButtons, ReplyMaterializer } from "./materialize.ts";
import type { Answered, Outcome, OutcomeEvent } from "./outcome.ts";
import { assertManager, assertPerson } from "./permissions.ts";
import { randomBytesPooled } from "./random.ts";
import type { LimiterFactory } from "./rate-limit.ts";
import { RecentWallets } from "./recent-wallets.ts";
import { buildRegistry, RERUN_ACTION } from "./registry.ts";
import {
  type ButtonAction,
  type ButtonSpec,
  type RenderableReply,
  type Reply,
  userErrorReply,
} from "./reply.ts";
import { NameResolver, type Resolution } from "./resolver.ts";
import { parseArgs, parseTextArgs } from "./text-args.ts";

export interface RuntimeOptions {
  commands: readonly AnyCommand[];
  /** The first chain's data-service client (and every chain's when `apis` is not given). */
  api: ApiClient;
  /** The chains served, the default first (default: ethereum alone, on `api`). */
  chains?: readonly Chain[];
  /** Each chain's client by chain id; a chain missing here reads through `api`. */
  apis?: ReadonlyMap<string, ApiClient>;
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
  /** The first chain's collection index (default: one in memory). */
  collections?: KnownCollections;
  /** Each chain's collection index by chain id (`collections` wins for the first; default: in memory). */
  collectionIndexes?: ReadonlyMap<string, KnownCollections>;
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
  /** Builds the rate limiters (default: this process's own; shared over Redis when set up). */
  limiters?: LimiterFactory | undefined;
  /**
   * The features' services the commands reach (`ctx.gates`, `ctx.verify`: CommandServices); a
   * runtime without one has no such feature (tests that need none).
   */
  services?: CommandServices | undefined;
  /**
   * Added to the footer of every reply and alert that goes out: "simulated data" when the data
   * comes from the embedded simulator (SIMULATED_DATA_MARK).
   */
  dataMark?: string | undefined;
  /** Told of every outcome, for metrics. */
  onOutcome?: ((event: OutcomeEvent) => void) | undefined;
}

/** A short id for an invocation: in the log and in the apology a person sees. */
export function newInvocationId(): string {
  return randomBytesPooled(5).toString("hex");
}

/** What a command or button gives back, and how it counts (a name not found is the person's to fix). */
interface Answer {
  reply: Reply;
  outcome: "ok" | "user_error";
  code?: ErrorCode;
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
  /** The chains served, the default first. */
  readonly chains: readonly Chain[];
  /** The first chain's collection index. */
  readonly collections: KnownCollections;
  /** Each chain's collection index, by chain id. */
  readonly collectionIndexes: ReadonlyMap<string, KnownCollections>;
  /** Keeps the first chain's collection index filled (see `refreshers` for every chain's). */
  readonly refresher: CollectionRefresher;
  /** One per chain: `start()` each when the bot starts, `stop()` at the end. */
  readonly refreshers: ReadonlyMap<string, CollectionRefresher>;
  private readonly apis: ReadonlyMap<string, ApiClient>;
  /** The default chain each chat was last seen with (autocomplete cannot wait for the store). */
  private readonly recentWallets = new RecentWallets();
  /** Told of every outcome, for metrics (RuntimeOptions.onOutcome; tests set it later). */
  onOutcome: ((event: OutcomeEvent) => void) | undefined;
  private readonly admission: Admission;
  private readonly materializer: ReplyMaterializer;
  private readonly now: () => Date;
  private readonly inFlight = new Set<Promise<unknown>>();
  /** Work after answers (logs, counts, what commands put off): run together, after the answers. */
  private readonly afterReplies: (() => void)[] = [];
  /** Resolves when the work in `afterReplies` has run; undefined when none is waiting. */
  private afterRepliesRun: Promise<void> | undefined;
  /** Paused chats being resumed after answers (chatWorks). */
  private readonly resuming = new Set<Promise<unknown>>();
  private accepting = true;

  constructor(private readonly options: RuntimeOptions) {
    this.chains = options.chains?.length ? options.chains : parseChains(undefined, undefined);
    this.onOutcome = options.onOutcome;
    this.registry = buildRegistry(servedCommands(options.commands, this.chains));
    const apis = new Map<string, ApiClient>();
    const indexes = new Map<string, KnownCollections>();
    const refreshers = new Map<string, CollectionRefresher>();
    for (const [index, chain] of this.chains.entries()) {
      const api = options.apis?.get(chain.id) ?? options.api;
      apis.set(chain.id, api);
      const collections =
        (index === 0 ? options.collections : undefined) ??
        options.collectionIndexes?.get(chain.id) ??
        new KnownCollections();
      indexes.set(chain.id, collections);
      refreshers.set(
        chain.id,
        new CollectionRefresher({
          api,
          collections,
          logger: options.logger.child({
            part: "collection-index",
            ...(this.chains.length > 1 ? { chain: chain.id } : {}),
          }),
          intervalMs: options.collectionRefreshMs ?? 15 * 60_000,
          name: `collection refresh ${chain.id}`,
          ...(options.monotonic ? { monotonic: options.monotonic } : {}),
        }),
      );
    }
    this.apis = apis;
    this.collectionIndexes = indexes;
    this.refreshers = refreshers;
    const first = this.chains[0]?.id ?? "";
    this.collections = indexes.get(first) as KnownCollections;
    this.refresher = refreshers.get(first) as CollectionRefresher;
    this.now = options.now ?? (() => new Date());
    this.admission = new Admission(
      options.rateLimit,
      options.chatRateLimit,
      options.monotonic,
      options.limiters,
    );
    this.materializer = new ReplyMaterializer({
      actions: options.actions,
      charts: options.charts,
      logger: options.logger,
      buttonTtlSeconds: options.buttonTtlSeconds,
      now: this.now,
      mark: options.dataMark,
    });
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
      return error instanceof UserError
        ? this.userError(error.code, error.message)
        : this.userError("invalid_argument", String(error));
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
    const chain = CHAIN_OPTION in command.options ? raw[CHAIN_OPTION] : undefined;
    return this.execute(
      invocation,
      command,
      "command",
      chain,
      (ctx) => this.invoke(ctx, command, raw, `/${command.name}`),
      this.linkedChain(command, raw),
    );
  }

  /**
   * The served chain a pasted link names (basescan.org, opensea.io/item/base/…), read when the
   * command names none: a link is answered from its own chain rather than refused.
   */
  private linkedChain(
    command: AnyCommand,
    raw: Record<string, string | undefined>,
  ): string | undefined {
    if (!(CHAIN_OPTION in command.options)) return undefined;
    for (const [name, option] of Object.entries(command.options)) {
      const value = raw[name];
      const chain = value === undefined ? undefined : option.chainOf?.(value);
      if (chain && this.chains.some((served) => served.id === chain)) return chain;
    }
    return undefined;
  }

  /** A button click: the id is looked up, checked against the chat, and its action run. */
  async answerButton(invocation: Invocation, id: string): Promise<Answered> {
    if (!ACTION_ID_PATTERN.test(id))
      return this.userError("button_unknown", "That button is not one of mine.");
    const stored = await this.options.actions.get(id);
    if (!stored || stored.expiresAt <= this.now().getTime()) {
      return this.userError(
        "button_expired",
        "This button has expired. Run the command again for fresh buttons.",
      );
    }
    if (stored.platform !== invocation.platform || stored.chatId !== invocation.chat.id) {
      return this.userError("button_other_chat", "This button belongs to another chat.");
    }
    const { action, payload } = stored.action;
    const command = this.find(stored.action.command);
    if (command && action === RERUN_ACTION) {
      const raw: Record<string, string> = {};
      for (const [key, value] of Object.entries(payload))
        if (typeof value === "string") raw[key] = value;
      return this.execute(
        invocation,
        command,
        "button",
        raw[CHAIN_OPTION],
        (ctx) => this.invoke(ctx, command, raw, "this button"),
        this.linkedChain(command, raw),
      );
    }
    const handler = command?.actions?.[action];
    const parsed = handler?.parse(payload);
    if (!command || !handler || parsed === undefined)
      return this.userError("button_stale", "This button no longer works. Run the command again.");
    const chain = typeof payload.chain === "string" ? payload.chain : undefined;
    return this.execute(invocation, command, "button", chain, async (ctx) => {
      assertPerson(command, invocation, "this button");
      await assertManager(command, invocation, "this button");
      assertSpam(command, ctx.chain);
      return { reply: await handler.run(ctx, parsed), outcome: "ok" };
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
    assertSpam(command, ctx.chain);
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
        ...(resolution.kind === "choose" ? {} : { code: "name_not_found" as const }),
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

  /**
   * Suggestions while typing an option with an autocomplete source (at most 25), from the chain
   * the interaction names so far, else the chat's (as last seen), else the first. With several
   * chains each suggestion names its chain.
   */
  async autocomplete(
    name: string,
    option: string,
    text: string,
    where: { chain?: string | undefined; chat?: Pick<Invocation, "platform" | "chat"> } = {},
  ): Promise<{ name: string; value: string }[]> {
    const source = this.find(name)?.options[option]?.autocomplete;
    if (source !== "collection") return [];
    // The chain named so far, else the chat's as a command there would read it (one small read
    // of its settings, well within Discord's 3 s), else the first.
    const chain =
      (where.chain ? findChain(this.chains, where.chain) : undefined) ??
      (where.chat
        ? await this.chainFor(where.chat, undefined, this.options.logger)
        : this.defaultChain);
    const found = this.collectionsOf(chain).search(text, 25);
    // Discord wants the answer within 3 s: nothing waits, but the next keystroke may find more.
    if (found.length === 0) void this.refreshers.get(chain.id)?.refreshForMiss();
    const suffix = this.chains.length > 1 ? ` · ${chain.name}` : "";
    return found.map((collection) => ({
      name: cutText(
        `${collection.name || "Unnamed collection"} (${short(collection.address)})${suffix}`,
        100,
        {
          unit: "utf16",
          mark: "",
        },
      ),
      value: collection.address,
    }));
  }

  get defaultChain(): Chain {
    return this.chains[0] as Chain;
  }

  /** A chain's collection index. */
  collectionsOf(chain: Pick<Chain, "id">): KnownCollections {
    return this.collectionIndexes.get(chain.id) ?? this.collections;
  }

  /**
   * The chain an invocation reads: the one it names (an unknown one is a UserError listing
   * those served), else the chat's (/settings chain), else the first. With one chain the store
   * is not asked.
   */
  async chainFor(
    invocation: Pick<Invocation, "platform" | "chat">,
    requested: string | undefined,
    logger?: Logger,
  ): Promise<Chain> {
    if (requested !== undefined && requested.trim() !== "")
      return chainNamed(this.chains, requested);
    if (this.chains.length < 2) return this.defaultChain;
    let chosen: string | undefined;
    try {
      chosen = (await this.options.store.chatSettings.get(invocation.platform, invocation.chat.id))
        .chain;
    } catch (error) {
      // The answer on the first chain beats no answer.
      logger?.warn({ err: error }, "could not read the chat's settings; using the first chain");
      return this.defaultChain;
    }
    // A chain no longer configured (CHAINS changed): the first.
    return this.chains.find((chain) => chain.id === chosen) ?? this.defaultChain;
  }

  /** Stops taking new invocations and waits for those in flight (graceful shutdown). */
  async drain(): Promise<void> {
    this.accepting = false;
    await Promise.allSettled([...this.inFlight]);
    await this.settled();
  }

  /**
   * Resolves once the work put after the answers given so far has run: their log lines and
   * counts (onOutcome), what their commands put off (ctx.afterReply), and a paused chat's resume.
   */
  async settled(): Promise<void> {
    await this.afterRepliesRun;
    await Promise.allSettled([...this.resuming]);
  }

  /**
   * Puts `task` after the answer: every such task of the answers given in this turn of the event
   * loop runs on the next one (setImmediate), once the adapters have sent the answers (the sends
   * start in the promise callbacks that get them, before the loop turns). The answer goes out
   * without waiting for logs, counts or bookkeeping.
   */
  private afterReply(task: () => void): void {
    // In the answer's own async context: what a task logs or tells belongs to its invocation.
    this.afterReplies.push(AsyncResource.bind(task));
    if (this.afterRepliesRun) return;
    this.afterRepliesRun = new Promise<void>((resolve) =>
      setImmediate(() => {
        this.runAfterReplies();
        resolve();
      }),
    );
  }

  /** Runs the work waiting after answers now (a new command must find what the last remembered). */
  private runAfterReplies(): void {
    this.afterRepliesRun = undefined;
    for (let task = this.afterReplies.shift(); task; task = this.afterReplies.shift()) {
      try {
        task();
      } catch (error) {
        this.options.logger.warn({ err: error }, "work after an answer failed");
      }
    }
  }

  private unknownCommand(name: string): Answered {
    return this.userError(
      "unknown_command",
      `There is no /${sliceChars(name, 32)} command. Try /help.`,
    );
  }

  private userError(code: ErrorCode, text: string): Answered {
    return { reply: userErrorReply(text), outcome: "user_error", code };
  }

  private async execute(
    invocation: Invocation,
    found: AnyCommand,
    kind: "command" | "button",
    requestedChain: string | undefined,
    body: (ctx: CommandContext) => Promise<Answer>,
    /** The chain read when none is requested, before the chat's: a pasted link's. */
    linkedChain?: string,
  ): Promise<Answered> {
    const command = found.name;
    const started = performance.now();
    // What the answers just given put off is done before this command reads anything.
    if (this.afterReplies.length > 0) this.runAfterReplies();
    const logger = this.options.logger.child({
      inv: invocation.id,
      platform: invocation.platform,
      command,
      kind,
    });
    /** Put off by the command (ctx.afterReply) until its answer is given; then after it. */
    let putOff: (() => void)[] | undefined = [];
    const finish = (
      outcome: Outcome,
      reply: RenderableReply,
      code?: ErrorCode,
      context?: ErrorContext,
    ): Answered => {
      const ms = performance.now() - started;
      const coded = code ? { code } : {};
      const works = this.accepting && outcome !== "rate_limited";
      const tasks = putOff ?? [];
      putOff = undefined;
      // Logged, counted and the command's bookkeeping done after the answer went on its way, not
      // before (issue 34, item 11).
      this.afterReply(() => {
        for (const task of tasks) task();
        logger.info(
          { outcome, ...coded, ...(context ? { context } : {}), ms: Math.round(ms) },
          "invocation answered",
        );
        this.onOutcome?.({ command, kind, outcome, ...coded, ms });
        if (works) this.chatWorks(invocation, logger);
      });
      return { reply, outcome, ...coded };
    };
    /** A refusal the person can fix: its message shown, its code and context counted and logged. */
    const refuse = (userError: UserError): Answered =>
      finish("user_error", userErrorReply(userError.message), userError.code, userError.context);
    if (!this.accepting) {
      return finish(
        "user_error",
        userErrorReply("The bot is restarting. Try again in a moment."),
        "restarting",
      );
    }
    const refusal = await this.admission.admit(invocation);
    if (refusal) return finish("rate_limited", refusal, "rate_limited");

    let chain: Chain;
    try {
      // A command that reads no chain's data is not worth a look at the chat's settings.
      chain =
        found.chainless && requestedChain === undefined
          ? this.defaultChain
          : await this.chainFor(
              invocation,
              requestedChain?.trim() ? requestedChain : linkedChain,
              logger,
            );
    } catch (error) {
      // An unknown chain: the message lists those served, and nothing else happens.
      const userError = asUserError(error);
      if (userError) return refuse(userError);
      throw error;
    }
    const collections = this.collectionsOf(chain);
    const controller = new AbortController();
    /** Buttons the command stored while it read (ctx.storeButtons), for materialize. */
    const early: EarlyButtons = new Map();
    const ctx: CommandContext = {
      chain,
      chains: this.chains,
      chainGiven: requestedChain !== undefined && requestedChain.trim() !== "",
      api: this.apis.get(chain.id) ?? this.options.api,
      invocation,
      logger,
      signal: controller.signal,
      now: this.now,
      settings: this.options.settings,
      collections,
      resolver: new NameResolver({
        collections,
        refresher: this.refreshers.get(chain.id),
        wallets: this.recentWallets,
        chat: chatKey(invocation),
        // A command that reads no chain takes a link of any chain (a wallet to /link).
        ...(found.chainless ? {} : { chain }),
        chainAsked: requestedChain !== undefined && requestedChain.trim() !== "",
        chains: this.chains,
      }),
      actions: this.options.actions,
      store: this.options.store,
      commands: this.commands,
      ...this.options.services,
      // After the deadline's answer, the command's late bookkeeping still runs, after it.
      afterReply: (task) => (putOff ? putOff.push(task) : this.afterReply(task)),
      storeButtons: (buttons) =>
        this.materializer.storeEarly(
          buttons,
          invocation,
          (button) => onChainAction(button.action, chain),
          early,
        ),
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
      reply: await this.materializer.drawChart(this.onChain(found, chain, answer, early), logger),
    }));
    this.inFlight.add(work);
    // A handler that fails after its deadline has nobody to tell: never an unhandled rejection.
    work.catch(() => {}).finally(() => this.inFlight.delete(work));
    try {
      const answer = await Promise.race([work, deadline]);
      return finish(
        answer.outcome,
        await this.materializer.materialize(answer.reply, invocation, early),
        answer.code,
      );
    } catch (error) {
      if (
        error instanceof DeadlineError ||
        (error instanceof ApiError && controller.signal.aborted)
      ) {
        return finish(
          "deadline",
          userErrorReply(
            `That took longer than ${Math.round(this.options.deadlineMs / 1000)} s, so I stopped. Try again, or ask for less.`,
          ),
        );
      }
      const userError = asUserError(error);
      if (userError) return refuse(userError);
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

  /**
   * The bot was used in the chat (a command or a button), so the chat works again: the pause it
   * got when it refused the bot is lifted, and with it every feature's work for the chat (alerts,
   * digests, watches; a chat that still refuses pauses again at its next send). After the
   * command ran, so /subscriptions, /watch list and /digest list show the pause; not awaited by
   * the answer, only by stop(). After the answer (afterReply): SQLite's reads are synchronous, and
   * the answer goes out before them.
   */
  private chatWorks(invocation: Invocation, logger: Logger): void {
    const { platform, chat } = invocation;
    const { chatPauses } = this.options.store;
    if (!chatPauses) return;
    const resuming = Promise.resolve()
      .then(() => chatPauses.resume(platform, chat.id))
      .then(
        (resumed) => {
          if (resumed)
            logger.info(
              "the bot is used in the chat again: its alerts, digests and watches resume",
            );
        },
        (error: unknown) => logger.warn({ err: error }, "could not resume the paused chat"),
      );
    this.inFlight.add(resuming);
    this.resuming.add(resuming);
    resuming.finally(() => {
      this.inFlight.delete(resuming);
      this.resuming.delete(resuming);
    });
  }

  /**
   * The answer as it goes out on a chain: its buttons remember the chain (a page, a report and a
   * "which one?" pick read the same chain later, whatever the chat's default is by then), and
   * with several chains served, a command's answer names its chain in the footer.
   */
  private onChain(
    command: AnyCommand,
    chain: Chain,
    answer: Answer,
    /** Stored ahead with their chain already: kept as they are, for materialize to find. */
    early: EarlyButtons,
  ): Reply {
    const { reply } = answer;
    const buttons = reply.buttons?.map(
      (button): ButtonSpec =>
        early.has(button) ? button : { ...button, action: onChainAction(button.action, chain) },
    );
    const named =
      this.chains.length > 1 &&
      !command.chainless &&
      answer.outcome === "ok" &&
      reply.tone !== "warning" &&
      reply.tone !== "error";
    return {
      ...reply,
      ...(buttons ? { buttons } : {}),
      ...(named ? { footer: reply.footer ? `${reply.footer} · ${chain.name}` : chain.name } : {}),
    };
  }

  /**
   * Draws the reply's chart if it still has one and stores its buttons' actions (see
   * ReplyMaterializer): what the renderers get.
   */
  materialize(
    reply: Reply,
    target: Pick<Invocation, "platform" | "chat"> & {
      user?: Pick<Invocation["user"], "id" | "privateChatId">;
    },
  ): Promise<RenderableReply> {
    return this.materializer.materialize(reply, target);
  }
}

/** A button's action as stored: it remembers the chain the answer was read from. */
function onChainAction(action: ButtonAction, chain: Chain): ButtonAction {
  return { ...action, payload: { [CHAIN_OPTION]: chain.id, ...action.payload } };
}

/** Commands that report spam are refused on a chain without spam detection. */
function assertSpam(command: AnyCommand, chain: Chain): void {
  if (command.requiresSpam && !chain.spam)
    throw new UserError("spam_unavailable", spamUnavailable(chain));
}
