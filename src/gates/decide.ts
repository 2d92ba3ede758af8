import { boundedCall, CallCutError } from "../core/bounded-call.ts";
import { type CountedWallets, everywhere } from "../core/person-wallets.ts";
import type { Platform } from "../core/platform.ts";
import { type Cause, type GateActs, type GateKit, RETRY_AFTER_MS } from "./acts.ts";
import { graceWarning, notWarned, WARNING_CLOSED, WARNING_FAILED, whys } from "./notices.ts";
import type { Gate, GateVerdict } from "./types.ts";

/** A member in grace is looked at again this often (and at the grace's end), to give it back soon. */
const GRACE_RECHECK_MS = 3_600_000;

const NO_WALLET: GateVerdict = { outcome: "fail", results: [] };

/**
 * The wallets that count for the person: through the verification service when there is one
 * (each proof on its chains, delegations read again), else every proved wallet everywhere.
 */
export async function provedWallets(
  kit: GateKit,
  platform: Platform,
  userId: string,
  signal?: AbortSignal,
): Promise<CountedWallets> {
  const held = await kit.holdings?.(platform, userId, signal);
  if (held) return held;
  const wallets = await kit.wallets.list(platform, userId);
  return everywhere(
    wallets.filter((wallet) => wallet.provedAt !== undefined).map((w) => w.address),
  );
}

/**
 * No proved wallet fails without asking the data service. Bounded: an evaluation cut short (its
 * time, a stop, the lease) is unknown, and changes nothing.
 */
export async function verdictOf(
  kit: GateKit,
  gate: Gate,
  wallets: CountedWallets,
  cause: Cause,
  signal?: AbortSignal,
): Promise<GateVerdict> {
  if (wallets.wallets.length === 0) return NO_WALLET;
  const evaluator = cause === "recheck" ? kit.evaluator : (kit.freshEvaluator ?? kit.evaluator);
  try {
    return await boundedCall("the data service", kit.callTimeoutMs(), signal, (bound) =>
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
export async function decide(
  acts: GateActs,
  gate: Gate,
  userId: string,
  cause: Cause,
  signal?: AbortSignal,
  /** The person's wallets as read once for several gates (decideFor); else read here. */
  read?: () => Promise<CountedWallets>,
): Promise<void> {
  const { kit } = acts;
  const membership = kit.memberships.get(gate.platform);
  // A platform this process does not serve: its members wait for an instance that does.
  if (!membership) return;
  const { gates, logger } = kit;
  const member = await gates.member(gate.id, userId);
  const wallets = await (read?.() ?? provedWallets(kit, gate.platform, userId, signal));
  const verdict = await verdictOf(kit, gate, wallets, cause, signal);
  const now = kit.now();
  if (verdict.outcome === "unknown") {
    kit.counters.failures++;
    logger.info(
      { gate: gate.id, why: whys(verdict, "fail") },
      "a gate's verdict is unknown (upstream error): nothing changes",
    );
    if (member)
      await gates.putMember({ ...member, lastCheckedAt: acts.dueIn(now, RETRY_AFTER_MS) });
    return;
  }
  if (verdict.outcome === "pass") {
    kit.counters.passes++;
    if (!member || member.status === "pending") {
      const action = member ? "approved" : "granted";
      const reason = whys(verdict, "pass");
      const granted = await acts.grant(gate, membership, userId, reason, action, now, signal);
      if (granted === "granted" && member?.status === "pending")
        await acts.settleRequests(gate, userId, now);
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
      await acts.log(gate, userId, "kept", whys(verdict, "pass"), now);
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
  const reason = wallets.wallets.length === 0 ? "no proved wallet" : whys(verdict, "fail");
  if (member.status === "granted") {
    const graceUntil = now + kit.graceMs();
    if (graceUntil > now) {
      const told = await acts.tell({
        platform: gate.platform,
        userId,
        text: graceWarning(gate, reason, graceUntil),
        warning: "first",
        signal,
      });
      await gates.putMember({
        ...member,
        status: "grace",
        failingSince: now,
        graceUntil,
        ...(told === true ? { toldAt: now } : {}),
        lastCheckedAt: acts.dueIn(now, Math.min(GRACE_RECHECK_MS, kit.graceMs())),
      });
      await acts.log(gate, userId, "grace", reason, now);
      // Removed at the grace's end all the same: the managers see who was not warned, and why.
      if (told !== true)
        await acts.log(
          gate,
          userId,
          "failed",
          told === "closed" ? WARNING_CLOSED : WARNING_FAILED,
          now,
        );
      return;
    }
  } else if ((member.graceUntil ?? 0) > now) {
    // A warning that did not reach them is tried again, once the wait the outbound module keeps
    // for them is over (a rate limit, a failure's backoff; a person who closed their messages is
    // left alone for hours): told late is better than removed without a word.
    const told =
      member.toldAt === undefined
        ? await acts.tell({
            platform: gate.platform,
            userId,
            text: graceWarning(gate, reason, member.graceUntil ?? now),
            warning: "again",
            signal,
          })
        : false;
    await gates.putMember({
      ...member,
      ...(told === true ? { toldAt: now } : {}),
      lastCheckedAt: acts.dueIn(now, Math.min(GRACE_RECHECK_MS, (member.graceUntil ?? now) - now)),
    });
    if (told === true) await acts.log(gate, userId, "grace", `warned late: ${reason}`, now);
    return;
  }
  const said =
    member.status === "grace" && member.toldAt === undefined ? notWarned(reason) : reason;
  await acts.revoke(gate, membership, member, said, cause, now, signal);
}
