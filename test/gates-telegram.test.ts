import { Bot } from "grammy";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { TelegramGateMembership } from "../src/adapters/telegram/gates.ts";
import type { TelegramAdapter } from "../src/adapters/telegram/index.ts";
import type { GateTarget } from "../src/gates/types.ts";
import { silentLogger } from "../src/log.ts";
import {
  anonymousAdmin,
  channelChat,
  type FakeTelegram,
  groupChat,
  startFakeTelegram,
  supergroupChat,
  telegramErrors,
  user,
} from "./fakes/telegram/index.ts";
import { type RuntimeSetup, startRuntime } from "./helpers.ts";
import { tellOnce } from "./outbound-helpers.ts";
import { telegramAdapterFor } from "./telegram-helpers.ts";

const holders = supergroupChat(-1001234567890, "Azuki holders");
const basic = groupChat(-4005, "Small group");
const alice = user(2001, "Alice", "alice");
const bob = user(2002, "Bob");
const owner = user(2003, "Owner");
const target: GateTarget = {
  platform: "telegram",
  chatId: String(holders.id),
  title: holders.title,
};

let fake: FakeTelegram;
let clock: number;
let t: RuntimeSetup;
let adapter: TelegramAdapter;
let gates: TelegramGateMembership;

beforeEach(async () => {
  clock = Date.UTC(2025, 0, 1);
  fake = await startFakeTelegram({ now: () => clock });
  fake.addChat(holders);
  fake.addChat(basic);
  t = await startRuntime();
  adapter = telegramAdapterFor(fake, t.runtime, {
    retry: { maxDelaySeconds: 1, maxRetryAttempts: 1 },
  });
  gates = adapter.gateMembership;
});

afterEach(async () => {
  await adapter.stop();
  await t.close();
  await fake.close();
});

function calls(method: string) {
  return fake.sent.filter((call) => call.method === method);
}

describe("check at /gate add", () => {
  it("refuses when the bot is not an admin, naming both rights and where to grant them", async () => {
    const result = await gates.check(target);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.reason).toContain("admin of Azuki holders");
    expect(result.reason).toContain("“Invite users via link” and “Ban users”");
    expect(result.reason).toContain("Manage group → Administrators → the bot");
    expect(calls("createChatInviteLink")).toHaveLength(0);
  });

  it("names only the right that is missing", async () => {
    fake.setAdminRights(holders.id, fake.botInfo.id, { can_restrict_members: false });
    const result = await gates.check(target);
    expect(result).toEqual({
      ok: false,
      reason: expect.stringMatching(/^I need the admin right “Ban users” in Azuki holders: /),
    });
    if (result.ok) return;
    expect(result.reason).not.toContain("Invite users");
  });

  it("refuses a channel", async () => {
    const news = channelChat(-1009999, "News");
    fake.addChat(news);
    fake.setAdminRights(news.id, fake.botInfo.id);
    const result = await gates.check({
      platform: "telegram",
      chatId: String(news.id),
      title: "News",
    });
    expect(result).toEqual({ ok: false, reason: expect.stringContaining("for groups") });
  });

  it("with both rights, makes a join-request link named after the gate", async () => {
    fake.setAdminRights(holders.id, fake.botInfo.id);
    const result = await gates.check(target, { gateNumber: 2 });
    const [link] = fake.inviteLinks(holders.id);
    expect(link).toMatchObject({ creates_join_request: true, name: "Holders (gate 2)" });
    expect(result).toEqual({ ok: true, target: { ...target, inviteLink: link?.invite_link } });
  });

  it("says so when the bot was removed from the group", async () => {
    fake.failNext("getChat", telegramErrors.kicked());
    const result = await gates.check(target);
    expect(result).toEqual({
      ok: false,
      reason: expect.stringContaining("I cannot manage Azuki holders (bot was kicked"),
    });
  });
});

