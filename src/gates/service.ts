import type { Platform } from "../core/command.ts";
import { toCsv } from "../core/csv.ts";
import type { CountedWallets } from "../core/person-wallets.ts";
import type { Logger } from "../log.ts";
import type { WalletStore } from "../store/types.ts";
import { GateActs, type GateKit, type Holdings } from "./acts.ts";
import { decide, provedWallets } from "./decide.ts";
import { describeCriterion } from "./describe.ts";
import { decideJoinRequest, declineExpired } from "./join-requests.ts";
import { recheckMembers, retryOwed, retryPaused } from "./rounds.ts";
import {
  type Gate,
  type GateCriterion,
  type GateEvaluator,
  type GateLogEntry,
  type GateMembership,
  type GateStore,
  type GateTarget,
  type GateTell,
  type GateVerdict,
  MAX_GATES_PER_CHAT,
} from "./types.ts";

export { OWED_FOR_MS, RECHECK_EVERY_MS } from "./acts.ts";
export { JOIN_REQUEST_WAIT_MS } from "./join-requests.ts";
export { WARNING_CLOSED } from "./notices.ts";

/** The bound of one call by default: the bot's command deadline (COMMAND_DEADLINE_MS). */
const DEFAULT_CALL_TIMEOUT_MS = 20_000;

export interface GateServiceSettings {
  /** GATE_GRACE_H: how long a member who stops passing keeps access. */
  graceHours: number;
  /**
   * How long one call may take (a data-service evaluation, a platform's grant, removal or
   * message): the bot's COMMAND_DEADLINE_MS. Default 20 s.
   */
  callTimeoutMs?: number;
}

export interface GateServiceDeps {
  gates: GateStore;
  wallets: Pick<WalletStore, "list">;
  /**
   * The wallets that count for a person, read again at each decision (issue 37: proved wallets on
   * the chains their proofs hold on, and cold wallets delegating to them); absent: every proved
   * wallet, on every chain.
   */
  holdings?: Holdings | undefined;
  /** Re-checks: cached answers no older than the data's freshness will do. */
  evaluator: GateEvaluator;
  /**
   * Proofs, unlinks and join requests: the person expects what they hold now, so the reads skip
   * the cache (default `evaluator`).
   */
  freshEvaluator?: GateEvaluator;
  /**
   * Each platform's GateMembership, or how to read them once they exist (the adapters are built
   * after the service, on the runtime the service is part of): read at the first call that needs
   * one.
   */
  memberships?: Iterable<GateMembership> | (() => Iterable<GateMembership>);
  /** Tells people privately (the gates feature: through the outbound module). Absent: no one. */
  tell?: GateTell;
  logger: Logger;
  settings: GateServiceSettings;
  /** Wall clock, epoch ms. */
  now?: () => number;
}

/** Counts since start, for /healthz and metrics. */
export interface GateCounters {
  /** Verdicts that passed (a proof, a join request, a re-check). */
  passes: number;
  grants: number;
  removals: number;
  /** Re-checks put off to a later minute: GATE_CHECKS_PER_MINUTE was spent. */
  deferred: number;
  /** Unknown verdicts (an upstream error) and platform errors: nothing changed. */
  failures: number;
}

export type GateStats = GateCounters & Awaited<ReturnType<GateStore["counts"]>>;

export type AddGateResult = { ok: true; gate: Gate } | { ok: false; reason: string };

/**
 * Gates (src/gates/types.ts): adds and lists them, and decides who gets or keeps a role or entry
 * to a group, at a proof, an unlink, a join request and the re-check job's rounds
 * (src/gates/recheck.ts). An unknown verdict (an upstream error) never changes anything; a member
 * who stops passing keeps access for GATE_GRACE_H and is told once, privately, how to fix it.
 */
export class GateService {
  readonly counters: GateCounters = { passes: 0, grants: 0, removals: 0, deferred: 0, failures: 0 };
  /** The platforms' memberships by platform, read from the deps at first use. */
  private byPlatform: Map<Platform, GateMembership> | undefined;
  private readonly memberships: GateKit["memberships"] = {
    get: (platform) => this.platforms().get(platform),
    has: (platform) => this.platforms().has(platform),
  };
  private readonly now: () => number;
  /**
   * The acts on one gate and one person (src/gates/acts.ts), one decision at a time per gate and
   * person; the decisions, join requests and re-check rounds go through it.
   */
  private readonly acts: GateActs;
  /** When each paused gate's platform was last asked whether it may go on. */
  private readonly pausedAsked = new Map<number, number>();
  /** Background evaluations started by add(); tests and stop() may wait for them. */
  private readonly background = new Set<Promise<unknown>>();

