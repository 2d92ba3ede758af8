/**
 * Issue 36's insights on every platform, through the whole bot (createBot on SQLite in a temp dir)
 * with the simulator over loopback: people prove wallets with /verify asked in a Discord server or
 * through a Telegram group's button (the page's challenge signed by viem local accounts, no
 * browser), and the community's managers ask /insights, /insights export and /dashboard on
 * Discord over the gateway, Discord over HTTP interactions, Telegram, and the console (the
 * embedded simulator's made-up community of its wallets).
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { generatePrivateKey, type PrivateKeyAccount, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ConsoleAdapter } from "../src/adapters/console/index.ts";
import { INTERACTIONS_PATH } from "../src/adapters/discord-http/endpoint.ts";
import { type Bot, createBot } from "../src/bot.ts";
import { parseConfig } from "../src/config.ts";
import { insightStoreOf } from "../src/insights/store.ts";
import { MIN_PEOPLE } from "../src/insights/types.ts";
import { silentLogger } from "../src/log.ts";
import { DEMO_WALLET, type Simulator } from "../src/simulator/index.ts";
import {
  type FakeDiscord,
  MEMBER_PERMISSIONS,
  PERMISSION,
  type RecordedRequest,
  startFakeDiscord,
} from "./fakes/discord/index.ts";
import { type DiscordBody as Body, discordText as textOf } from "./fakes/discord/text.ts";
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

const cleanups: (() => unknown)[] = [];
let sim: Simulator;

beforeAll(async () => {
  sim = await startTestSimulator({ apiKey: "insights-platforms" });
  cleanups.push(() => sim.close());
}, 30_000);

afterAll(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
}, 30_000);

/** A bot as an operator runs it, on its own data directory, HTTP host on a free loopback port. */
async function startBot(
  parts: Omit<Parameters<typeof worldEnv>[0], "sim" | "dataDir">,
  extra: Record<string, string> = {},
): Promise<Bot> {
  const dataDir = mkdtempSync(join(tmpdir(), "insights-platforms-"));
  cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
  const bot = await createBot(
    parseConfig(worldEnv({ sim, dataDir, ...parts }, { CHAINS: "ethereum", ...extra })),
    { logger: silentLogger() },
  );
  await bot.start();
  cleanups.push(() => bot.stop());
  return bot;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `read` until `done` holds of its value (the proofs' notices are not awaited by the page). */
async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, ms = 10_000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`gave up waiting; last: ${JSON.stringify(value)}`);
    await sleep(25);
  }
}

/** The members a bot's store counts in a community, by user id. */
async function membersOf(bot: Bot, platform: "discord" | "telegram", place: string) {
  const rows = await insightStoreOf(bot.store).members(platform, place);
  return rows.map((row) => row.userId).sort();
}

/** The link to the bot's page of `kind` in a reply. */
function linkIn(text: string, bot: Bot, kind: "verify" | "dashboard"): string {
  const url = new RegExp(`http://127\\.0\\.0\\.1:${bot.http.port}/${kind}/[\\w-]+`).exec(text)?.[0];
  if (!url) throw new Error(`no ${kind} link to the bot's page in: ${text}`);
  return url;
}

/** Opens a /dashboard link as a browser would, then asks the page's overview with its cookie. */
async function openDashboard(url: string): Promise<{ status: number; view: unknown }> {
  const page = await fetch(url);
  await page.text();
  const cookie = page.headers.get("set-cookie")?.split(";")[0];
  if (page.status !== 200 || !cookie) return { status: page.status, view: undefined };
  const view = await fetch(new URL("/dashboard/api/view", url), {
    headers: { cookie, "sec-fetch-site": "same-origin" },
  });
  return { status: view.status, view: await view.json() };
}

// Discord --------------------------------------------------------------------------------------

/** What a person read of a slash command's answer on Discord. */
interface DiscordAnswer {
  text: string;
  /** Seen by the invoker alone (flag 64 on the callback). */
  ephemeral: boolean;
  /** Files uploaded with the answer. */
  files: { name: string; text: string }[];
}

type SlashPayload = ReturnType<FakeDiscord["slashCommand"]>;

/**
 * Runs a slash command one way (the gateway, or a signed POST to the bot's endpoint) and resolves
 * to what the person saw: the callback, or the deferred answer's edit of the original.
 */