describe("join requests", () => {
  beforeEach(() => fake.setAdminRights(holders.id, fake.botInfo.id));

  it("reach the listener through polling, with the chat that reaches the person", async () => {
    const checked = await gates.check(target);
    const link =
      checked.ok && checked.target.platform === "telegram" ? checked.target.inviteLink : "";
    const seen: unknown[][] = [];
    await adapter.stop();
    const heard = new Promise<void>((resolve) => {
      adapter = telegramAdapterFor(fake, t.runtime, {
        onJoinRequest: async (...args) => {
          seen.push(args);
          resolve();
        },
      });
    });
    await adapter.start();
    fake.pushUpdate(fake.joinRequest(holders, alice, link));
    await heard;
    expect(seen).toEqual([[String(holders.id), String(alice.id), String(alice.id), link]]);
  });

  it("are asked of Telegram by a webhook too", async () => {
    await adapter.stop();
    adapter = telegramAdapterFor(fake, t.runtime, {
      webhook: { url: "https://bot.example/telegram", secret: "s3cret", path: "/telegram" },
    });
    await adapter.start();
    const [set] = calls("setWebhook");
    expect(set?.params.allowed_updates).toContain("chat_join_request");
    expect(set?.params.allowed_updates).toContain("message");
  });

  it("are approved on grant; a member needs nothing more; a stranger without one is gone", async () => {
    fake.pushUpdate(fake.joinRequest(holders, alice));
    expect(await gates.grant(target, String(alice.id))).toEqual({ ok: true });
    expect(calls("approveChatJoinRequest")).toHaveLength(1);
    expect(fake.memberStatus(holders.id, alice.id)).toBe("member");
    expect(fake.pendingJoinRequests(holders.id)).toEqual([]);

    expect(await gates.grant(target, String(alice.id))).toEqual({ ok: true });

    fake.setMemberStatus(holders.id, bob.id, "left");
    expect(await gates.grant(target, String(bob.id))).toMatchObject({ ok: false, kind: "gone" });
    expect(fake.memberStatus(holders.id, bob.id)).toBe("left");
  });

  it("are declined; a request handled already is gone", async () => {
    fake.setMemberStatus(holders.id, bob.id, "left");
    fake.pushUpdate(fake.joinRequest(holders, bob));
    expect(await gates.decline(target, String(bob.id))).toEqual({ ok: true });
    expect(fake.pendingJoinRequests(holders.id)).toEqual([]);
    expect(fake.memberStatus(holders.id, bob.id)).toBe("left");
    expect(await gates.decline(target, String(bob.id))).toEqual({
      ok: false,
      kind: "gone",
      reason: "HIDE_REQUESTER_MISSING",
    });
  });
});

describe("removal", () => {
  beforeEach(() => fake.setAdminRights(holders.id, fake.botInfo.id));

  it("bans then unbans only if banned, so the person may ask again", async () => {
    fake.setMemberStatus(holders.id, alice.id, "member");
    expect(await gates.revoke(target, String(alice.id))).toEqual({ ok: true });
    const [ban] = calls("banChatMember");
    const [unban] = calls("unbanChatMember");
    expect(ban?.params).toMatchObject({ chat_id: holders.id, user_id: alice.id });
    expect(unban?.params).toMatchObject({ user_id: alice.id, only_if_banned: true });
    expect(unban!.seq).toBeGreaterThan(ban!.seq);
    expect(fake.memberStatus(holders.id, alice.id)).toBe("left");

    fake.pushUpdate(fake.joinRequest(holders, alice));
    expect(await gates.grant(target, String(alice.id))).toEqual({ ok: true });
    expect(fake.memberStatus(holders.id, alice.id)).toBe("member");
  });

  it("in a basic group, where there is no ban to lift, the removal is enough", async () => {
    fake.setAdminRights(basic.id, fake.botInfo.id);
    const small: GateTarget = {
      platform: "telegram",
      chatId: String(basic.id),
      title: basic.title,
    };
    expect(await gates.revoke(small, String(alice.id))).toEqual({ ok: true });
    expect(fake.memberStatus(basic.id, alice.id)).toBe("left");
  });

  it("leaves admins, the owner and anonymous admins alone, without pausing the gate", async () => {
    fake.setMemberStatus(holders.id, owner.id, "creator");
    fake.setMemberStatus(holders.id, bob.id, "administrator");
    for (const id of [owner.id, bob.id, anonymousAdmin.id])
      expect(await gates.revoke(target, String(id))).toMatchObject({ ok: false, kind: "gone" });
    expect(fake.memberStatus(holders.id, owner.id)).toBe("creator");
  });
});