  constructor(private readonly deps: GateServiceDeps) {
    this.now = deps.now ?? Date.now;
    this.acts = new GateActs({
      gates: deps.gates,
      wallets: deps.wallets,
      holdings: deps.holdings,
      evaluator: deps.evaluator,
      freshEvaluator: deps.freshEvaluator,
      logger: deps.logger,
      memberships: this.memberships,
      tell: deps.tell ?? (async () => false),
      counters: this.counters,
      now: this.now,
      graceMs: () => this.graceMs,
      callTimeoutMs: () => this.deps.settings.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS,
    });
  }

  private platforms(): Map<Platform, GateMembership> {
    if (this.byPlatform === undefined) {
      const given = this.deps.memberships;
      const list = typeof given === "function" ? given() : (given ?? []);
      this.byPlatform = new Map([...list].map((membership) => [membership.platform, membership]));
    }
    return this.byPlatform;
  }

  /** Adds a platform's GateMembership (a test's own platform; the bot's come from the deps). */
  register(membership: GateMembership): void {
    this.platforms().set(membership.platform, membership);
  }

  get graceMs(): number {
    return this.deps.settings.graceHours * 3_600_000;
  }

  async add(input: {
    platform: Platform;
    chatId: string;
    target: GateTarget;
    criteria: GateCriterion[];
    createdBy: string;
  }): Promise<AddGateResult> {
    const existing = await this.deps.gates.forChat(input.platform, input.chatId);
    if (existing.length >= MAX_GATES_PER_CHAT)
      return {
        ok: false,
        reason: `This chat has ${existing.length} gates, the most it may have: remove one with /gate remove first.`,
      };
    const membership = this.memberships.get(input.platform);
    if (!membership) return { ok: false, reason: "Gates are not available on this platform." };
    const checked = await membership.check(input.target, { gateNumber: existing.length + 1 });
    if (!checked.ok) return { ok: false, reason: checked.reason };
    const added = await this.deps.gates.add(
      {
        platform: input.platform,
        chatId: input.chatId,
        target: checked.target,
        criteria: input.criteria,
        createdBy: input.createdBy,
        createdAt: this.now(),
      },
      MAX_GATES_PER_CHAT,
    );
    if (added.kind === "full")
      return {
        ok: false,
        reason: `This chat has ${added.count} gates, the most it may have: remove one with /gate remove first.`,
      };
    void this.inBackground(
      this.evaluateKnown(added.gate, existing),
      "could not evaluate a new gate's known members",
    );
    return { ok: true, gate: added.gate };
  }

  list(platform: Platform, chatId: string): Promise<Gate[]> {
    return this.deps.gates.forChat(platform, chatId);
  }

  /**
   * Removes the chat's n-th gate (1-based, as /gate list numbers them); the gate it was. `allow`
   * sees that very gate first and may throw to keep it (who may remove it: mayGive).
   */
  async remove(
    platform: Platform,
    chatId: string,
    n: number,
    allow?: (gate: Gate) => Promise<void>,
  ): Promise<Gate | undefined> {
    const gate = (await this.deps.gates.forChat(platform, chatId))[n - 1];
    if (!gate) return undefined;
    await allow?.(gate);
    return (await this.deps.gates.remove(platform, chatId, gate.id)) ? gate : undefined;
  }

  /**
   * Whether a person may add or remove a gate giving `target`, by the platform's rule for people
   * (GateMembership.mayGive); a platform without one leaves it to the chat's managers.
   */
  async mayGive(
    target: GateTarget,
    userId: string,
    purpose: "add" | "remove",
  ): Promise<{ ok: true } | { ok: false; reason: string }> {
    const membership = this.memberships.get(target.platform);
    if (!membership) return { ok: false, reason: "Gates are not available on this platform." };
    return membership.mayGive ? membership.mayGive(target, userId, purpose) : { ok: true };
  }

