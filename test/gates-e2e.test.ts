/**
 * Issue 29's "done when", through the whole bot (createBot) on each platform: Discord over the
 * gateway, Discord over HTTP interactions, and Telegram. A manager adds `holds 1 Azuki` with the
 * real /gate command; a person proves the simulator's demo wallet (the page's challenge signed with
 * its published key, no browser) and gets the role or is let in; keeps it through an upstream
 * outage while the re-check runs; and, once the wallet sold its Azuki (the simulator's sellNfts),
 * is told once, keeps access through GATE_GRACE_H and loses it after. The bot's clock runs `skew`
 * ahead of the real one; the re-check job's rounds are run by hand (bot.gateRecheck.tick()).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { privateKeyToAccount } from "viem/accounts";
import { afterEach, describe, expect, it } from "vitest";
import { INTERACTIONS_PATH } from "../src/adapters/discord-http/endpoint.ts";
import { type Bot, createBot } from "../src/bot.ts";
import { parseConfig } from "../src/config.ts";
import { gateStoreOf } from "../src/gates/store.ts";
import { silentLogger } from "../src/log.ts";
import { CAST_COLLECTIONS, DEMO_WALLET, type Simulator } from "../src/simulator/index.ts";
import {
  type FakeDiscord,
  MEMBER_PERMISSIONS,
  PERMISSION,
  type RecordedRequest,
  startFakeDiscord,
} from "./fakes/discord/index.ts";
import {
  type FakeTelegram,
  privateChat,
  type RecordedCall,
  startFakeTelegram,
  supergroupChat,
  user,
} from "./fakes/telegram/index.ts";
import { proveWithLink, worldEnv } from "./helpers.ts";
import { startTestSimulator } from "./test-simulator.ts";

const HOUR = 3_600_000;
const demo = privateKeyToAccount(DEMO_WALLET.privateKey);
const cleanups: (() => unknown)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** How far ahead of the real clock the bot's runs. */
let skew = 0;

/** Its own simulator (its sales are its own), and a bot on its own data directory. */
async function startWorld(
  parts: Omit<Parameters<typeof worldEnv>[0], "sim" | "dataDir">,
  extra: Record<string, string> = {},
): Promise<{ sim: Simulator; bot: Bot; azuki: string }> {
  skew = 0;
  const sim = await startTestSimulator({ apiKey: "gates-e2e" });
  cleanups.push(() => sim.close());
  const dataDir = mkdtempSync(join(tmpdir(), "gates-e2e-"));
  cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
  // Holdings uncached: each re-check reads the simulator, so an outage or a sale is seen at once.
  const env = worldEnv(
    { sim, dataDir, ...parts },
    { CHAINS: "ethereum", CACHE_TTL_OWNERSHIP_S: "0", ...extra },
  );
  const bot = await createBot(parseConfig(env), {
    logger: silentLogger(),
    now: () => Date.now() + skew,
  });
  await bot.start();
  cleanups.push(() => bot.stop());
  const azuki = CAST_COLLECTIONS.find((c) => c.name === "Azuki")?.address.toLowerCase() ?? "";
  if (!sim.fixtures.gates.demo.holds[azuki]) throw new Error("the demo wallet holds no Azuki");
  return { sim, bot, azuki };
}

/** One round of the re-check job, and whatever it started. */
async function recheck(bot: Bot): Promise<number | false> {
  const checked = await bot.gateRecheck.tick();
  await bot.gates.settled();
  return checked;
}

/** The link to the bot's page in a reply. */
function linkIn(text: string, bot: Bot): string {
  const url = new RegExp(`http://127\\.0\\.0\\.1:${bot.http.port}/verify/[\\w-]+`).exec(text)?.[0];
  if (!url) throw new Error(`no link to the bot's page in: ${text}`);
  return url;
}

type Body = {
  type?: number;
  content?: string;
  embeds?: { description?: string; title?: string }[];
};
function textOf(request: RecordedRequest): string {
  const body = request.body as Body & { data?: Body };
  const data = body.data ?? body;
  const embeds = (data.embeds ?? []).map((e) => `${e.title ?? ""}\n${e.description ?? ""}`);
  return [data.content ?? "", ...embeds].join("\n");
}

/**
 * Both Discord modes: the same server, roles and people; `ask` runs a slash command one way and
 * resolves to what the person read (the callback, or the deferred answer's edit).
 */