async function discordAsk(
  fake: FakeDiscord,
  endpoint: string | undefined,
  payload: SlashPayload,
): Promise<DiscordAnswer> {
  let callback: RecordedRequest;
  if (endpoint === undefined) callback = await fake.waitForCallback(fake.sendInteraction(payload));
  else {
    const delivery = await fake.postInteraction(endpoint, payload);
    expect(delivery.status).toBe(200);
    callback = delivery.callback as RecordedRequest;
  }
  const body = callback.body as Body & { data?: Body };
  const ephemeral = ((body.data?.flags ?? 0) & 64) === 64;
  // Type 5: deferred, the answer comes as the original's edit.
  const final = body.type === 5 ? await fake.waitForOriginalEdit(payload, 15_000) : callback;
  return {
    text: textOf(final),
    ephemeral,
    files: final.files.map((file) => ({ name: file.filename, text: file.data.toString("utf8") })),
  };
}

const MANAGER = { id: "300000000000000900", username: "manager", globalName: "Manager" };
/** A manager of the server: Manage Server (managing a channel is not managing the community). */
const asManager = {
  user: MANAGER,
  memberPermissions: MEMBER_PERMISSIONS | PERMISSION.ManageGuild,
};

/** Six people of the server, each with a wallet of their own key. */
function discordPeople() {
  return Array.from({ length: 6 }, (_, i) => ({
    user: {
      id: `30000000000000010${i}`,
      username: `member${i + 1}`,
      globalName: `Member ${i + 1}`,
    },
    account: privateKeyToAccount(generatePrivateKey()),
  }));
}

/** The i-th person's account on Discord. */
function aMember(people: ReturnType<typeof discordPeople>, i: number) {
  const person = people[i];
  if (!person) throw new Error(`no person ${i}`);
  return person.user;
}

/**
 * Each person asks /verify in the server's channel and proves their wallet on the page: the link
 * carries the server, so each becomes one of its members (told to insights after the page's
 * Verified, so it is waited for).
 */
async function proveInServer(
  fake: FakeDiscord,
  endpoint: string | undefined,
  bot: Bot,
  people: { user: { id: string }; account: PrivateKeyAccount }[],
) {
  for (const person of people) {
    const answer = await discordAsk(
      fake,
      endpoint,
      fake.slashCommand("verify", {}, { user: person.user }),
    );
    expect(answer.ephemeral).toBe(true);
    await proveWithLink(bot.verify, linkIn(answer.text, bot, "verify"), person.account);
  }
  const ids = people.map((p) => p.user.id).sort();
  expect(
    await until(
      () => membersOf(bot, "discord", fake.guildId),
      (m) => m.length >= ids.length,
    ),
  ).toEqual(ids);
}

