import { type Api, GrammyError, HttpError } from "grammy";
import type { ChatMember } from "grammy/types";
import { verifyStart } from "../../../commands/verify.ts";
import type { Logger } from "../../log.ts";
import type { GateMembership, GateTarget, MembershipResult } from "../membership.ts";
import { startLink } from "./invocation.ts";

/** Anonymous group admins and posts sent as a channel: not people a gate can let in or out. */
const STAND_IN_SENDERS = new Set(["1087968824", "136817688"]);

/** The bot's lost right (or its lost seat): the gate pauses until a manager fixes it. */
const REFUSED =
  /not enough rights|CHAT_ADMIN_REQUIRED|need administrator rights|have no rights|RIGHT_FORBIDDEN|CHAT_WRITE_FORBIDDEN|chat not found|not in the chat|CHANNEL_PRIVATE/i;
/** No such request or member (anymore): someone else handled it, or the person left. */
const GONE =
  /USER_NOT_PARTICIPANT|HIDE_REQUESTER_MISSING|USER_ID_INVALID|PARTICIPANT_ID_INVALID|PEER_ID_INVALID|user not found|member not found/i;
/** Admins and the owner cannot be removed by a bot: the gate does not apply to them. */
const UNTOUCHABLE = /administrator of the chat|can't remove chat owner|USER_ADMIN_INVALID/i;
/** A basic group has no ban list: a removed member may come back by link without an unban. */
const NO_BAN_LIST = /supergroup and channel chats only|available only for supergroups/i;

/** Where the rights are granted, in the words of Telegram's own settings screens. */
const WHERE_TO_GRANT = "open the group → Manage group → Administrators → the bot";

type Failed = Exclude<MembershipResult, { ok: true }>;

/** grammY types its signal after the abort-controller package; the platform's is the same thing. */
type ApiSignal = Parameters<Api["getChat"]>[1];
export const apiSignal = (signal: AbortSignal | undefined) => signal as ApiSignal;

export interface TelegramGateOptions {
  /** The bot's id, known once it started (getMe, or botInfo in tests). */
  botId: () => number;
  /** The bot's username, known once it started: the /verify link opens the private chat. */
  botUsername?: () => string;
  logger: Logger;
  /** A group upgraded to a supergroup, learnt from a refused call: everything of it follows. */
  onChatMigrated?: ((fromChatId: string, toChatId: string) => Promise<void>) | undefined;
}

/**
 * Entry to a Telegram group for the people who pass a gate: the group's invite link creates join
 * requests, the bot approves those who pass (or declines them), and removes members who stop
 * passing with a ban lifted at once, so they may ask again later. Every call goes through the
 * adapter's Api, paced and retried like its messages.
 */
export class TelegramGateMembership implements GateMembership {
  readonly platform = "telegram";

  constructor(
    private readonly api: Api,
    private readonly options: TelegramGateOptions,
  ) {}

  /**
   * The link a person asking to join is sent: it opens the private chat with the bot and starts
   * /verify there (the same `start=verify_<chain>` as /verify's group button).
   */
  verifyLink(chain: string): string {
    const username = this.options.botUsername?.();
    return username ? startLink(username, verifyStart(chain)) : "";
  }