  /** What the criteria (or a gate's) say of these wallets, criterion by criterion. */
  test(
    criteria: readonly GateCriterion[] | Gate,
    wallets: string[] | CountedWallets,
  ): Promise<GateVerdict> {
    const list = "criteria" in criteria ? criteria.criteria : criteria;
    return this.deps.evaluator.evaluate(list, wallets, undefined, { explain: true });
  }

  /** The n-th gate's log as CSV (newest first); empty string when there is no such gate. */
  /**
   * The chat's gates in /gate list's order, each with the people it admits now (granted, or in
   * their grace period): what insights count and show managers.
   */
  async admitted(
    platform: Platform,
    chatId: string,
  ): Promise<{ gate: Gate; number: number; userIds: string[] }[]> {
    const gates = await this.deps.gates.forChat(platform, chatId);
    return Promise.all(
      gates.map(async (gate, i) => ({
        gate,
        number: i + 1,
        userIds: (await this.deps.gates.members(gate.id))
          .filter((member) => member.status !== "pending")
          .map((member) => member.userId),
      })),
    );
  }

  /** A gate's criteria in words, as /gate list gives them. */
  describe(gate: Gate): string {
    return gate.criteria.map(describeCriterion).join("; ");
  }

  /** A gate's latest log lines, newest first (the page's view of /gate log). */
  log(gate: Gate, limit: number): Promise<GateLogEntry[]> {
    return this.deps.gates.logOf(gate.id, limit);
  }

  async logCsv(platform: Platform, chatId: string, n: number, limit = 1_000): Promise<string> {
    const gate = (await this.deps.gates.forChat(platform, chatId))[n - 1];
    if (!gate) return "";
    const rows = await this.deps.gates.logOf(gate.id, limit);
    return toCsv<GateLogEntry>(
      [
        { header: "time", value: (row) => new Date(row.at).toISOString() },
        { header: "user id", value: (row) => row.userId, numeric: true },
        { header: "action", value: (row) => row.action },
        { header: "reason", value: (row) => row.reason },
      ],
      rows,
    );
  }

  /**
   * A wallet was proved: the person's gates are decided at once. Discord: the gates of the server
   * where they ran /verify (`guildId`, or the server of the channel `chatId`) and those they are
   * a member of; Telegram: their join requests and memberships. Never throws (a failure is
   * logged): the verify service need not wait for it.
   */
  onProved(
    platform: Platform,
    userId: string,
    context: { guildId?: string; chatId?: string } = {},
  ): Promise<void> {
    return this.inBackground(
      this.decideProved(platform, userId, context),
      "could not decide a person's gates after a proof",
    );
  }
  /**
   * Another account of the platform proved one of this person's wallets (it is theirs now): the
   * person is told privately, bounded like every call of a gate and waited for by stop(), then
   * their gates are decided again, as after a sale (warning, grace, removal).
   */
  onWalletMoved(platform: Platform, userId: string, text: string): Promise<void> {
    return this.inBackground(
      (async () => {
        await this.acts.tell({ platform, userId, text });
        await this.decideFor(platform, userId, new Map());
      })(),
      "could not tell a person their wallet moved, or decide their gates again",
    );
  }

  /**
   * A wallet (or every one) was forgotten: the person's memberships are decided again at once.
   * Never throws (a failure is logged): the callers need not wait for it.
   */
  onUnlinked(platform: Platform, userId: string): Promise<void> {
    return this.inBackground(
      this.decideFor(platform, userId, new Map()),
      "could not decide a person's gates after an unlink",
    );
  }

  private async decideProved(
    platform: Platform,
    userId: string,
    context: { guildId?: string; chatId?: string },
  ): Promise<void> {
    const gates = new Map<number, Gate>();
    // The community whose gates the proof meets: the one named, else the platform's answer for
    // the chat /verify was asked in (a Discord channel's server, the console's own chat).
    let guildId = context.guildId;
    if (guildId === undefined && context.chatId !== undefined)
      guildId = await this.memberships
        .get(platform)
        ?.guildOf?.(context.chatId)
        .catch(() => undefined);
    if (guildId !== undefined)
      for (const gate of await this.deps.gates.forChat(platform, guildId)) gates.set(gate.id, gate);
    await this.decideFor(platform, userId, gates);
  }

