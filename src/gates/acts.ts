import { boundedCall, CallCutError } from "../core/bounded-call.ts";
import type { CountedWallets } from "../core/person-wallets.ts";
import type { Platform } from "../core/platform.ts";
import type { Logger } from "../log.ts";
import type { WalletStore } from "../store/types.ts";
import { owedGivenUp } from "./notices.ts";
import type {
  Delivery,
  Gate,
  GateEvaluator,
  GateLogEntry,
  GateMember,
  GateMembership,
  GateStore,
  GateTell,
  MembershipResult,
  OwedGrant,
} from "./types.ts";

/** Each member is re-checked about this often: behaviors change daily, holdings and spend spread. */
export const RECHECK_EVERY_MS = 24 * 3_600_000;
/** After an unknown verdict or a transient platform error, the member is tried again this soon. */
export const RETRY_AFTER_MS = 15 * 60_000;
/** A grant owed is tried again after 1, 2, 4… minutes, at most this far apart. */
const OWED_RETRY_MAX_MS = 15 * 60_000;
/** A grant owed is given up (and logged) this long after its first failure. */
export const OWED_FOR_MS = 24 * 3_600_000;

/**
 * The wallets that count for a person, delegations read again (GateServiceDeps.holdings);
 * undefined: no verification service here (then every proved wallet counts everywhere).
 */
export type Holdings = (
  platform: Platform,
  userId: string,
  signal?: AbortSignal,
) => Promise<CountedWallets> | undefined;

/** Why a member was looked at: a proof or an unlink acts at once; the job re-checks. */
export type Cause = "proof" | "recheck" | "request";

/** What became of a grant: done, owed (a transient error: the job tries again), or not given. */
export type Granted = "granted" | "owed" | "no";

/**
 * What the gate service's parts share (GateService makes it from its GateServiceDeps): its store,
 * the people's wallets, the evaluators, its platforms, counters and clock.
 */
export interface GateKit {
  readonly gates: GateStore;
  readonly wallets: Pick<WalletStore, "list">;
  /** GateServiceDeps.holdings. */
  readonly holdings?: Holdings | undefined;
  /** Re-checks: cached answers no older than the data's freshness will do. */
  readonly evaluator: GateEvaluator;
  /** Proofs, unlinks and join requests: reads that skip the cache (GateServiceDeps). */
  readonly freshEvaluator?: GateEvaluator | undefined;
  readonly logger: Logger;
  /** Tells a person privately (GateServiceDeps.tell). */
  readonly tell: GateTell;
  /** Each platform's GateMembership (GateService.register adds them). */
  readonly memberships: Pick<ReadonlyMap<Platform, GateMembership>, "get" | "has">;
  /** GateService.counters (GateCounters), counted by each part. */
  readonly counters: Record<"passes" | "grants" | "removals" | "deferred" | "failures", number>;
  /** Wall clock, epoch ms. */
  readonly now: () => number;
  /** GATE_GRACE_H, in ms. */
  graceMs(): number;
  /** How long one call may take (GateServiceSettings.callTimeoutMs, 20 s by default). */
  callTimeoutMs(): number;
}

/**
 * What the gate service does for one gate and one person, on the platform and in its store: gives
 * the role or approves the request (or owes it), takes it back, tells the person privately, takes
 * a platform's refusal, logs it; one decision at a time per gate and person. The decisions
 * (src/gates/decide.ts), join requests (join-requests.ts) and the re-check rounds (rounds.ts) act
 * through it.
 */
export class GateActs {
  /** One decision at a time per gate and person in this process (a proof racing a re-check). */
  private readonly busy = new Map<string, Promise<unknown>>();

  constructor(readonly kit: GateKit) {}