  async check(
    target: GateTarget,
    hint?: { gateNumber?: number },
    signal?: AbortSignal,
  ): Promise<{ ok: true; target: GateTarget } | { ok: false; reason: string }> {
    if (target.platform !== "telegram") return { ok: false, reason: "Not a Telegram group." };
    const title = target.title || "the group";
    try {
      const chat = await this.api.getChat(target.chatId, apiSignal(signal));
      if (chat.type !== "group" && chat.type !== "supergroup")
        return { ok: false, reason: "Gates on Telegram are for groups: run /gate add in one." };
      const me = await this.api.getChatMember(
        target.chatId,
        this.options.botId(),
        apiSignal(signal),
      );
      const missing = missingRights(me);
      if (missing.length > 0) {
        const rights = missing.join(" and ");
        const lead =
          me.status === "administrator"
            ? `I need the admin right${missing.length > 1 ? "s" : ""} ${rights} in ${title}`
            : `I need to be an admin of ${title} with the rights ${rights}`;
        return { ok: false, reason: `${lead}: ${WHERE_TO_GRANT}, and turn them on.` };
      }
      // A paused gate asked again keeps its link: join requests are matched to their gate by it.
      if (target.inviteLink !== undefined && hint === undefined) return { ok: true, target };
      const n = hint?.gateNumber;
      const link = await this.api.createChatInviteLink(
        target.chatId,
        {
          creates_join_request: true,
          name: n === undefined ? "Holders" : `Holders (gate ${n})`,
        },
        apiSignal(signal),
      );
      return { ok: true, target: { ...target, inviteLink: link.invite_link } };
    } catch (error) {
      const result = await this.classify(error, target);
      this.options.logger.warn({ err: error, chat: target.chatId }, "telegram gate check failed");
      if (result.kind === "refused")
        return {
          ok: false,
          reason: `I cannot manage ${title} (${result.reason}): ${WHERE_TO_GRANT}, and give me the rights Invite users via link and Ban users.`,
        };
      return { ok: false, reason: `Telegram did not answer (${result.reason}); try again.` };
    }
  }

  /**
   * Approves the person's join request. Without one (handled already, or none was made), a
   * person already in the group needs nothing more; anyone else is gone.
   */
  async grant(target: GateTarget, userId: string, signal?: AbortSignal): Promise<MembershipResult> {
    if (target.platform !== "telegram") return notTelegram();
    if (STAND_IN_SENDERS.has(userId)) return standIn();
    try {
      await this.api.approveChatJoinRequest(target.chatId, Number(userId), apiSignal(signal));
      return { ok: true };
    } catch (error) {
      if (!isNoRequest(error)) return this.classify(error, target);
    }
    try {
      const member = await this.api.getChatMember(target.chatId, Number(userId), apiSignal(signal));
      return isInChat(member)
        ? { ok: true }
        : { ok: false, kind: "gone", reason: "no join request pending and not in the group" };
    } catch (error) {
      return this.classify(error, target);
    }
  }

  /**
   * Who Telegram said is in a group, lately (`${chat}:${user}` → until when): a /start through a
   * group's button asks (the page names the group only for its members), and the proof that
   * follows asks again (insights); each getChatMember counts against the group's message pace.
   * Only "yes" is kept, for 10 minutes, at most 10,000 of them.
   */
  private readonly inChat = new Map<string, number>();

  async isMember(chatId: string, userId: string, signal?: AbortSignal): Promise<boolean> {
    if (!/^\d{1,20}$/.test(userId)) return false;
    const key = `${chatId}:${userId}`;
    const now = Date.now();
    if ((this.inChat.get(key) ?? 0) > now) return true;
    try {
      const member = isInChat(
        await this.api.getChatMember(chatId, Number(userId), apiSignal(signal)),
      );
      if (member) {
        if (this.inChat.size >= 10_000) this.inChat.clear();
        this.inChat.set(key, now + 10 * 60_000);
      } else this.inChat.delete(key);
      return member;
    } catch (error) {
      // Telegram answered: no such chat, or the bot is not in it. Else it could not tell.
      if (error instanceof GrammyError) return false;
      throw error;
    }
  }