describe("insights on Discord over the gateway", () => {
  it("members who proved in the server are counted; a manager sees them, exports them (not the private one), and gets the page's link", async () => {
    const fake = await startFakeDiscord();
    cleanups.push(() => fake.close());
    const bot = await startBot({
      discord: { token: fake.token, apiBase: fake.apiBase, guildId: fake.guildId },
    });
    const ask = (name: string, options = {}, context = {}) =>
      discordAsk(fake, undefined, fake.slashCommand(name, options, context));
    const people = discordPeople();
    await proveInServer(fake, undefined, bot, people);
    // A /verify asked in a DM names no server: that person is nobody's member.
    const loner = { id: "300000000000000800", username: "loner" };
    const dm = await ask("verify", {}, { user: loner, guildId: null });
    await proveWithLink(bot.verify, linkIn(dm.text, bot, "verify"));

    // The sixth keeps their wallets private: counted, never listed.
    const [hidden] = people.slice(-1);
    if (!hidden) throw new Error("no sixth person");
    const made = await ask("wallets", { visibility: "private" }, { user: hidden.user });
    expect(made.ephemeral).toBe(true);
    expect(made.text).toMatch(/Your wallets are now private/);

    // A member is refused, privately, with not_manager; so is one who manages only channels.
    const refused = await ask("insights", {}, { user: aMember(people, 0) });
    expect(refused.ephemeral).toBe(true);
    expect(refused.text).toMatch(/Only people who can manage this server see its insights/);
    const channelManager = await ask(
      "insights",
      {},
      {
        user: aMember(people, 1),
        memberPermissions: MEMBER_PERMISSIONS | PERMISSION.ManageChannels,
      },
    );
    expect(channelManager.text).toMatch(/Only people who can manage this server/);
    expect(await bot.metrics.registry.metrics()).toMatch(
      /bot_commands_total\{[^}]*command="insights"[^}]*outcome="user_error",code="not_manager"\} 2/,
    );

    // The manager's /insights: six members, one private, and the behavior table. The wallets are
    // new to the data service, which counts them as of no known behavior.
    const shown = await ask("insights", {}, asManager);
    // Every insights answer is for the manager's eyes only.
    expect(shown.ephemeral).toBe(true);
    expect(shown.text).toContain(
      "6 members with 6 proved wallets on Ethereum (1 keep their wallets private).",
    );
    expect(shown.text).toMatch(/behavior\s+wallets/);
    // Made-up wallets, unknown to the simulator: no behavior, said so (never an "unspecified" row).
    expect(shown.text).toMatch(/knows no behavior of your members' 6 wallets/);
    expect(shown.text).not.toMatch(/Unspecified/);

    // The export: a CSV, for the manager's eyes only, with the five shared members and their
    // wallets; neither the private member nor the DM's prover.
    const exported = await ask("insights", { action: "export" }, asManager);
    expect(exported.ephemeral).toBe(true);
    expect(exported.text).toMatch(/5 listed/);
    const [csv] = exported.files;
    expect(csv?.name).toMatch(/^members-ethereum.*\.csv$/);
    const lines = csv?.text.trim().split(/\r?\n/) ?? [];
    expect(lines[0]).toMatch(/^user id,name,wallets,behavior,/);
    expect(lines).toHaveLength(1 + 5);
    for (const person of people.slice(0, 5)) {
      const line = lines.find((l) => l.includes(person.user.id));
      expect(line).toContain(person.user.username);
      expect(line).toContain(person.account.address);
    }
    expect(csv?.text).not.toContain(hidden.user.id);
    expect(csv?.text).not.toContain(hidden.account.address);
    expect(csv?.text.toLowerCase()).not.toContain(hidden.account.address.toLowerCase());
    expect(csv?.text).not.toContain(loner.id);

    // /dashboard: a link for the manager alone, which opens the community's page once.
    const dashboard = await ask("dashboard", {}, asManager);
    expect(dashboard.ephemeral).toBe(true);
    const url = linkIn(dashboard.text, bot, "dashboard");
    const opened = await openDashboard(url);
    expect(opened.status).toBe(200);
    expect(opened.view).toMatchObject({
      community: { platform: "discord", id: fake.guildId },
      members: 6,
      privateMembers: 1,
      belowFloor: false,
    });
    expect((await fetch(url)).status).toBe(410);
    const refusedPage = await ask("dashboard", {}, { user: aMember(people, 1) });
    expect(refusedPage.text).toMatch(/Only people who can manage this server/);
  }, 40_000);
});

