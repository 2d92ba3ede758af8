/**
 * The steps of the re-check job's round (GateService.recheckDue, run by src/gates/recheck.ts)
 * besides declining expired join requests (join-requests.ts): paused gates asked again, grants
 * owed tried again, and the due members re-checked within the minute's budget.
 */

import { boundedCall } from "../core/bounded-call.ts";
import { type GateActs, RECHECK_EVERY_MS } from "./acts.ts";
import { decide } from "./decide.ts";
import type { Gate } from "./types.ts";

/** Due members looked at past the minute's budget, to count how many are deferred. */
const DEFERRED_PEEK = 500;
/** A paused gate's platform is asked again at most this often whether the bot may enforce it now. */
const PAUSED_RECHECK_MS = 10 * 60_000;
/** Grants owed tried again in one round at most. */
const OWED_PER_ROUND = 100;

/**
 * A paused gate goes on once its platform says the bot may enforce it again. `pausedAsked` is
 * when each paused gate's platform was last asked (the service keeps it between rounds).
 */
export async function retryPaused(
  acts: GateActs,
  pausedAsked: Map<number, number>,
  now: number,
  signal?: AbortSignal,
): Promise<void> {
  const { kit } = acts;
  for (const gate of await kit.gates.all()) {
    if (signal?.aborted) return;
    if (gate.pausedAt === undefined) continue;
    if (now - (pausedAsked.get(gate.id) ?? gate.pausedAt) < PAUSED_RECHECK_MS) continue;
    pausedAsked.set(gate.id, now);
    const membership = kit.memberships.get(gate.platform);
    if (!membership) continue;
    const checked = await boundedCall("the platform", kit.callTimeoutMs(), signal, (bound) =>
      membership.check(gate.target, undefined, bound),
    ).catch((error: unknown) => ({ ok: false as const, reason: String(error) }));
    if (checked.ok) {
      await kit.gates.resume(gate.id);
      kit.logger.info({ gate: gate.id }, "a paused gate goes on: the platform allows it");
    }
  }
}

/** The re-check job tries again the grants owed whose time has come. */
export async function retryOwed(acts: GateActs, now: number, signal?: AbortSignal): Promise<void> {
  const { kit } = acts;
  const gates = new Map<number, Gate | undefined>();
  for (const owed of await kit.gates.owedDue(now, OWED_PER_ROUND)) {
    if (signal?.aborted) return;
    if (!gates.has(owed.gateId)) gates.set(owed.gateId, await kit.gates.get(owed.gateId));
    const gate = gates.get(owed.gateId);
    if (!gate || gate.pausedAt !== undefined) continue;
    const membership = kit.memberships.get(gate.platform);
    if (!membership) continue;
    await acts.lock(gate.id, owed.userId, async () => {
      const member = await kit.gates.member(gate.id, owed.userId);
      // Given since (a new proof went through): nothing is owed.
      if (member && member.status !== "pending") {
        await kit.gates.dropOwed(gate.id, owed.userId);
        return;
      }
      const granted = await acts.grant(
        gate,
        membership,
        owed.userId,
        owed.reason,
        owed.action,
        now,
        signal,
      );
      if (granted === "granted" && member?.status === "pending")
        await acts.settleRequests(gate, owed.userId, now);
    });
  }
}

/**
 * Re-checks up to `budget` due members (oldest check first); the due members left over (up to
 * 500) are counted as deferred. Returns how many were checked.
 */
export async function recheckMembers(
  acts: GateActs,
  budget: number,
  now: number,
  signal?: AbortSignal,
): Promise<number> {
  const { kit } = acts;
  const due = await kit.gates.due(now - RECHECK_EVERY_MS, budget + DEFERRED_PEEK);
  const gates = new Map<number, Gate | undefined>();
  let checked = 0;
  for (const member of due) {
    if (signal?.aborted) break;
    if (!gates.has(member.gateId)) gates.set(member.gateId, await kit.gates.get(member.gateId));
    const gate = gates.get(member.gateId);
    if (!gate) {
      await kit.gates.removeMember(member.gateId, member.userId);
      continue;
    }
    // A paused gate's members, and those of a platform this process does not serve, wait at
    // the back of the queue: nothing is decided for them, and they do not hold up the others.
    if (gate.pausedAt !== undefined || !kit.memberships.has(gate.platform)) {
      await kit.gates.putMember({ ...member, lastCheckedAt: now });
      continue;
    }
    // Pending requests are decided by a proof or their deadline, not by the daily re-check.
    if (member.status === "pending") continue;
    if (checked >= budget) {
      kit.counters.deferred++;
      continue;
    }
    checked++;
    await acts.lock(gate.id, member.userId, () =>
      decide(acts, gate, member.userId, "recheck", signal),
    );
  }
  return checked;
}