  async lock<T>(gateId: number, userId: string, work: () => Promise<T>): Promise<T> {
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

  /**
   * A platform call, bounded (src/core/bounded-call.ts): one cut short is a transient failure, tried
   * again like a 5xx.
   */
  async platformCall(
    what: string,
    signal: AbortSignal | undefined,
    call: (signal: AbortSignal) => Promise<MembershipResult>,
  ): Promise<MembershipResult> {
    try {
      return await boundedCall(what, this.kit.callTimeoutMs(), signal, call);
    } catch (error) {
      return {
        ok: false,
        kind: "transient",
        reason: error instanceof CallCutError ? error.message : String(error),
      };
    }
  }

  /** A private message (GateTell: bounded, sent through the outbound module). */
  async tell(note: Parameters<GateTell>[0]): Promise<Delivery> {
    try {
      return await this.kit.tell(note);
    } catch (error) {
      this.kit.logger.warn(
        { err: error, gate: note.platform },
        "could not tell a person privately",
      );
      return false;
    }
  }

  /**
   * `lastCheckedAt` as the due query reads it: a member stamped so comes due `inMs` from now
   * rather than a day from now (grace, a retry after an error).
   */
  dueIn(now: number, inMs: number): number {
    return now + inMs - RECHECK_EVERY_MS;
  }

  /**
   * Gives the role (approves the request). A transient failure (a 5xx, a 429, no answer) is kept
   * as a grant owed, which the re-check job tries again: the person has no member row yet, so
   * nothing else would (issue 34).
   */
  async grant(
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
      await this.kit.gates.dropOwed(gate.id, userId);
      await this.platformRefused(gate, userId, result, now);
      return "no";
    }
    this.kit.counters.grants++;
    await this.kit.gates.putMember({
      gateId: gate.id,
      userId,
      status: "granted",
      since: now,
      lastCheckedAt: now,
    });
    await this.kit.gates.dropOwed(gate.id, userId);
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
    const before = await this.kit.gates.owedGrant(gate.id, userId);
    const since = before?.since ?? now;
    if (now - since >= OWED_FOR_MS) {
      await this.kit.gates.dropOwed(gate.id, userId);
      await this.log(gate, userId, "failed", owedGivenUp(action, error), now);
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
    await this.kit.gates.oweGrant(grant);
  }

  /** Let in through one gate of a Telegram group: the group's other pending requests are done. */
  async settleRequests(gate: Gate, userId: string, now: number): Promise<void> {
    for (const other of await this.kit.gates.forChat(gate.platform, gate.chatId)) {
      if (other.id === gate.id) continue;
      const member = await this.kit.gates.member(other.id, userId);
      if (member?.status === "pending")
        await this.kit.gates.putMember({
          gateId: other.id,
          userId,
          status: "granted",
          since: now,
          // Checked by the job like any member: it passes this gate, or goes into grace.
          lastCheckedAt: this.dueIn(now, 0),
        });
    }
  }

  async revoke(
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
    await this.kit.gates.removeMember(gate.id, member.userId);
    this.kit.counters.removals++;
    await this.log(gate, member.userId, "removed", reason, now);
    this.kit.logger.info({ gate: gate.id, cause }, "a gate's member was removed");
  }

  private async keptByAnother(gate: Gate, userId: string): Promise<boolean> {
    if (gate.target.platform !== "telegram") return false;
    for (const other of await this.kit.gates.forChat(gate.platform, gate.chatId)) {
      if (other.id === gate.id) continue;
      const member = await this.kit.gates.member(other.id, userId);
      if (member && member.status !== "pending") return true;
    }
    return false;
  }

  /** A grant, revoke or decline that did not go through: pause, forget, or try again later. */
  async platformRefused(
    gate: Gate,
    userId: string,
    result: Exclude<MembershipResult, { ok: true }>,
    now: number,
  ): Promise<void> {
    const { gates, logger } = this.kit;
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
    this.kit.counters.failures++;
    const member = await gates.member(gate.id, userId);
    if (member)
      await gates.putMember({ ...member, lastCheckedAt: this.dueIn(now, RETRY_AFTER_MS) });
    logger.info({ gate: gate.id, reason: result.reason }, "a gate's platform call failed; retried");
  }

  async log(
    gate: Gate,
    userId: string,
    action: GateLogEntry["action"],
    reason: string,
    at: number,
  ): Promise<void> {
    await this.kit.gates.log({ gateId: gate.id, userId, at, action, reason });
    this.kit.logger.info({ gate: gate.id, action, reason }, `gate: ${action}`);
  }
}