describe("rights lost later", () => {
  beforeEach(() => fake.setAdminRights(holders.id, fake.botInfo.id));

  it("a removal without Ban users is refused (the gate pauses), and nobody is removed", async () => {
    fake.setAdminRights(holders.id, fake.botInfo.id, { can_restrict_members: false });
    const result = await gates.revoke(target, String(alice.id));
    expect(result).toEqual({
      ok: false,
      kind: "refused",
      reason: "not enough rights to restrict/unrestrict chat member",
    });
    expect(fake.memberStatus(holders.id, alice.id)).toBe("member");
  });

  it("an approval without Invite users is refused, and the request stays", async () => {
    fake.pushUpdate(fake.joinRequest(holders, alice));
    fake.setAdminRights(holders.id, fake.botInfo.id, { can_invite_users: false });
    expect(await gates.grant(target, String(alice.id))).toMatchObject({
      ok: false,
      kind: "refused",
    });
    expect(fake.pendingJoinRequests(holders.id)).toHaveLength(1);
  });

  it("a bot that is no longer an admin is refused", async () => {
    fake.setMemberStatus(holders.id, fake.botInfo.id, "member");
    expect(await gates.decline(target, String(alice.id))).toMatchObject({
      ok: false,
      kind: "refused",
      reason: "CHAT_ADMIN_REQUIRED",
    });
  });
});

describe("telling the person", () => {
  it("reaches someone who never pressed Start through the request's user_chat_id, for 5 minutes", async () => {
    fake.setAdminRights(holders.id, fake.botInfo.id);
    fake.refusePrivateChat(alice.id, telegramErrors.cantInitiate());
    // Never started the bot: closed to it (issue 34: the gate's log says so).
    expect(await tellOnce(adapter, "telegram", String(alice.id), "Prove a wallet first")).toBe(
      "closed",
    );

    const request = fake.pushUpdate(fake.joinRequest(holders, alice));
    const userChatId = String(request.chat_join_request?.user_chat_id);
    const text = "To join, prove a wallet: https://t.me/fake_test_bot?start=verify_ethereum <b>";
    expect(await tellOnce(adapter, "telegram", String(alice.id), text, userChatId)).toBe(true);
    const [sent] = fake.messages(alice.id);
    // Plain text: nothing in it is read as markup.
    expect(sent?.text).toBe(text);

    clock += 5 * 60_000;
    expect(await tellOnce(adapter, "telegram", String(alice.id), "Still there?", userChatId)).toBe(
      "closed",
    );
  });
});

describe("failures", () => {
  // A bare Api: no pacing or retries, so each failure reaches the classification as it came.
  let bare: TelegramGateMembership;
  const moves: string[][] = [];
  beforeEach(() => {
    fake.setAdminRights(holders.id, fake.botInfo.id);
    const bot = new Bot(fake.token, { botInfo: fake.botInfo, client: { apiRoot: fake.apiRoot } });
    bare = new TelegramGateMembership(bot.api, {
      botId: () => fake.botInfo.id,
      logger: silentLogger(),
      onChatMigrated: async (from, to) => {
        moves.push([from, to]);
      },
    });
  });

  it("a rate limit, a 5xx or the network is transient", async () => {
    fake.failNext("approveChatJoinRequest", telegramErrors.tooManyRequests(3));
    expect(await bare.grant(target, String(alice.id))).toMatchObject({ kind: "transient" });
    fake.failNext("banChatMember", telegramErrors.badGateway());
    expect(await bare.revoke(target, String(alice.id))).toMatchObject({ kind: "transient" });
    fake.failNext("declineChatJoinRequest", "disconnect");
    expect(await bare.decline(target, String(alice.id))).toEqual({
      ok: false,
      kind: "transient",
      reason: "network error reaching Telegram",
    });
  });

  it("a group that became a supergroup is followed, and the call tried again later", async () => {
    const old = groupChat(-4100, "Old group");
    fake.addChat(old);
    fake.upgradeToSupergroup(old.id, -1004100);
    const result = await bare.grant(
      { platform: "telegram", chatId: String(old.id), title: old.title },
      String(alice.id),
    );
    expect(result).toMatchObject({ ok: false, kind: "transient" });
    expect(moves).toEqual([[String(old.id), "-1004100"]]);
  });
});

describe("the /verify link a person asking to join is sent", () => {
  it("opens the private chat with the bot and starts /verify on the gate's chain", () => {
    const membership = new TelegramGateMembership(new Bot("1:x").api, {
      botId: () => 1,
      botUsername: () => "gate_bot",
      logger: silentLogger(),
    });
    expect(membership.verifyLink("base")).toBe("https://t.me/gate_bot?start=verify_base");
  });

  it("is empty before the bot knows its name (the message then says to send /verify)", () => {
    const membership = new TelegramGateMembership(new Bot("1:x").api, {
      botId: () => 1,
      logger: silentLogger(),
    });
    expect(membership.verifyLink("base")).toBe("");
  });
});
