import type { Platform } from "../core/command.ts";
import { toCsv } from "../core/csv.ts";
import type { Logger } from "../log.ts";
import type { WalletStore } from "../store/types.ts";
import { boundedCall, CallCutError } from "./calls.ts";
import {
  type Delivery,
  type Gate,
  type GateCriterion,
  type GateEvaluator,
  type GateLogEntry,
  type GateMember,
  type GateMembership,
  type GateStore,
  type GateTarget,
  type GateVerdict,
  MAX_GATES_PER_CHAT,
  type MembershipResult,
  type OwedGrant,
} from "./types.ts";

/** Each member is re-checked about this often: behaviors change daily, holdings and spend spread. */
export const RECHECK_EVERY_MS = 24 * 3_600_000;
/** A Telegram join request waits this long for a proof, then is declined. */
export const JOIN_REQUEST_WAIT_MS = 10 * 60_000;
/** A member in grace is looked at again this often (and at the grace's end), to give it back soon. */
const GRACE_RECHECK_MS = 3_600_000;
/** After an unknown verdict or a transient platform error, the member is tried again this soon. */
const RETRY_AFTER_MS = 15 * 60_000;
/** Due members looked at past the minute's budget, to count how many are deferred. */
const DEFERRED_PEEK = 500;
/** A paused gate's platform is asked again at most this often whether the bot may enforce it now. */
const PAUSED_RECHECK_MS = 10 * 60_000;
/** A grant owed is tried again after 1, 2, 4… minutes, at most this far apart. */
const OWED_RETRY_MAX_MS = 15 * 60_000;
/** A grant owed is given up (and logged) this long after its first failure. */
export const OWED_FOR_MS = 24 * 3_600_000;
/** Grants owed tried again in one round at most. */
const OWED_PER_ROUND = 100;
/** The bound of one call by default: the bot's command deadline (COMMAND_DEADLINE_MS). */
const DEFAULT_CALL_TIMEOUT_MS = 20_000;

/** The log's words for a warning that did not reach the person (issue 34). */
export const WARNING_CLOSED = "warning could not be delivered: direct messages closed";
const WARNING_FAILED = "warning could not be delivered: the platform did not answer";

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
  /** Re-checks: cached answers no older than the data's freshness will do. */
  evaluator: GateEvaluator;
  /**
   * Proofs, unlinks and join requests: the person expects what they hold now, so the reads skip
   * the cache (default `evaluator`).
   */
  freshEvaluator?: GateEvaluator;
  /** Each platform's GateMembership; adapters' are added with register() once they exist. */
  memberships?: Iterable<GateMembership>;
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

/** Why a member was looked at: a proof or an unlink acts at once; the job re-checks. */
type Cause = "proof" | "recheck" | "request";

/** What became of a grant: done, owed (a transient error: the job tries again), or not given. */
type Granted = "granted" | "owed" | "no";

const targetName = (target: GateTarget) =>
  target.platform === "discord" ? `the ${target.roleName} role` : target.title;

const whys = (verdict: GateVerdict, outcome: "pass" | "fail") =>
  verdict.results
    .filter((result) => outcome === "pass" || result.outcome !== "pass")
    .map((result) => result.why)
    .join("; ") || (outcome === "pass" ? "passes" : "does not pass");

const NO_WALLET: GateVerdict = { outcome: "fail", results: [] };

/**
 * Gates (src/gates/types.ts): adds and lists them, and decides who gets or keeps a role or entry
 * to a group, at a proof, an unlink, a join request and the re-check job's rounds
 * (src/gates/recheck.ts). An unknown verdict (an upstream error) never changes anything; a member
 * who stops passing keeps access for GATE_GRACE_H and is told once, privately, how to fix it.
 */
export class GateService {
  readonly counters: GateCounters = { passes: 0, grants: 0, removals: 0, deferred: 0, failures: 0 };
  private readonly memberships = new Map<Platform, GateMembership>();
  private readonly now: () => number;
  /** One decision at a time per gate and person in this process (a proof racing a re-check). */
  private readonly busy = new Map<string, Promise<unknown>>();
  /** When each paused gate's platform was last asked whether it may go on. */
  private readonly pausedAsked = new Map<number, number>();
  /** Background evaluations started by add(); tests and stop() may wait for them. */
  private readonly background = new Set<Promise<unknown>>();

