/**
 * What a platform does for gates (issue 29), in the adapters' contract: gates (src/gates/) use it,
 * the adapters implement it (Discord roles through REST, Telegram's join requests), and no adapter
 * imports gates.
 */
import type { Platform } from "../core/platform.ts";

/** What a gate gives: a Discord role in a server, or entry to a Telegram group. */
export type GateTarget =
  | { platform: "discord"; guildId: string; roleId: string; roleName: string }
  | { platform: "telegram"; chatId: string; title: string; inviteLink?: string }
  /** The console's simulated community (issue 38): a role given by printing it. */
  | { platform: "console"; chatId: string; roleName: string };

/** A platform's answer to a grant or a removal. */
export type MembershipResult =
  | { ok: true }
  /** The person is not (or no longer) in the server/group: nothing to do. */
  | { ok: false; kind: "gone"; reason: string }
  /** The platform refused the bot (lost right, role above the bot's): the gate pauses. */
  | { ok: false; kind: "refused"; reason: string }
  /** A network error, a 5xx, a rate limit: tried again at the next check. */
  | { ok: false; kind: "transient"; reason: string };

/**
 * Whether a private message reached the person: true; "closed" when they do not take the bot's
 * messages (direct messages turned off, the bot blocked or never started); false when it failed
 * otherwise (a network error, a 5xx). Compare with `=== true`: "closed" is not delivered.
 */
export type Delivery = boolean | "closed";

/**
 * What a platform does for gates. Discord: roles through REST (both modes). Telegram: the group's
 * join-request link, approve / decline, and removal as ban then unban.
 */
export interface GateMembership {
  readonly platform: Platform;
  /**
   * Whether the bot can enforce this target now; when not, plain words saying how to fix it
   * (Manage Roles, the role's place under the bot's highest role, the admin rights). For
   * Telegram, makes the join-request invite link and returns it, named after `hint.gateNumber`
   * when given (the number /gate list will show), so managers can tell the links apart.
   */
  check(
    target: GateTarget,
    hint?: { gateNumber?: number },
    signal?: AbortSignal,
  ): Promise<{ ok: true; target: GateTarget } | { ok: false; reason: string }>;
  /**
   * Whether a person may add (or remove) a gate giving this target, by the platform's own rule for
   * people: the bot must never do for someone what they could not do by hand. Discord: the owner,
   * or Manage Roles (or Administrator) and a highest role above the gate's (issue 34). Absent
   * (Telegram): the chat's managers may (Invocation.canManageChannel, the group's admins).
   */
  mayGive?(
    target: GateTarget,
    userId: string,
    purpose: "add" | "remove",
  ): Promise<{ ok: true } | { ok: false; reason: string }>;
  /**
   * Gives the target. Discord checks the role again first: one that gained an elevated permission
   * since the gate was added is refused (the gate pauses), never given. Every call takes the
   * re-check round's signal (its stop, its lease, the call's timeout): an aborted call ends at
   * once, as a transient failure.
   */
  grant(target: GateTarget, userId: string, signal?: AbortSignal): Promise<MembershipResult>;
  revoke(target: GateTarget, userId: string, signal?: AbortSignal): Promise<MembershipResult>;
  /** Telegram only: declines a pending join request. */
  decline?(target: GateTarget, userId: string, signal?: AbortSignal): Promise<MembershipResult>;
  /**
   * Added by gservice. Telegram: the address that opens the person's private chat with the bot
   * and runs /verify there (t.me/<bot>?start=verify_<chain>), put in the join-request message.
   */
  verifyLink?(chain: string): string;
  /**
   * The community whose gates a chat's proofs meet. Discord: the server a channel belongs to
   * (undefined for a direct message), so a wallet proved from a /verify run in a channel is
   * checked against that server's gates; the console: its one chat. Absent (Telegram): a proof
   * in the private chat meets the gates the person is already in, and join requests.
   */
  guildOf?(channelId: string): Promise<string | undefined>;
  /**
   * Telegram: whether the person is in the group now (a proof made through a group's button
   * claims it: the payload can be typed by anyone). Throws when the platform cannot tell.
   */
  isMember?(chatId: string, userId: string, signal?: AbortSignal): Promise<boolean>;
}