describe("insights on Discord over HTTP interactions", () => {
  it("/insights and /dashboard answer a manager through the bot's own signed endpoint", async () => {
    const fake = await startFakeDiscord();
    cleanups.push(() => fake.close());
    const bot = await startBot(
      { discord: { token: fake.token, apiBase: fake.apiBase, guildId: fake.guildId } },
      { DISCORD_PUBLIC_KEY: fake.publicKey },
    );
    const endpoint = `http://127.0.0.1:${bot.http.port}${INTERACTIONS_PATH}`;
    const people = discordPeople().slice(0, 5);
    await proveInServer(fake, endpoint, bot, people);
    const shown = await discordAsk(fake, endpoint, fake.slashCommand("insights", {}, asManager));
    expect(shown.text).toContain("5 members with 5 proved wallets on Ethereum.");
    expect(shown.text).toMatch(/knows no behavior of your members' 5 wallets/);
    const spend = await discordAsk(
      fake,
      endpoint,
      fake.slashCommand("insights", { action: "spend" }, asManager),
    );
    expect(spend.text).toMatch(/what your members spend/);
    const dashboard = await discordAsk(
      fake,
      endpoint,
      fake.slashCommand("dashboard", {}, asManager),
    );
    expect(dashboard.ephemeral).toBe(true);
    const opened = await openDashboard(linkIn(dashboard.text, bot, "dashboard"));
    expect(opened.view).toMatchObject({ members: 5, wallets: 5, belowFloor: false });
    const refused = await discordAsk(
      fake,
      endpoint,
      fake.slashCommand("insights", {}, { user: aMember(people, 0) }),
    );
    expect(refused.ephemeral).toBe(true);
    expect(refused.text).toMatch(/Only people who can manage this server see its insights/);
  }, 30_000);
});

// Telegram -------------------------------------------------------------------------------------

describe("insights on Telegram", () => {
  it("the group's /verify button names the group; a proof through it counts only when Telegram says they are in it; the admin's /insights and its export in private", async () => {
    const fake: FakeTelegram = await startFakeTelegram();
    cleanups.push(() => fake.close());
    const group = supergroupChat(-1001234500036, "Insight holders");
    fake.addChat(group);
    const admin = user(7100, "Ada", "ada");
    fake.setMemberStatus(group.id, admin.id, "creator");
    const bot = await startBot({ telegram: { token: fake.token, apiRoot: fake.apiRoot } });
    const say = async (chat: { id: number }, from: ReturnType<typeof user>, text: string) => {
      const before = fake.sent.length;
      fake.pushUpdate(fake.message(chat as never, from, text));
      return fake.waitFor(
        (call: RecordedCall) =>
          call.seq > before &&
          call.ok &&
          (call.method === "sendMessage" || call.method === "sendDocument") &&
          String(call.params.chat_id) === String(chat.id),
        15_000,
      );
    };
    // The group's /verify: a button to the private chat, whose start payload names the group.
    const outsider = user(7199, "Otto", "otto");
    const asked = await say(group, outsider, "/verify");
    expect(String(asked.params.text)).toMatch(/private chat/);
    const payload = /start=([\w-]+)/.exec(JSON.stringify(asked.params.reply_markup ?? {}))?.[1];
    expect(payload).toBe(`verify_ethereum_${group.id}`);
    /** Pressing the button (the same for everyone) sends `/start <payload>`; the proof follows. */
    const proveThroughButton = async (person: ReturnType<typeof user>) => {
      const answer = await say(privateChat(person), person, `/start ${payload}`);
      return proveWithLink(bot.verify, linkIn(String(answer.params.text), bot, "verify"));
    };

    // Someone not in the group (anyone can type the payload): Telegram says so, not counted.
    fake.setMemberStatus(group.id, outsider.id, "left");
    const outsiderWallet = await proveThroughButton(outsider);
    await fake
      .waitFor(
        (call) =>
          call.method === "getChatMember" &&
          String(call.params.chat_id) === String(group.id) &&
          Number(call.params.user_id) === outsider.id,
        10_000,
      )
      .catch(() => {
        throw new Error(
          "after a proof through the group's button, Telegram was never asked (getChatMember) whether the person is in the group",
        );
      });
    // Five people in the group prove through the same button: counted.
    const members = Array.from({ length: 5 }, (_, i) => user(7101 + i, `Member${i + 1}`));
    const wallets: string[] = [];
    for (const member of members) wallets.push((await proveThroughButton(member)).address);
    const ids = members.map((m) => String(m.id)).sort();
    expect(
      await until(
        () => membersOf(bot, "telegram", String(group.id)),
        (m) => m.length >= 5,
      ),
    ).toEqual(ids);
    expect(await membersOf(bot, "telegram", String(group.id))).not.toContain(String(outsider.id));

    // The admin's /insights in the group: for the admin's eyes, in their private chat (the
    // group gets a note, nothing of the figures).
    const insightsAsked = fake.sent.length;
    const noted = await say(group, admin, "/insights");
    expect(String(noted.params.text)).toMatch(/to you privately/);
    expect(String(noted.params.text)).not.toMatch(/members with/);
    const shown = await fake.waitFor(
      (call) =>
        call.seq > insightsAsked &&
        call.ok &&
        String(call.params.chat_id) === String(admin.id) &&
        /members with/.test(String(call.params.text ?? call.params.caption ?? "")),
      10_000,
    );
    const text = String(shown.params.text ?? shown.params.caption);
    expect(text).toContain("5 members with 5 proved wallets on Ethereum.");
    // The behavior table, in the same message or the next one to the admin.
    const table = fake.sent
      .filter((call) => call.seq >= shown.seq && String(call.params.chat_id) === String(admin.id))
      .map((call) => String(call.params.text ?? call.params.caption ?? ""))
      .join("\n");
    expect(table).toMatch(/knows no behavior of your members(&#39;|'|’)? 5 wallets/);
    // A member who is no admin is refused.
    const refused = await say(group, members[0] as ReturnType<typeof user>, "/insights");
    expect(String(refused.params.text)).toMatch(/Only people who can manage this group/);

    // The export goes to the admin's private chat (the group gets a note), as a CSV document.
    const before = fake.sent.length;
    const note = await say(group, admin, "/insights export");
    expect(String(note.params.text)).toMatch(/sent the member list to you privately/);
    const doc = await fake.waitFor(
      (call) => call.seq > before && call.ok && call.method === "sendDocument",
      10_000,
    );
    expect(String(doc.params.chat_id)).toBe(String(admin.id));
    const file = Object.values(doc.files)[0];
    expect(file?.filename).toMatch(/^members-ethereum.*\.csv$/);
    const csv = file?.data.toString("utf8") ?? "";
    const rows = csv.trim().split(/\r?\n/);
    expect(rows).toHaveLength(1 + 5);
    members.forEach((member, i) => {
      const row = rows.find((line) => line.startsWith(`${member.id},`));
      expect(row).toContain(`Member${i + 1}`);
      expect(row).toContain(wallets[i]);
    });
    expect(csv).not.toContain(String(outsider.id));
    expect(csv.toLowerCase()).not.toContain(outsiderWallet.address.toLowerCase());
    // Nothing of it was posted in the group.
    expect(
      fake.sent.some(
        (call) =>
          call.method === "sendDocument" && String(call.params.chat_id) === String(group.id),
      ),
    ).toBe(false);
  }, 40_000);
});

// The console ----------------------------------------------------------------------------------

describe("insights at the console, on the embedded simulator's made-up community", () => {
  it("every /insights view, the export and /dashboard answer with data, marked simulated", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "insights-console-"));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const output = new PassThrough();
    let printed = "";
    output.on("data", (chunk) => {
      printed += String(chunk);
    });
    const input = new PassThrough();
    // No API_BASE_URL: the embedded simulator, whose data (and the console's members) are made up.
    const bot = await createBot(
      parseConfig({
        DATA_DIR: dataDir,
        CHAINS: "ethereum",
        SIMULATOR_MINT_INTERVAL_MS: "0",
        // The background reads of 300 wallets in one round, unhindered by the upstream budget.
        INSIGHTS_CALLS_PER_MINUTE: "100000",
        API_BUDGET_PER_SECOND: "100000",
        API_BUDGET_BURST: "100000",
      }),
      { logger: silentLogger(), input, output },
    );
    await bot.start();
    cleanups.push(async () => {
      input.end();
      await bot.stop();
    });
    const chat = bot.adapters[0] as ConsoleAdapter;
    expect(chat.platform).toBe("console");
    // /healthz says what the background does: its pace (3 calls a wallet) and failures.
    expect((await bot.health()).insights).toEqual({ failures: 0, walletsPerMinute: 33_333 });
    const run = async (line: string) => {
      const from = printed.length;
      await chat.handleLine(line);
      return printed.slice(from);
    };

    const shown = await run("/insights");
    expect(shown).toMatch(
      /300 members with 300 proved wallets on Ethereum \(15 keep their wallets private\)\./,
    );
    expect(shown).toContain("A simulated community: 300 of the simulator's wallets as members.");
    expect(shown).toMatch(/simulated/i);
    expect(shown).toMatch(/behavior\s+wallets/);
    // Its behaviors: each row a share of the 300 wallets, largest first.
    const rows = [...shown.matchAll(/^([A-Z][a-z ]+?)\s+(\d+)\s+(\d+)%/gm)];
    expect(rows.length).toBeGreaterThan(1);
    const counts = rows.map((row) => Number(row[2]));
    expect(counts.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(300);
    expect(counts).toEqual([...counts].sort((a, b) => b - a));

    // The background reads (one round of 900 calls at most) read every member's wallet.
    const held = await until(
      () => run("/insights held"),
      (text) => /read for all 300 wallets/.test(text),
      30_000,
    );
    expect(held).toMatch(/what else your members hold/);
    // The most held collection: at least MIN_PEOPLE members, with its full address.
    const heldRows = [...held.matchAll(/^(\S.*?)\s{2,}(\d[\d,]*)\s+0x[0-9a-fA-F]+…?$/gm)];
    expect(heldRows.length).toBeGreaterThan(1);
    const heldCounts = heldRows.map((row) => Number(row[2]?.replace(/,/g, "")));
    expect(heldCounts[0]).toBeGreaterThanOrEqual(MIN_PEOPLE);
    expect(heldCounts[0]).toBeLessThanOrEqual(300);
    expect(heldCounts).toEqual([...heldCounts].sort((a, b) => b - a));

    const spend = await run("/insights spend");
    expect(spend).toMatch(/what your members spend/);
    expect(spend).toMatch(/volume \(ETH\)\s+[\d.,]+\s+[\d.,]+\s+[\d.,]+/);
    expect(spend).toMatch(/From the 300 members read so far/);
    expect(spend).toMatch(/Bought an NFT within 30 days: \d+%, 90 days: \d+%, 365 days: \d+%/);

    const trend = await run("/insights trend");
    expect(trend).toMatch(/the last 30 days/);
    expect(trend).toMatch(/\d{4}-\d{2}-\d{2}\s+300\s+300/);

    const overlap = await run("/insights overlap azuki");
    expect(overlap).toMatch(/Members holding Azuki/);
    expect(overlap).toMatch(/(\d+|Fewer than 5) of your 300 members hold Azuki\./);
    expect(overlap).toMatch(/From the holdings of 300 of 300 members' wallets read so far\./);

    const set = await run("/insights collection azuki");
    expect(set).toMatch(/Your community's collection on Ethereum is now Azuki/);
    // Now the overview compares the members with Azuki's owners.
    const compared = await run("/insights");
    expect(compared).toMatch(/Azuki %/);
    expect(compared).toMatch(/of your members' wallets, \d+% of Azuki's owners/);

    const exported = await run("/insights export");
    expect(exported).toMatch(/285 listed/);
    const path = /^File: (.+\.csv) \((\d+) bytes\)$/m.exec(exported)?.[1];
    expect(path).toMatch(/\/members-simulated-ethereum[\d-]*\.csv$/);
    const csv = readFileSync(path ?? "", "utf8")
      .trim()
      .split(/\r?\n/);
    expect(csv).toHaveLength(1 + 285);
    expect(csv[1]).toMatch(/^simulated-1,Simulated member 1,0x[0-9a-fA-F]{40},/);
    // Every 20th keeps their wallets private: not listed.
    expect(csv.some((line) => line.startsWith("simulated-20,"))).toBe(false);

    const dashboard = await run("/dashboard");
    const url = linkIn(dashboard, bot, "dashboard");
    const opened = await openDashboard(url);
    expect(opened.view).toMatchObject({ members: 300, privateMembers: 15, belowFloor: false });
    expect((opened.view as { simulated?: string }).simulated).toMatch(/simulated/i);

    // A real (stored) community of fewer than five: the floor, with no figure. Four people
    // proved wallets from a Discord server nobody runs here (stored as a proof from it stores them).
    const members = insightStoreOf(bot.store);
    for (let i = 0; i < 4; i++) {
      await bot.store.wallets.addProved({
        platform: "discord",
        userId: `few-${i}`,
        address: DEMO_WALLET.address.toLowerCase().replace(/.$/, String(i)),
        chain: "ethereum",
        label: "",
        message: "m",
        signature: "0x",
        provedAt: Date.now(),
      });
      await members.addMember("discord", "few-guild", `few-${i}`, `Few ${i}`, Date.now());
    }
    // The bot's own service, through its runtime and its page: a manager of that server asks.
    const manager = {
      id: "few",
      platform: "discord" as const,
      user: { id: "few-manager", name: "manager" },
      chat: { id: "few-channel", kind: "group" as const },
      guild: { id: "few-guild" },
      canManageChannel: async () => true,
    };
    const reply = await bot.runtime.runText(manager, "insights", "");
    expect(reply.text).toContain("4 members with 4 proved wallets on Ethereum.");
    expect(reply.text).toContain(
      "Insights show once 5 members have proved a wallet here, so no one can be singled out.",
    );
    expect(reply.table).toBeUndefined();
    const spendFew = await bot.runtime.runText(manager, "insights", "spend");
    expect(spendFew.text).toContain("Insights show once 5 members");
    expect(spendFew.table).toBeUndefined();
    const page = await bot.runtime.runText(manager, "dashboard", "");
    const fewView = (await openDashboard(linkIn(page.links?.[0]?.url ?? "", bot, "dashboard")))
      .view;
    expect(fewView).toMatchObject({
      members: 4,
      belowFloor: true,
      behaviors: [],
      spend: [],
      held: [],
    });
    // A stored community is no simulated one, though the bot runs on the simulator.
    expect(fewView).not.toHaveProperty("simulated");
    // The four are counted but not singled out anywhere: no figure of theirs is in the view.
    expect(JSON.stringify(fewView)).not.toMatch(/BEHAVIOR_/);
  }, 60_000);
});