async function discordCase(mode: "gateway" | "http") {
  const fake: FakeDiscord = await startFakeDiscord();
  cleanups.push(() => fake.close());
  // Server Settings → Roles, top to bottom: the bot's role with Manage Roles, then Holders.
  const holders = fake.addRole({ name: "Holders", position: 1 });
  const botRole = fake.addRole({
    name: "Gatekeeper",
    position: 2,
    permissions: PERMISSION.ManageRoles,
    managed: true,
  });
  fake.setBotRoles([botRole.id]);
  const person = { id: "300000000000000007", username: "alice", globalName: "Alice" };
  fake.addMember(person.id);
  const { sim, bot, azuki } = await startWorld(
    { discord: { token: fake.token, apiBase: fake.apiBase, guildId: fake.guildId } },
    mode === "http" ? { DISCORD_PUBLIC_KEY: fake.publicKey } : {},
  );
  const endpoint = `http://127.0.0.1:${bot.http.port}${INTERACTIONS_PATH}`;
  const ask = async (payload: ReturnType<FakeDiscord["slashCommand"]>) => {
    let callback: RecordedRequest;
    if (mode === "gateway") callback = await fake.waitForCallback(fake.sendInteraction(payload));
    else {
      const delivery = await fake.postInteraction(endpoint, payload);
      expect(delivery.status).toBe(200);
      callback = delivery.callback as RecordedRequest;
    }
    // Type 5: deferred, the answer comes as the original's edit.
    if ((callback.body as Body).type === 5)
      return textOf(await fake.waitForOriginalEdit(payload, 10_000));
    return textOf(callback);
  };
  const hasRole = () => fake.member(person.id)?.roles.includes(holders.id) ?? false;

  // 1. A manager adds the gate with the slash command's role option.
  const added = await ask(
    fake.slashCommand(
      "gate",
      { action: "add", role: holders.id, spec: "holds 1 Azuki" },
      { memberPermissions: MEMBER_PERMISSIONS | PERMISSION.ManageChannels },
    ),
  );
  expect(added).toMatch(/Holders/);
  expect(await bot.gates.list("discord", fake.guildId)).toHaveLength(1);
  expect(hasRole()).toBe(false);

  // 2. The person asks /verify in the server and proves the demo wallet: the role is given.
  const answer = await ask(fake.slashCommand("verify", {}, { user: person }));
  await proveWithLink(bot.verify, linkIn(answer, bot), demo);
  await bot.gates.settled();
  expect(hasRole()).toBe(true);

  // 3. A day later the data service is down while the re-check runs: nothing is removed.
  sim.setFaults({ errorRates: { 503: 1 } });
  skew += 24 * HOUR + 60_000;
  const failuresBefore = (await bot.gates.stats()).failures;
  await recheck(bot);
  sim.clearFaults();
  expect((await bot.gates.stats()).failures).toBeGreaterThan(failuresBefore);
  expect(hasRole()).toBe(true);
  expect(fake.dms(person.id)).toEqual([]);

  // 4. The wallet sells its Azuki: told once, privately; kept through the grace; removed after.
  expect(sim.sellNfts(DEMO_WALLET.address, azuki)).toBeGreaterThan(0);
  skew += HOUR;
  await recheck(bot);
  expect(hasRole()).toBe(true);
  expect(fake.dms(person.id)).toHaveLength(1);
  expect(fake.dms(person.id)[0]?.content).toMatch(/no longer pass[\s\S]*\/verify/);
  skew += 12 * HOUR;
  await recheck(bot);
  expect(hasRole()).toBe(true);
  expect(fake.dms(person.id)).toHaveLength(1);
  skew += 12 * HOUR + 60_000;
  await recheck(bot);
  expect(hasRole()).toBe(false);
  expect(fake.dms(person.id)).toHaveLength(1);
  const [gate] = await bot.gates.list("discord", fake.guildId);
  const actions = (await gateStoreOf(bot.store).logOf(gate?.id ?? 0, 10)).map((e) => e.action);
  expect(actions).toEqual(["removed", "grace", "granted"]);
}