  /**
   * A Telegram join request for a gated group: decided by the gate whose invite link it came
   * through (each gate makes its own link). Approved when the person passes that gate; else kept
   * pending for 10 minutes, the person told (through the request's private chat) how to prove a
   * wallet, and approved if they pass before then (onProved), declined after. A request through a
   * link no gate made (the admins' own), or through none (a public group's join button), is the
   * group's admins' to decide: the bot leaves it alone, as it does for a paused gate's link.
   * (src/gates/join-requests.ts.)
   */
  onJoinRequest(
    platform: Platform,
    chatId: string,
    userId: string,
    userChatId?: string,
    inviteLink?: string,
  ): Promise<void> {
    return decideJoinRequest(this.acts, { platform, chatId, userId, userChatId, inviteLink });
  }

  /**
   * The re-check job's share: declines join requests past their deadline, asks paused gates'
   * platforms again, then re-checks up to `budget` due members (oldest check first); the due
   * members left over (up to 500) are counted as deferred. Returns how many were checked.
   * (The steps: src/gates/join-requests.ts and rounds.ts.)
   */
  async recheckDue(budget: number, signal?: AbortSignal): Promise<number> {
    const now = this.now();
    await declineExpired(this.acts, now, signal);
    if (signal?.aborted) return 0;
    await retryPaused(this.acts, this.pausedAsked, now, signal);
    if (signal?.aborted) return 0;
    await retryOwed(this.acts, now, signal);
    if (signal?.aborted) return 0;
    // This minute's re-checks are spent: the due members were counted deferred when it ran out.
    if (budget <= 0) return 0;
    return recheckMembers(this.acts, budget, now, signal);
  }

  /** Waits for the evaluations add() started in the background. */
  async settled(): Promise<void> {
    while (this.background.size > 0) await Promise.allSettled([...this.background]);
  }

  async stats(): Promise<GateStats> {
    return { ...(await this.deps.gates.counts()), ...this.counters };
  }

  /** The gate's members in grace who were not warned (their messages closed): /gate list. */
  unwarned(gate: Gate): Promise<number> {
    return this.deps.gates.unwarned(gate.id);
  }

  /** Tracked (settled() waits for it) and never rejecting: a failure is logged with `what`. */
  private inBackground(work: Promise<unknown>, what: string): Promise<void> {
    const running: Promise<void> = work
      .then(
        () => undefined,
        (error: unknown) => {
          this.counters.failures++;
          this.deps.logger.warn({ err: error }, what);
        },
      )
      .finally(() => this.background.delete(running));
    this.background.add(running);
    return running;
  }

  /** The people a chat's other gates know (members, join requests), checked for a new gate. */
  private async evaluateKnown(gate: Gate, others: readonly Gate[]): Promise<void> {
    const people = new Set<string>();
    for (const other of others)
      for (const member of await this.deps.gates.members(other.id)) people.add(member.userId);
    for (const userId of people)
      await this.acts.lock(gate.id, userId, () => decide(this.acts, gate, userId, "proof"));
  }

  /** Decides every gate of `extra` and every gate the person is a member of. */
  private async decideFor(
    platform: Platform,
    userId: string,
    extra: Map<number, Gate>,
  ): Promise<void> {
    const gates = new Map(extra);
    for (const member of await this.deps.gates.memberships(platform, userId))
      if (!gates.has(member.gateId)) {
        const gate = await this.deps.gates.get(member.gateId);
        if (gate) gates.set(gate.id, gate);
      }
    // The person's wallets (and delegations) read once for all their gates, when first needed.
    let held: Promise<CountedWallets> | undefined;
    const read = () => {
      held ??= provedWallets(this.acts.kit, platform, userId);
      return held;
    };
    for (const gate of gates.values()) {
      if (gate.pausedAt !== undefined) continue;
      await this.acts.lock(gate.id, userId, () =>
        decide(this.acts, gate, userId, "proof", undefined, read),
      );
    }
  }
}

declare module "../core/command.ts" {
  interface CommandServices {
    /**
     * Gates (/gate): the commands add and list them, /unlink has the person's gates decided
     * again. Absent in a bot without the gates feature.
     */
    gates?: GateService;
  }
}