  /** Removes a member: a ban, then the ban lifted, so they may ask to join again later. */
  async revoke(
    target: GateTarget,
    userId: string,
    signal?: AbortSignal,
  ): Promise<MembershipResult> {
    if (target.platform !== "telegram") return notTelegram();
    if (STAND_IN_SENDERS.has(userId)) return standIn();
    try {
      await this.api.banChatMember(target.chatId, Number(userId), undefined, apiSignal(signal));
    } catch (error) {
      return this.classify(error, target);
    }
    try {
      await this.api.unbanChatMember(
        target.chatId,
        Number(userId),
        { only_if_banned: true },
        apiSignal(signal),
      );
    } catch (error) {
      if (error instanceof GrammyError && NO_BAN_LIST.test(error.description)) return { ok: true };
      // Still banned: a removal tried again bans and unbans again, so the retry is safe.
      return this.classify(error, target);
    }
    return { ok: true };
  }

  async decline(
    target: GateTarget,
    userId: string,
    signal?: AbortSignal,
  ): Promise<MembershipResult> {
    if (target.platform !== "telegram") return notTelegram();
    try {
      await this.api.declineChatJoinRequest(target.chatId, Number(userId), apiSignal(signal));
      return { ok: true };
    } catch (error) {
      return this.classify(error, target);
    }
  }

  /**
   * A failed call in the gate's terms, the way classifyTelegramError sorts sends: by error_code
   * and Telegram's description. A group that moved is followed and the call counts as transient:
   * the next check finds the gate under the new id.
   */
  private async classify(error: unknown, target: GateTarget): Promise<Failed> {
    if (error instanceof GrammyError) {
      const movedTo = error.parameters.migrate_to_chat_id;
      if (movedTo !== undefined && target.platform === "telegram") {
        try {
          await this.options.onChatMigrated?.(target.chatId, String(movedTo));
        } catch (moveError) {
          this.options.logger.warn({ err: moveError }, "group move not recorded");
        }
        return { ok: false, kind: "transient", reason: "the group became a supergroup" };
      }
      const said = error.description.replace(/^(Bad Request|Forbidden): /, "");
      if (error.error_code === 429 || error.error_code >= 500)
        return { ok: false, kind: "transient", reason: `Telegram ${error.error_code}: ${said}` };
      if (GONE.test(error.description)) return { ok: false, kind: "gone", reason: said };
      if (UNTOUCHABLE.test(error.description))
        return {
          ok: false,
          kind: "gone",
          reason: "an admin of the group, whom the bot cannot remove",
        };
      // 403: the bot was removed from the group, or blocked.
      if (error.error_code === 403 || REFUSED.test(error.description))
        return { ok: false, kind: "refused", reason: said };
      return { ok: false, kind: "transient", reason: `Telegram ${error.error_code}: ${said}` };
    }
    if (error instanceof HttpError)
      return { ok: false, kind: "transient", reason: "network error reaching Telegram" };
    return {
      ok: false,
      kind: "transient",
      reason: error instanceof Error ? error.message : String(error),
    };
  }
}

/** The rights a gate needs that the bot lacks, in the words of Telegram's admin settings. */
function missingRights(me: ChatMember): string[] {
  if (me.status === "creator") return [];
  const admin = me.status === "administrator" ? me : undefined;
  const missing: string[] = [];
  if (!admin?.can_invite_users) missing.push("“Invite users via link”");
  if (!admin?.can_restrict_members) missing.push("“Ban users”");
  return missing;
}

function isInChat(member: ChatMember): boolean {
  return (
    member.status === "creator" ||
    member.status === "administrator" ||
    member.status === "member" ||
    (member.status === "restricted" && member.is_member)
  );
}

/** Approve found no request: handled already (HIDE_REQUESTER_MISSING), or the person is in. */
function isNoRequest(error: unknown): boolean {
  return (
    error instanceof GrammyError &&
    /HIDE_REQUESTER_MISSING|USER_ALREADY_PARTICIPANT|USER_ID_INVALID/i.test(error.description)
  );
}

function notTelegram(): MembershipResult {
  return { ok: false, kind: "refused", reason: "not a Telegram group" };
}

function standIn(): MembershipResult {
  return { ok: false, kind: "gone", reason: "an anonymous admin or a channel, not a person" };
}