describe("gates end to end, through the real bot", () => {
  it("Discord over the gateway: /gate add role:, proof → role, outage keeps it, sale + grace removes it", async () => {
    await discordCase("gateway");
  }, 30_000);

  it("Discord over HTTP interactions: the same through the bot's own endpoint", async () => {
    await discordCase("http");
  }, 30_000);

  it("Telegram: /gate add in the group, a join request approved after the proof, outage keeps, sale + grace removes", async () => {
    const fake: FakeTelegram = await startFakeTelegram();
    cleanups.push(() => fake.close());
    const group = supergroupChat(-1001234567890, "Azuki holders");
    fake.addChat(group);
    fake.setAdminRights(group.id, fake.botInfo.id);
    const owner = user(7001, "Owner", "owner");
    fake.setMemberStatus(group.id, owner.id, "creator");
    const alice = user(7002, "Alice", "alice");
    fake.setMemberStatus(group.id, alice.id, "left");
    const dm = privateChat(alice);
    const { sim, bot, azuki } = await startWorld({
      telegram: { token: fake.token, apiRoot: fake.apiRoot },
    });
    const say = async (
      chat: Parameters<FakeTelegram["message"]>[0],
      from: typeof alice,
      text: string,
    ) => {
      const before = fake.sent.length;
      fake.pushUpdate(fake.message(chat, from, text));
      return fake.waitFor(
        (call: RecordedCall) =>
          call.seq > before &&
          call.ok &&
          call.method === "sendMessage" &&
          String(call.params.chat_id) === String(chat.id),
        10_000,
      );
    };
    const toldAlice = () =>
      fake.sent.filter(
        (call) =>
          call.ok &&
          call.method === "sendMessage" &&
          String(call.params.chat_id) === String(alice.id),
      );

    // 1. The group's owner adds the gate: the bot shows a join-request link.
    const added = await say(group, owner, "/gate add holds 1 Azuki");
    const [link] = fake.inviteLinks(group.id);
    expect(link?.creates_join_request).toBe(true);
    expect(String(added.params.text)).toContain(link?.invite_link ?? "no link");

    // 2. Alice asks to join before proving: told privately how, the request kept pending.
    fake.pushUpdate(fake.joinRequest(group, alice, link?.invite_link));
    const told = await fake.waitFor(
      (call: RecordedCall) =>
        call.ok &&
        call.method === "sendMessage" &&
        String(call.params.chat_id) === String(alice.id),
      10_000,
    );
    // With the link that opens /verify in the bot's private chat, on the gate's chain.
    expect(String(told.params.text)).toMatch(/https:\/\/t\.me\/\w+\?start=verify_ethereum/);
    expect(fake.pendingJoinRequests(group.id)).toHaveLength(1);
    expect(fake.memberStatus(group.id, alice.id)).not.toBe("member");
    // She proves the demo wallet from her private chat's /verify: the request is approved.
    const answer = await say(dm, alice, "/verify");
    await proveWithLink(bot.verify, linkIn(String(answer.params.text), bot), demo);
    await bot.gates.settled();
    // The private confirmation, sent beside the gate's decision: counted before the re-checks.
    await fake.waitFor(
      (call: RecordedCall) =>
        call.ok &&
        call.method === "sendMessage" &&
        /Wallet verified/.test(String(call.params.text)),
      10_000,
    );
    expect(fake.memberStatus(group.id, alice.id)).toBe("member");
    expect(fake.pendingJoinRequests(group.id)).toEqual([]);

    // 3. Outage during the next day's re-check: she stays.
    sim.setFaults({ errorRates: { 503: 1 } });
    skew += 24 * HOUR + 60_000;
    const failuresBefore = (await bot.gates.stats()).failures;
    const toldBefore = toldAlice().length;
    await recheck(bot);
    sim.clearFaults();
    expect((await bot.gates.stats()).failures).toBeGreaterThan(failuresBefore);
    expect(fake.memberStatus(group.id, alice.id)).toBe("member");
    expect(toldAlice()).toHaveLength(toldBefore);

    // 4. Sold: told once, kept through the grace, then banned and unbanned (she may ask again).
    expect(sim.sellNfts(DEMO_WALLET.address, azuki)).toBeGreaterThan(0);
    skew += HOUR;
    await recheck(bot);
    expect(fake.memberStatus(group.id, alice.id)).toBe("member");
    expect(toldAlice()).toHaveLength(toldBefore + 1);
    expect(String(toldAlice().at(-1)?.params.text)).toMatch(/no longer pass/);
    skew += 12 * HOUR;
    await recheck(bot);
    expect(fake.memberStatus(group.id, alice.id)).toBe("member");
    expect(toldAlice()).toHaveLength(toldBefore + 1);
    skew += 12 * HOUR + 60_000;
    await recheck(bot);
    const ban = fake.sent.find((call) => call.method === "banChatMember");
    const unban = fake.sent.find((call) => call.method === "unbanChatMember");
    expect(ban?.params).toMatchObject({ chat_id: group.id, user_id: alice.id });
    expect(unban?.seq).toBeGreaterThan(ban?.seq ?? Number.POSITIVE_INFINITY);
    expect(fake.memberStatus(group.id, alice.id)).toBe("left");
    expect(toldAlice()).toHaveLength(toldBefore + 1);
  }, 30_000);
});