  constructor(private readonly deps: GateServiceDeps) {
    this.now = deps.now ?? Date.now;
    for (const membership of deps.memberships ?? []) this.register(membership);
  }

  /** A platform's GateMembership (each adapter that enforces gates registers its own). */
  register(membership: GateMembership): void {
    this.memberships.set(membership.platform, membership);
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
  test(criteria: readonly GateCriterion[] | Gate, wallets: string[]): Promise<GateVerdict> {
    const list = "criteria" in criteria ? criteria.criteria : criteria;
    return this.deps.evaluator.evaluate(list, wallets);
  }

  /** The n-th gate's log as CSV (newest first); empty string when there is no such gate. */
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
   * A wallet (or every one) was forgotten: the person's memberships are decided again at once.
   * Never throws (a failure is logged): the callers need not wait for it.
   */
  /**
   * Another account of the platform proved one of this person's wallets (it is theirs now): the
   * person is told privately, bounded like every call of a gate and waited for by stop(), then
   * their gates are decided again, as after a sale (warning, grace, removal).
   */
  onWalletMoved(platform: Platform, userId: string, text: string): Promise<void> {
    const membership = this.memberships.get(platform);
    return this.inBackground(
      (async () => {
        if (membership) await this.tell(membership, userId, text);
        await this.decideFor(platform, userId, new Map());
      })(),
      "could not tell a person their wallet moved, or decide their gates again",
    );
  }

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
    let guildId = context.guildId;
    if (platform === "discord" && guildId === undefined && context.chatId !== undefined)
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
   */
  async onJoinRequest(
    platform: Platform,
    chatId: string,
    userId: string,
    userChatId?: string,
    inviteLink?: string,
  ): Promise<void> {
    const gates = await this.deps.gates.forChat(platform, chatId);
    if (gates.length === 0) return;
    const gate =
      inviteLink === undefined
        ? undefined
        : gates.find(
            (candidate) =>
              candidate.target.platform === "telegram" &&
              candidate.target.inviteLink === inviteLink,
          );
    if (!gate || gate.pausedAt !== undefined) {
      this.deps.logger.info(
        {
          chat: chatId,
          link: inviteLink === undefined ? "none" : gate ? "paused gate" : "not a gate's",
        },
        "a join request not through an active gate's link: left to the group's admins",
      );
      return;
    }
    const membership = this.memberships.get(platform);
    if (!membership) return;
    const now = this.now();
    const wallets = await this.provedWallets(platform, userId);
    const verdict = await this.verdict(gate, wallets, "request");
    let granted: Granted = "no";
    if (verdict.outcome === "pass") {
      this.counters.passes++;
      granted = await this.lock(gate.id, userId, () =>
        this.grant(gate, membership, userId, whys(verdict, "pass"), "approved", now),
      );
      if (granted === "granted") return;
    }
    await this.deps.gates.putMember({
      gateId: gate.id,
      userId,
      status: "pending",
      since: now,
      decideBy: now + JOIN_REQUEST_WAIT_MS,
      lastCheckedAt: now,
      ...(userChatId === undefined ? {} : { userChatId }),
    });
    // Passed, and the approval is owed: the job approves it; nothing to ask of the person.
    if (granted === "owed") return;
    const chain = gate.criteria[0]?.chain;
    const link = (chain === undefined ? undefined : membership.verifyLink?.(chain)) || undefined;
    await this.tell(
      membership,
      userId,
      `To join ${gate.target.platform === "telegram" ? gate.target.title : "the group"}, prove a wallet that passes its gate within 10 minutes: ${link ?? "send /verify to me"}. Signing is free and moves nothing.`,
      userChatId,
    );
  }

  /**
   * The re-check job's share: declines join requests past their deadline, asks paused gates'
   * platforms again, then re-checks up to `budget` due members (oldest check first); the due
   * members left over (up to 500) are counted as deferred. Returns how many were checked.
   */
  async recheckDue(budget: number, signal?: AbortSignal): Promise<number> {
    const now = this.now();
    await this.declineExpired(now, signal);
    if (signal?.aborted) return 0;
    await this.retryPaused(now, signal);
    if (signal?.aborted) return 0;
    await this.retryOwed(now, signal);
    if (signal?.aborted) return 0;
    // This minute's re-checks are spent: the due members were counted deferred when it ran out.
    if (budget <= 0) return 0;
    const due = await this.deps.gates.due(now - RECHECK_EVERY_MS, budget + DEFERRED_PEEK);
    const gates = new Map<number, Gate | undefined>();
    let checked = 0;
    for (const member of due) {
      if (signal?.aborted) break;
      if (!gates.has(member.gateId))
        gates.set(member.gateId, await this.deps.gates.get(member.gateId));
      const gate = gates.get(member.gateId);
      if (!gate) {
        await this.deps.gates.removeMember(member.gateId, member.userId);
        continue;
      }
      // A paused gate's members, and those of a platform this process does not serve, wait at
      // the back of the queue: nothing is decided for them, and they do not hold up the others.
      if (gate.pausedAt !== undefined || !this.memberships.has(gate.platform)) {
        await this.deps.gates.putMember({ ...member, lastCheckedAt: now });
        continue;
      }
      // Pending requests are decided by a proof or their deadline, not by the daily re-check.
      if (member.status === "pending") continue;
      if (checked >= budget) {
        this.counters.deferred++;
        continue;
      }
      checked++;
      await this.lock(gate.id, member.userId, () =>
        this.decide(gate, member.userId, "recheck", signal),
      );
    }
    return checked;
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

  private get callTimeoutMs(): number {
    return this.deps.settings.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS;
  }

  /**
   * A platform call, bounded (src/gates/calls.ts): one cut short is a transient failure, tried
   * again like a 5xx.
   */
  private async platformCall(
    what: string,
    signal: AbortSignal | undefined,
    call: (signal: AbortSignal) => Promise<MembershipResult>,
  ): Promise<MembershipResult> {
    try {
      return await boundedCall(what, this.callTimeoutMs, signal, call);
    } catch (error) {
      return {
        ok: false,
        kind: "transient",
        reason: error instanceof CallCutError ? error.message : String(error),
      };
    }
  }

  /** A private message, bounded; one cut short was not delivered. */
  private async tell(
    membership: GateMembership,
    userId: string,
    text: string,
    userChatId?: string,
    signal?: AbortSignal,
  ): Promise<Delivery> {
    try {
      return await boundedCall("the message", this.callTimeoutMs, signal, (bound) =>
        membership.tell(userId, text, userChatId, bound),
      );
    } catch {
      return false;
    }
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
      await this.lock(gate.id, userId, () => this.decide(gate, userId, "proof"));
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
    for (const gate of gates.values()) {
      if (gate.pausedAt !== undefined) continue;
      await this.lock(gate.id, userId, () => this.decide(gate, userId, "proof"));
    }
  }

  private async lock<T>(gateId: number, userId: string, work: () => Promise<T>): Promise<T> {
    const key = `${gateId}:${userId}`;
    const before = this.busy.get(key) ?? Promise.resolve();
    const mine = before.catch(() => undefined).then(work);
    this.busy.set(key, mine);
    try {
      return await mine;
    } finally {
      if (this.busy.get(key) === mine) this.busy.delete(key);
    }
  }

  private async provedWallets(platform: Platform, userId: string): Promise<string[]> {
    const wallets = await this.deps.wallets.list(platform, userId);
    return wallets.filter((wallet) => wallet.provedAt !== undefined).map((w) => w.address);
  }

  /**
   * No proved wallet fails without asking the data service. Bounded: an evaluation cut short (its
   * time, a stop, the lease) is unknown, and changes nothing.
   */
  private async verdict(
    gate: Gate,
    wallets: readonly string[],
    cause: Cause,
    signal?: AbortSignal,
  ): Promise<GateVerdict> {
    if (wallets.length === 0) return NO_WALLET;
    const evaluator =
      cause === "recheck" ? this.deps.evaluator : (this.deps.freshEvaluator ?? this.deps.evaluator);
    try {
      return await boundedCall("the data service", this.callTimeoutMs, signal, (bound) =>
        evaluator.evaluate(gate.criteria, wallets, bound),
      );
    } catch (error) {
      const why = `unknown: ${error instanceof CallCutError ? error.message : "the check failed"}`;
      return {
        outcome: "unknown",
        results: gate.criteria.map((criterion) => ({ criterion, outcome: "unknown", why })),
      };
    }
  }

  /** One gate, one person: the verdict and what follows from it for their standing. */
  private async decide(
    gate: Gate,
    userId: string,
    cause: Cause,
    signal?: AbortSignal,
  ): Promise<void> {
    const membership = this.memberships.get(gate.platform);
    // A platform this process does not serve: its members wait for an instance that does.
    if (!membership) return;
    const { gates, logger } = this.deps;
    const member = await gates.member(gate.id, userId);
    const wallets = await this.provedWallets(gate.platform, userId);
    const verdict = await this.verdict(gate, wallets, cause, signal);
    const now = this.now();
    if (verdict.outcome === "unknown") {
      this.counters.failures++;
      logger.info(
        { gate: gate.id, why: whys(verdict, "fail") },
        "a gate's verdict is unknown (upstream error): nothing changes",
      );
      if (member)
        await gates.putMember({ ...member, lastCheckedAt: this.dueIn(now, RETRY_AFTER_MS) });
      return;
    }
    if (verdict.outcome === "pass") {
      this.counters.passes++;
      if (!member || member.status === "pending") {
        const action = member ? "approved" : "granted";
        const reason = whys(verdict, "pass");
        const granted = await this.grant(gate, membership, userId, reason, action, now, signal);
        if (granted === "granted" && member?.status === "pending")
          await this.settleRequests(gate, userId, now);
        return;
      }
      if (member.status === "grace") {
        await gates.putMember({
          gateId: gate.id,
          userId,
          status: "granted",
          since: member.since,
          lastCheckedAt: now,
        });
        await this.log(gate, userId, "kept", whys(verdict, "pass"), now);
        return;
      }
      await gates.putMember({ ...member, lastCheckedAt: now });
      return;
    }
    // Fails.
    if (!member) return;
    if (member.status === "pending") {
      await gates.putMember({ ...member, lastCheckedAt: now });
      return;
    }
    const reason = wallets.length === 0 ? "no proved wallet" : whys(verdict, "fail");
    if (member.status === "granted") {
      const graceUntil = now + this.graceMs;
      if (graceUntil > now) {
        const told = await this.tell(
          membership,
          userId,
          `You no longer pass the gate for ${targetName(gate.target)}: ${reason}. You keep it until ${new Date(graceUntil).toISOString().slice(0, 16).replace("T", " ")} UTC. To keep it, prove a wallet that passes with /verify.`,
          undefined,
          signal,
        );
        await gates.putMember({
          ...member,
          status: "grace",
          failingSince: now,
          graceUntil,
          ...(told === true ? { toldAt: now } : {}),
          lastCheckedAt: this.dueIn(now, Math.min(GRACE_RECHECK_MS, this.graceMs)),
        });
        await this.log(gate, userId, "grace", reason, now);
        // Removed at the grace's end all the same: the managers see who was not warned, and why.
        if (told !== true)
          await this.log(
            gate,
            userId,
            "failed",
            told === "closed" ? WARNING_CLOSED : WARNING_FAILED,
            now,
          );
        return;
      }
    } else if ((member.graceUntil ?? 0) > now) {
      await gates.putMember({
        ...member,
        lastCheckedAt: this.dueIn(
          now,
          Math.min(GRACE_RECHECK_MS, (member.graceUntil ?? now) - now),
        ),
      });
      return;
    }
    const said =
      member.status === "grace" && member.toldAt === undefined
        ? `${reason}; not warned: direct messages closed or unreachable`
        : reason;
    await this.revoke(gate, membership, member, said, cause, now, signal);
  }

  /**
   * `lastCheckedAt` as the due query reads it: a member stamped so comes due `inMs` from now
   * rather than a day from now (grace, a retry after an error).
   */
  private dueIn(now: number, inMs: number): number {
    return now + inMs - RECHECK_EVERY_MS;
  }

  /**
   * Gives the role (approves the request). A transient failure (a 5xx, a 429, no answer) is kept
   * as a grant owed, which the re-check job tries again: the person has no member row yet, so
   * nothing else would (issue 34).
   */
  private async grant(
    gate: Gate,
    membership: GateMembership,
    userId: string,
    reason: string,
    action: "granted" | "approved",
    now: number,
    signal?: AbortSignal,
  ): Promise<Granted> {
    const result = await this.platformCall("the platform", signal, (bound) =>
      membership.grant(gate.target, userId, bound),
    );
    if (!result.ok) {
      if (result.kind === "transient") {
        await this.owe(gate, userId, action, reason, result.reason, now);
        await this.platformRefused(gate, userId, result, now);
        return "owed";
      }
      await this.deps.gates.dropOwed(gate.id, userId);
      await this.platformRefused(gate, userId, result, now);
      return "no";
    }
    this.counters.grants++;
    await this.deps.gates.putMember({
      gateId: gate.id,
      userId,
      status: "granted",
      since: now,
      lastCheckedAt: now,
    });
    await this.deps.gates.dropOwed(gate.id, userId);
    await this.log(gate, userId, action, reason, now);
    return "granted";
  }

  /**
   * Keeps (or updates) a grant owed: tried again after 1, 2, 4… minutes (at most 15 apart); a
   * day after the first failure it is given up, and the log says so.
   */
  private async owe(
    gate: Gate,
    userId: string,
    action: "granted" | "approved",
    reason: string,
    error: string,
    now: number,
  ): Promise<void> {
    const before = await this.deps.gates.owedGrant(gate.id, userId);
    const since = before?.since ?? now;
    if (now - since >= OWED_FOR_MS) {
      await this.deps.gates.dropOwed(gate.id, userId);
      const what =
        action === "approved" ? "the join request was not approved" : "the role was not given";
      await this.log(
        gate,
        userId,
        "failed",
        `${what}: the platform failed for a day (${error}); a new proof tries again`,
        now,
      );
      return;
    }
    const attempts = (before?.attempts ?? 0) + 1;
    const grant: OwedGrant = {
      gateId: gate.id,
      userId,
      action,
      reason,
      since,
      attempts,
      retryAt: now + Math.min(OWED_RETRY_MAX_MS, 60_000 * 2 ** Math.min(attempts - 1, 10)),
      lastError: error,
    };
    await this.deps.gates.oweGrant(grant);
  }

  /** The re-check job tries again the grants owed whose time has come. */
  private async retryOwed(now: number, signal?: AbortSignal): Promise<void> {
    const gates = new Map<number, Gate | undefined>();
    for (const owed of await this.deps.gates.owedDue(now, OWED_PER_ROUND)) {
      if (signal?.aborted) return;
      if (!gates.has(owed.gateId)) gates.set(owed.gateId, await this.deps.gates.get(owed.gateId));
      const gate = gates.get(owed.gateId);
      if (!gate || gate.pausedAt !== undefined) continue;
      const membership = this.memberships.get(gate.platform);
      if (!membership) continue;
      await this.lock(gate.id, owed.userId, async () => {
        const member = await this.deps.gates.member(gate.id, owed.userId);
        // Given since (a new proof went through): nothing is owed.
        if (member && member.status !== "pending") {
          await this.deps.gates.dropOwed(gate.id, owed.userId);
          return;
        }
        const granted = await this.grant(
          gate,
          membership,
          owed.userId,
          owed.reason,
          owed.action,
          now,
          signal,
        );
        if (granted === "granted" && member?.status === "pending")
          await this.settleRequests(gate, owed.userId, now);
      });
    }
  }

  /** Let in through one gate of a Telegram group: the group's other pending requests are done. */
  private async settleRequests(gate: Gate, userId: string, now: number): Promise<void> {
    for (const other of await this.deps.gates.forChat(gate.platform, gate.chatId)) {
      if (other.id === gate.id) continue;
      const member = await this.deps.gates.member(other.id, userId);
      if (member?.status === "pending")
        await this.deps.gates.putMember({
          gateId: other.id,
          userId,
          status: "granted",
          since: now,
          // Checked by the job like any member: it passes this gate, or goes into grace.
          lastCheckedAt: this.dueIn(now, 0),
        });
    }
  }

  private async revoke(
    gate: Gate,
    membership: GateMembership,
    member: GateMember,
    reason: string,
    cause: Cause,
    now: number,
    signal?: AbortSignal,
  ): Promise<void> {
    // A Telegram group another gate still lets the person into: only this gate's record goes.
    const kept = await this.keptByAnother(gate, member.userId);
    if (!kept) {
      const result = await this.platformCall("the platform", signal, (bound) =>
        membership.revoke(gate.target, member.userId, bound),
      );
      if (!result.ok && result.kind !== "gone") {
        await this.platformRefused(gate, member.userId, result, now);
        return;
      }
    }
    await this.deps.gates.removeMember(gate.id, member.userId);
    this.counters.removals++;
    await this.log(gate, member.userId, "removed", reason, now);
    this.deps.logger.info({ gate: gate.id, cause }, "a gate's member was removed");
  }

  private async keptByAnother(gate: Gate, userId: string): Promise<boolean> {
    if (gate.target.platform !== "telegram") return false;
    for (const other of await this.deps.gates.forChat(gate.platform, gate.chatId)) {
      if (other.id === gate.id) continue;
      const member = await this.deps.gates.member(other.id, userId);
      if (member && member.status !== "pending") return true;
    }
    return false;
  }

  /** A grant, revoke or decline that did not go through: pause, forget, or try again later. */
  private async platformRefused(
    gate: Gate,
    userId: string,
    result: Exclude<MembershipResult, { ok: true }>,
    now: number,
  ): Promise<void> {
    const { gates, logger } = this.deps;
    if (result.kind === "refused") {
      await gates.pause(gate.id, result.reason, now);
      gate.pausedAt = now;
      gate.pauseReason = result.reason;
      await this.log(gate, userId, "paused", result.reason, now);
      logger.warn({ gate: gate.id, reason: result.reason }, "a gate paused: the platform refused");
      return;
    }
    if (result.kind === "gone") {
      await gates.removeMember(gate.id, userId);
      return;
    }
    this.counters.failures++;
    const member = await gates.member(gate.id, userId);
    if (member)
      await gates.putMember({ ...member, lastCheckedAt: this.dueIn(now, RETRY_AFTER_MS) });
    logger.info({ gate: gate.id, reason: result.reason }, "a gate's platform call failed; retried");
  }

  /** Join requests past their deadline are declined (once per person and group). */
  private async declineExpired(now: number, signal?: AbortSignal): Promise<void> {
    const declined = new Set<string>();
    // A busy group's requests share a gate: each is read once a round.
    const gates = new Map<number, Gate | undefined>();
    for (const member of await this.deps.gates.expiredRequests(now)) {
      if (signal?.aborted) return;
      // Passed, the approval owed: the job approves it rather than declining it.
      if (await this.deps.gates.owedGrant(member.gateId, member.userId)) continue;
      if (!gates.has(member.gateId))
        gates.set(member.gateId, await this.deps.gates.get(member.gateId));
      const gate = gates.get(member.gateId);
      if (!gate) continue;
      const key = `${gate.chatId}:${member.userId}`;
      const membership = this.memberships.get(gate.platform);
      if (!membership) continue;
      if (!declined.has(key)) {
        declined.add(key);
        const decline = membership.decline?.bind(membership);
        const result = decline
          ? await this.platformCall("the platform", signal, (bound) =>
              decline(gate.target, member.userId, bound),
            )
          : ({ ok: true } as const);
        if (!result.ok && result.kind === "transient") {
          this.counters.failures++;
          continue;
        }
        if (!result.ok && result.kind === "refused") {
          await this.platformRefused(gate, member.userId, result, now);
          continue;
        }
        await this.log(
          gate,
          member.userId,
          "declined",
          "no passing wallet proved in 10 minutes",
          now,
        );
      }
      await this.deps.gates.removeMember(member.gateId, member.userId);
    }
  }

  /** A paused gate goes on once its platform says the bot may enforce it again. */
  private async retryPaused(now: number, signal?: AbortSignal): Promise<void> {
    for (const gate of await this.deps.gates.all()) {
      if (signal?.aborted) return;
      if (gate.pausedAt === undefined) continue;
      if (now - (this.pausedAsked.get(gate.id) ?? gate.pausedAt) < PAUSED_RECHECK_MS) continue;
      this.pausedAsked.set(gate.id, now);
      const membership = this.memberships.get(gate.platform);
      if (!membership) continue;
      const checked = await boundedCall("the platform", this.callTimeoutMs, signal, (bound) =>
        membership.check(gate.target, undefined, bound),
      ).catch((error: unknown) => ({ ok: false as const, reason: String(error) }));
      if (checked.ok) {
        await this.deps.gates.resume(gate.id);
        this.deps.logger.info({ gate: gate.id }, "a paused gate goes on: the platform allows it");
      }
    }
  }

  private async log(
    gate: Gate,
    userId: string,
    action: GateLogEntry["action"],
    reason: string,
    at: number,
  ): Promise<void> {
    await this.deps.gates.log({ gateId: gate.id, userId, at, action, reason });
    this.deps.logger.info({ gate: gate.id, action, reason }, `gate: ${action}`);
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
