import type { ApiClient } from "../api/client.ts";
import { type Chain, parseChains } from "../chains.ts";
import { type ErrorCode, type ErrorContext, UserError } from "../errors.ts";
import type { Logger } from "../log.ts";
import type { ActionStore } from "./actions.ts";
import { Admission } from "./admission.ts";
import { AfterReplies } from "./after-reply.ts";
import { asUserError } from "./api-errors.ts";
import { collectionSuggestions } from "./autocomplete.ts";
import { pressButton } from "./button-press.ts";
import { chainIndexes } from "./chain-indexes.ts";
import { CHAIN_OPTION, chainNamed, servedCommands } from "./chain-option.ts";
import type { ChartDrawer } from "./charts.ts";
import type { CollectionRefresher } from "./collection-refresh.ts";
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
import { DeadlineError, failureOf } from "./execution.ts";
import { type Answer, invokeCommand, userErrorAnswer } from "./invoke.ts";
import type { KnownCollections } from "./known-collections.ts";
import { type EarlyButtons, ReplyMaterializer } from "./materialize.ts";
import { noSuchCommand } from "./no-such-command.ts";
import { answerOnChain, linkedChain, onChainAction } from "./on-chain.ts";
import type { Answered, Outcome, OutcomeEvent } from "./outcome.ts";
import { randomBytesPooled } from "./random.ts";
import type { LimiterFactory } from "./rate-limit.ts";
import { RecentWallets } from "./recent-wallets.ts";
import { buildRegistry } from "./registry.ts";
import { type RenderableReply, type Reply, userErrorReply } from "./reply.ts";
import { NameResolver } from "./resolver.ts";
import { parseTextArgs } from "./text-args.ts";

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
  /** Work after answers (logs, counts, what commands put off) and paused chats' resumes. */
  private readonly after: AfterReplies;
  private accepting = true;

  constructor(private readonly options: RuntimeOptions) {
    this.chains = options.chains?.length ? options.chains : parseChains(undefined, undefined);
    this.onOutcome = options.onOutcome;
    this.registry = buildRegistry(servedCommands(options.commands, this.chains));
    const { apis, indexes, refreshers } = chainIndexes(this.chains, options);
    this.apis = apis;
    this.collectionIndexes = indexes;
    this.refreshers = refreshers;
    const first = this.chains[0]?.id ?? "";
    this.collections = indexes.get(first) as KnownCollections;
    this.refresher = refreshers.get(first) as CollectionRefresher;
    this.now = options.now ?? (() => new Date());
    this.after = new AfterReplies(options.logger, options.store, this.inFlight);
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

  /**
   * The commands people see (/help's list, the Telegram menu, Discord's registration): hidden
   * ones are left out, though `find` still runs them.
   */
  get commands(): AnyCommand[] {
    return [...this.registry.values()].filter((command) => !command.hidden);
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
        ? userErrorAnswer(error.code, error.message)
        : userErrorAnswer("invalid_argument", String(error));
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
      (ctx) => invokeCommand(ctx, command, raw, `/${command.name}`),
      linkedChain(this.chains, command, raw),
    );
  }

  /** A button click: the id is looked up, checked against the chat, and its action run. */
  answerButton(invocation: Invocation, id: string): Promise<Answered> {
    return pressButton(
      {
        actions: this.options.actions,
        chains: this.chains,
        now: this.now,
        find: (name) => this.find(name),
        execute: (...args) => this.execute(...args),
      },
      invocation,
      id,
    );
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
   * Suggestions while typing an option with an autocomplete source (at most 25), from the chain
   * the interaction names so far, else the chat's (as last seen), else the first. With several
   * chains each suggestion names its chain.
   */
  autocomplete(
    name: string,
    option: string,
    text: string,
    where: { chain?: string | undefined; chat?: Pick<Invocation, "platform" | "chat"> } = {},
  ): Promise<{ name: string; value: string }[]> {
    return collectionSuggestions(this, this.options.logger, name, option, text, where);
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
  settled(): Promise<void> {
    return this.after.settled();
  }

  /** "There is no /audiense command. Did you mean /audience?", or a pointer to /help. */
  /** Names into addresses on `chain`, for one invocation (its chat's recent wallets). */
  private resolverFor(
    chain: Chain,
    invocation: Invocation,
    how: { chainless: boolean; asked: boolean },
  ): NameResolver {
    return new NameResolver({
      collections: this.collectionsOf(chain),
      refresher: this.refreshers.get(chain.id),
      wallets: this.recentWallets,
      chat: chatKey(invocation),
      ...(how.chainless ? {} : { chain }),
      chainAsked: how.asked,
      chains: this.chains,
    });
  }

  private unknownCommand(name: string): Answered {
    const names = this.commands.map((command) => command.name);
    return userErrorAnswer("unknown_command", noSuchCommand(name, names));
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
    if (this.after.waiting) this.after.runNow();
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
      this.after.add(() => {
        for (const task of tasks) task();
        logger.info(
          { outcome, ...coded, ...(context ? { context } : {}), ms: Math.round(ms) },
          "invocation answered",
        );
        this.onOutcome?.({ command, kind, outcome, ...coded, ms });
        if (works) this.after.chatWorks(invocation, logger);
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
      // A command that reads no chain takes a link of any chain (a wallet to /link).
      resolver: this.resolverFor(chain, invocation, {
        chainless: found.chainless === true,
        asked: requestedChain !== undefined && requestedChain.trim() !== "",
      }),
      onChain: (id) => {
        const other = this.chains.find((c) => c.id === id);
        if (!other) return undefined;
        const resolver = this.resolverFor(other, invocation, { chainless: false, asked: true });
        return { collections: this.collectionsOf(other), resolver };
      },
      actions: this.options.actions,
      store: this.options.store,
      commands: this.commands,
      ...this.options.services,
      // After the deadline's answer, the command's late bookkeeping still runs, after it.
      afterReply: (task) => (putOff ? putOff.push(task) : this.after.add(task)),
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
      reply: await this.materializer.drawChart(
        answerOnChain(this.chains, found, chain, answer, early),
        logger,
      ),
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
      const failure = failureOf(
        error,
        invocation,
        logger,
        controller.signal,
        this.options.deadlineMs,
      );
      return finish(failure.outcome, failure.reply, failure.code, failure.context);
    } finally {
      clearTimeout(timer);
    }
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
