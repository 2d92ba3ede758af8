import type { Platform } from "../core/platform.ts";
import type { GateActs, Granted } from "./acts.ts";
import { provedWallets, verdictOf } from "./decide.ts";
import { joinRequestNotice, REQUEST_EXPIRED, whys } from "./notices.ts";
import type { Gate } from "./types.ts";

/** A Telegram join request waits this long for a proof, then is declined. */
export const JOIN_REQUEST_WAIT_MS = 10 * 60_000;

/** A join request, as the platform reports it (GateService.onJoinRequest). */
export interface JoinRequest {
  platform: Platform;
  chatId: string;
  userId: string;
  /** The private chat the request opens with the person, when the platform gives one. */
  userChatId?: string | undefined;
  /** The invite link it came through; none through a public group's join button. */
  inviteLink?: string | undefined;
}

/**
 * Decides a join request by the gate whose invite link it came through: approved when the person
 * passes; else kept pending for JOIN_REQUEST_WAIT_MS with the person told how to prove a wallet.
 * A request through no active gate's link is left alone (GateService.onJoinRequest says why).
 */
export async function decideJoinRequest(acts: GateActs, request: JoinRequest): Promise<void> {
  const { kit } = acts;
  const { platform, chatId, userId, userChatId, inviteLink } = request;
  const gates = await kit.gates.forChat(platform, chatId);
  if (gates.length === 0) return;
  const gate =
    inviteLink === undefined
      ? undefined
      : gates.find(
          (candidate) =>
            candidate.target.platform === "telegram" && candidate.target.inviteLink === inviteLink,
        );
  if (!gate || gate.pausedAt !== undefined) {
    kit.logger.info(
      {
        chat: chatId,
        link: inviteLink === undefined ? "none" : gate ? "paused gate" : "not a gate's",
      },
      "a join request not through an active gate's link: left to the group's admins",
    );
    return;
  }
  const membership = kit.memberships.get(platform);
  if (!membership) return;
  const now = kit.now();
  const wallets = await provedWallets(kit, platform, userId);
  const verdict = await verdictOf(kit, gate, wallets, "request");
  let granted: Granted = "no";
  if (verdict.outcome === "pass") {
    kit.counters.passes++;
    granted = await acts.lock(gate.id, userId, () =>
      acts.grant(gate, membership, userId, whys(verdict, "pass"), "approved", now),
    );
    if (granted === "granted") return;
  }
  await kit.gates.putMember({
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
  await acts.tell({
    platform: gate.platform,
    userId,
    text: joinRequestNotice(gate, link),
    userChatId,
  });
}

/** Join requests past their deadline are declined (once per person and group). */
export async function declineExpired(
  acts: GateActs,
  now: number,
  signal?: AbortSignal,
): Promise<void> {
  const { kit } = acts;
  const declined = new Set<string>();
  // A busy group's requests share a gate: each is read once a round.
  const gates = new Map<number, Gate | undefined>();
  for (const member of await kit.gates.expiredRequests(now)) {
    if (signal?.aborted) return;
    // Passed, the approval owed: the job approves it rather than declining it.
    if (await kit.gates.owedGrant(member.gateId, member.userId)) continue;
    if (!gates.has(member.gateId)) gates.set(member.gateId, await kit.gates.get(member.gateId));
    const gate = gates.get(member.gateId);
    if (!gate) continue;
    const key = `${gate.chatId}:${member.userId}`;
    const membership = kit.memberships.get(gate.platform);
    if (!membership) continue;
    if (!declined.has(key)) {
      declined.add(key);
      const decline = membership.decline?.bind(membership);
      const result = decline
        ? await acts.platformCall("the platform", signal, (bound) =>
            decline(gate.target, member.userId, bound),
          )
        : ({ ok: true } as const);
      if (!result.ok && result.kind === "transient") {
        kit.counters.failures++;
        continue;
      }
      if (!result.ok && result.kind === "refused") {
        await acts.platformRefused(gate, member.userId, result, now);
        continue;
      }
      await acts.log(gate, member.userId, "declined", REQUEST_EXPIRED, now);
    }
    await kit.gates.removeMember(member.gateId, member.userId);
  }
}
