/**
 * Scheduled digests: /digest add, list and remove (permissions, bad input, the cap, the chain),
 * and the scheduler over the simulator with an injected clock: one post per slot, its content,
 * a slot before the digest was added, failures and retries.
 */

import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { RenderableReply } from "../src/core/reply.ts";
import { digestReply } from "../src/digests/post.ts";
import { DigestScheduler, type DigestSchedulerSettings } from "../src/digests/scheduler.ts";
import { digestStoreOf } from "../src/digests/store.ts";
import { silentLogger } from "../src/log.ts";
import type { ChatSender } from "../src/outbound/types.ts";
import { renderConsole } from "../src/render/console.ts";
import { capturingLogger, type RuntimeSetup, startRuntime } from "./helpers.ts";
import { outboundOf } from "./outbound-helpers.ts";

const at = (iso: string) => Date.parse(iso);
/** Monday 23 Nov 2026, 08:00 in Berlin (07:00 UTC). */
const MONDAY_0800_BERLIN = at("2026-11-23T07:00:00Z");

let t: RuntimeSetup;
let clock = MONDAY_0800_BERLIN;

beforeAll(async () => {
  t = await startRuntime({ DIGESTS_PER_CHAT: "3", CHAINS: "ethereum,base,polygon" }, {}, [], {
    now: () => new Date(clock),
  });
});
afterAll(async () => {
  await t?.close();
});
beforeEach(() => {
  clock = MONDAY_0800_BERLIN;
  // A chat's pause is the chat's, not its digests': a test's refusal must not outlive it.
  t.db.exec("DELETE FROM digests; DELETE FROM chat_pauses");
});

const say = async (line: string, who?: Parameters<RuntimeSetup["say"]>[1]) =>
  t.text(await t.say(line, who));

describe("/digest", () => {
  it("adds daily (default UTC) and weekly (a named zone) digests, lists them, removes one", async () => {
    expect(await say("/digest add daily 09:00 top volume 1d")).toMatch(
      /Digest \d+ added(?: on Ethereum)?: daily at 09:00 UTC: top collections by sales volume over 1 day, with the number of new collections minted in the last 24 hours\. Next post: /,
    );
    expect(await say("/digest add weekly mon 9:30 europe/berlin top sales 7d")).toMatch(
      /Digest \d+ added(?: on Ethereum)?: weekly on Monday at 09:30 Europe\/Berlin: top collections by number of sales over 7 days/,
    );
    expect(await say("/digest add daily 09:00 Europe/Berlin")).toContain(
      "Next post: 23 Nov 2026 09:00 Europe/Berlin (in 1 hour)",
    );
    const [daily, weekly, berlin] = await digestStoreOf(t.store).forChat("telegram", "chat-1");
    await say(`/digest remove ${berlin?.id}`);
    expect(daily).toMatchObject({
      cadence: "daily",
      time: "09:00",
      zone: "UTC",
      chain: "ethereum",
    });
    expect(weekly).toMatchObject({ cadence: "weekly", weekday: 1, zone: "Europe/Berlin" });
    const list = await say("/digest list");
    expect(list).toContain(`Digest ${daily?.id}`);
    expect(list).toContain("weekly on Monday at 09:30 Europe/Berlin");
    expect(await say("/digest")).toContain("Scheduled digests");
    expect(await say(`/digest remove ${daily?.id}`)).toContain(`Digest ${daily?.id} removed`);
    expect(await say(`/digest remove ${daily?.id}`)).toContain(`has no digest ${daily?.id}`);
    // Another chat's digest is not this chat's to remove.
    expect(
      await say(`/digest remove ${weekly?.id}`, { chat: { id: "chat-2", kind: "group" } }),
    ).toContain("has no digest");
    expect((await digestStoreOf(t.store).all()).map((d) => d.id)).toEqual([weekly?.id]);
    expect(await say("/digest list", { chat: { id: "chat-2", kind: "group" } })).toContain(
      "no scheduled digest",
    );
  });

  it("takes a chain (chain:<id>), default the first configured one", async () => {
    expect(await say("/digest add daily 09:00 top sales 7d chain:base")).toMatch(
      /Digest \d+ added on Base: daily at 09:00 UTC/,
    );
    await say("/digest add daily 10:00");
    expect((await digestStoreOf(t.store).all()).map((d) => d.chain)).toEqual(["base", "ethereum"]);
    expect(await say("/digest list")).toContain("on Base");
  });

  it("defaults: top volume 1d when no metric or period is given", async () => {
    await say("/digest add daily 18:00");
    expect((await digestStoreOf(t.store).all())[0]).toMatchObject({
      metric: "volume",
      period: "1d",
    });
  });

  it("only people who can manage the channel add or remove; anyone lists", async () => {
    await say("/digest add daily 09:00");
    const [digest] = await digestStoreOf(t.store).all();
    const member = { canManageChannel: async () => false };
    expect(await say("/digest add daily 10:00", member)).toContain(
      "Only people who can manage this channel may add or remove digests",
    );
    expect(await say(`/digest remove ${digest?.id}`, member)).toContain(
      "Only people who can manage",
    );
    expect(await say("/digest list", member)).toContain(`Digest ${digest?.id}`);
    expect(await digestStoreOf(t.store).all()).toHaveLength(1);
  });

  it("says what is wrong with a bad time, day, zone, metric, period or chain, and adds nothing", async () => {
    const cases: [string, RegExp][] = [
      ["/digest add daily 25:00", /"25:00" is not a time of day: use HH:MM/],
      ["/digest add daily", /Say at what time/],
      ["/digest add hourly 09:00", /"hourly" is not a schedule: say daily or weekly/],
      ["/digest add", /Say when: daily or weekly/],
      ["/digest add weekly funday 09:00", /"funday" is not a day of the week/],
      ["/digest add daily 09:00 Mars/Base", /"Mars\/Base" is not a time zone I know/],
      ["/digest add daily 09:00 UTC top likes 1d", /metric: use one of volume, sales, max_price/],
      ["/digest add daily 09:00 UTC top volume 2d", /period: use one of 1d, 7d, 30d, 365d/],
      ["/digest add daily 09:00 top volume 1d extra", /I did not expect "extra"/],
      ["/digest add daily 09:00 chain:nosuch", /There is no chain "nosuch" here/],
      ["/digest remove", /Say which digest/],
      ["/digest remove abc", /"abc" is not a digest number/],
      [
        "/digest frobnicate",
        // The chain option is read first where several chains are served: the action then says.
        /"frobnicate" is not something \/digest does: use add, list or remove|action: use one of list, add, remove|I did not understand "frobnicate": it is not one of chain \(.*\) or action \(list, add, remove\)/,
      ],
    ];
    for (const [line, message] of cases) expect(await say(line), line).toMatch(message);
    expect(await digestStoreOf(t.store).all()).toEqual([]);
  });

  it("a channel has at most DIGESTS_PER_CHAT digests", async () => {
    for (let i = 0; i < 3; i++) expect(await say(`/digest add daily 0${i}:00`)).toContain("added");
    expect(await say("/digest add daily 04:00")).toContain(
      "already has 3 digests, the most it may have",
    );
    expect(await digestStoreOf(t.store).all()).toHaveLength(3);
    // Another channel has its own.
    expect(
      await say("/digest add daily 04:00", { chat: { id: "chat-2", kind: "group" } }),
    ).toContain("added");
  });
});

/** A platform sender that keeps what it was given, or fails as told. */
function fakeSender(): ChatSender & {
  sent: { chatId: string; text: string; key?: string }[];
  fail: Error | undefined;
} {
  const sender = {
    sent: [] as { chatId: string; text: string; key?: string }[],
    fail: undefined as Error | undefined,
    maxInFlight: 1,
    async sendToChat(chatId: string, reply: RenderableReply, key?: string) {
      if (sender.fail) throw sender.fail;
      sender.sent.push({ chatId, text: renderConsole(reply).text, ...(key ? { key } : {}) });
    },
    classifySendError(error: unknown) {
      const moved = /moved:(\S+)/.exec(String(error))?.[1];
      if (moved) return { kind: "moved" as const, newChatId: moved };
      return /forbidden/.test(String(error))
        ? { kind: "permanent" as const, reason: "forbidden" }
        : { kind: "transient" as const, reason: String(error) };
    },
  };
  return sender;
}

function scheduler(sender: ChatSender, settings: Partial<DigestSchedulerSettings> = {}) {
  return new DigestScheduler({
    digests: digestStoreOf(t.store),
    apis: new Map([["ethereum", t.api]]),
    chains: [{ id: "ethereum", name: "Ethereum", symbol: "ETH" }],
    outbound: outboundOf(
      t.store,
      { telegram: sender },
      {
        materialize: (platform, chatId, reply) =>
          t.runtime.materialize(reply, { platform, chat: { id: chatId, kind: "group" } }),
        now: () => clock,
      },
    ),
    isLeader: () => true,
    holder: "test",
    logger: silentLogger(),
    settings: { tickMs: 1000, lateAfterMs: 300_000, maxAttempts: 3, ...settings },
    now: () => clock,
  });
}

describe("the digest scheduler", () => {
  it("posts at the slot, once: the top list with its chart and the day's new-collection count", async () => {
    await say("/digest add daily 09:00 Europe/Berlin top sales 7d");
    const sender = fakeSender();
    const s = scheduler(sender);
    expect(await s.tick()).toBe(0);
    clock = at("2026-11-23T07:59:59Z");
    expect(await s.tick()).toBe(0);
    clock = at("2026-11-23T08:00:05Z");
    expect(await s.tick()).toBe(1);
    expect(await s.tick()).toBe(0);
    clock = at("2026-11-23T20:00:00Z");
    expect(await s.tick()).toBe(0);
    expect(sender.sent).toHaveLength(1);
    const post = sender.sent[0]?.text ?? "";
    expect(post).toContain("Daily digest for 23 Nov 2026");
    expect(post).not.toContain("posted late");
    expect(post).toMatch(/New collections minted in the last 24 hours: [\d,]+\./);
    expect(post).toContain("Top collections by number of sales, last 7 days");
    expect(post).toMatch(/\n\s*1\s/);
    expect(sender.sent[0]?.chatId).toBe("chat-1");
    // The next day's slot is a post of its own.
    clock = at("2026-11-24T08:00:00Z");
    expect(await s.tick()).toBe(1);
    expect(sender.sent[1]?.text).toContain("Daily digest for 24 Nov 2026");
    expect(sender.sent[1]?.key).not.toBe(sender.sent[0]?.key);
  });

  it("counts the NFT contracts minted in the 24 hours before the slot (blockTimestampGt)", async () => {
    // 09:01 Berlin: a query no earlier test's answer is cached for.
    await say("/digest add daily 09:01 Europe/Berlin");
    clock = at("2026-11-23T08:01:00Z");
    const sender = fakeSender();
    const s = scheduler(sender);
    expect(await s.tick()).toBe(1);
    const count = (text: string) =>
      Number(/in the last 24 hours: ([\d,]+)\./.exec(text)?.[1]?.replaceAll(",", ""));
    const before = count(sender.sent[0]?.text ?? "");
    // Six mints within the next day's window (fungible tokens are no collections), two after it.
    const nfts = t.sim
      .mintDated(at("2026-11-23T20:00:00Z"), 6)
      .filter((m) => !m.types.includes("TYPE_ERC20")).length;
    t.sim.mintDated(at("2026-11-24T09:00:00Z"), 2);
    clock = at("2026-11-24T08:01:10Z");
    const requests = t.sim.requests.length;
    expect(await s.tick()).toBe(1);
    expect(nfts).toBeGreaterThan(0);
    expect(count(sender.sent[1]?.text ?? "")).toBe(before + nfts);
    const contracts = t.sim.requests.slice(requests).filter((r) => r.path.includes("/contracts"));
    expect(contracts.length).toBeGreaterThan(0);
    expect(contracts[0]?.query.blockTimestampGt).toBe("2026-11-23T08:01:00.000Z");
  });

  it("a slot posted well after its time by a process that was running then is not called late", async () => {
    await say("/digest add daily 09:00 Europe/Berlin");
    const sender = fakeSender();
    const s = scheduler(sender); // running since 08:00 Berlin
    clock = at("2026-11-23T08:20:00Z"); // busy or without the lease until 09:20
    expect(await s.tick()).toBe(1);
    expect(sender.sent[0]?.text).toContain("Daily digest for 23 Nov 2026");
    expect(sender.sent[0]?.text).not.toContain("posted late");
  });

  it("a digest added after today's slot first posts at the next one", async () => {
    clock = at("2026-11-23T10:00:00Z");
    await say("/digest add daily 09:00 Europe/Berlin");
    const sender = fakeSender();
    expect(await scheduler(sender).tick()).toBe(0);
    clock = at("2026-11-24T08:00:00Z");
    expect(await scheduler(sender).tick()).toBe(1);
  });

  it("a slot missed while down is posted once, late, with its date: only the most recent one", async () => {
    await say("/digest add daily 09:00 Europe/Berlin");
    // Down from Monday 08:00 to Wednesday 10:00 Berlin: Monday's, Tuesday's and Wednesday's slots.
    clock = at("2026-11-25T09:00:00Z");
    const sender = fakeSender();
    expect(await scheduler(sender).tick()).toBe(1);
    expect(await scheduler(sender).tick()).toBe(0);
    expect(sender.sent.map((p) => p.text.split("\n")[0])).toEqual([
      expect.stringContaining(
        "Daily digest for 25 Nov 2026 (posted late: the bot was down at 09:00)",
      ),
    ]);
  });

  it("a failed send is retried after a wait and posts once; a refusing chat pauses the digest", async () => {
    await say("/digest add daily 09:00 Europe/Berlin");
    const [digest] = await digestStoreOf(t.store).all();
    clock = at("2026-11-23T08:00:00Z");
    const sender = fakeSender();
    const s = scheduler(sender);
    sender.fail = new Error("socket hang up");
    expect(await s.tick()).toBe(0);
    expect(await digestStoreOf(t.store).runs(digest?.id ?? 0)).toEqual([
      expect.objectContaining({
        status: "sending",
        attempts: 1,
        lastError: expect.stringContaining("socket"),
      }),
    ]);
    sender.fail = undefined;
    expect(await s.tick()).toBe(0); // waiting
    clock += 60_000;
    expect(await s.tick()).toBe(1);
    // A retry is not "late": the bot was up.
    expect(sender.sent[0]?.text).not.toContain("posted late");
    expect(await s.tick()).toBe(0);
    // Next day the chat refuses: the slot is given up, not retried.
    clock = at("2026-11-24T08:00:00Z");
    sender.fail = new Error("forbidden");
    expect(await s.tick()).toBe(0);
    clock += 3_600_000;
    expect(await s.tick()).toBe(0);
    expect((await digestStoreOf(t.store).all())[0]).toMatchObject({ pauseReason: "forbidden" });
  });

  it("forgets a removed digest's settled slot, so what it remembers follows the digests there are", async () => {
    await say("/digest add daily 09:00 Europe/Berlin");
    const s = scheduler(fakeSender());
    clock = at("2026-11-23T08:00:05Z");
    expect(await s.tick()).toBe(1);
    expect(s.remembered).toBe(1);
    const [digest] = await digestStoreOf(t.store).all();
    await say(`/digest remove ${digest?.id}`);
    await s.tick();
    expect(s.remembered).toBe(0);
  });

  it("a chat that refuses the bot pauses its digests: not attempted, no failure logged each day; resumed, it posts", async () => {
    await say("/digest add daily 09:00 Europe/Berlin");
    await say("/digest add daily 18:00 Europe/Berlin");
    clock = at("2026-11-23T08:00:00Z");
    const sender = fakeSender();
    const { logger, lines } = capturingLogger();
    const s = new DigestScheduler({
      ...(
        scheduler(sender) as unknown as { deps: ConstructorParameters<typeof DigestScheduler>[0] }
      ).deps,
      logger,
    });
    sender.fail = new Error("forbidden");
    let tries = 0;
    const send = sender.sendToChat.bind(sender);
    sender.sendToChat = (...args) => {
      tries++;
      return send(...args);
    };
    expect(await s.tick()).toBe(0);
    expect(tries).toBe(1);
    const paused = await digestStoreOf(t.store).forChat("telegram", "chat-1");
    expect(paused.map((d) => d.pauseReason)).toEqual(["forbidden", "forbidden"]);
    const logged = lines.length;
    // A week of ticks: nothing tried, nothing logged.
    for (let day = 0; day < 7; day++) {
      clock += 12 * 3_600_000;
      await s.tick();
      clock += 12 * 3_600_000;
      await s.tick();
    }
    expect(tries).toBe(1);
    expect(lines.slice(logged).filter((line) => /"level":(40|50)/.test(line))).toEqual([]);
    expect(await say("/digest list")).toMatch(
      /Paused .*: the chat refused the bot \(forbidden\); using the bot here resumes it\./,
    );

    // The bot was used in the chat: its digests resume, and the next slot posts.
    await expect
      .poll(async () => (await digestStoreOf(t.store).forChat("telegram", "chat-1"))[0]?.pausedAt)
      .toBeNull();
    sender.fail = undefined;
    clock = at("2026-12-01T08:00:00Z");
    // Each digest's most recent slot, as after the bot was down: 18:00 yesterday, 09:00 today.
    expect(await s.tick()).toBe(2);
    expect(sender.sent.map((p) => p.text.split("\n")[0])).toEqual([
      expect.stringContaining("Daily digest for 1 Dec 2026"),
      expect.stringContaining("Daily digest for 30 Nov 2026"),
    ]);
  });

  it("once a slot is posted, later ticks do not ask the store to claim it again", async () => {
    await say("/digest add daily 09:00 Europe/Berlin");
    clock = at("2026-11-23T08:00:00Z");
    let claims = 0;
    const digests = digestStoreOf(t.store);
    const counting = Object.create(digests) as typeof digests;
    counting.claimRun = (input) => {
      claims++;
      return digests.claimRun(input);
    };
    const s = new DigestScheduler({
      ...(
        scheduler(fakeSender()) as unknown as {
          deps: ConstructorParameters<typeof DigestScheduler>[0];
        }
      ).deps,
      digests: counting,
    });
    expect(await s.tick()).toBe(1);
    for (let i = 0; i < 5; i++) {
      clock += 30_000;
      await s.tick();
    }
    expect(claims).toBe(1);
    clock = at("2026-11-24T08:00:00Z");
    expect(await s.tick()).toBe(1);
    expect(claims).toBe(2);
  });

  it("a chat that moved (a group become a supergroup) gets its digest at the new id", async () => {
    await say("/digest add daily 09:00 Europe/Berlin");
    clock = at("2026-11-23T08:00:00Z");
    const sender = fakeSender();
    const s = new DigestScheduler({
      ...(
        scheduler(sender) as unknown as { deps: ConstructorParameters<typeof DigestScheduler>[0] }
      ).deps,
      outbound: outboundOf(
        t.store,
        { telegram: sender },
        // The bot's chat mover: the digests follow with the chat's other rows.
        { now: () => clock },
      ),
    });
    sender.fail = new Error("moved:-100777");
    expect(await s.tick()).toBe(0);
    sender.fail = undefined;
    expect(await s.tick()).toBe(1);
    expect(sender.sent.map((p) => p.chatId)).toEqual(["-100777"]);
    expect((await digestStoreOf(t.store).all())[0]?.chatId).toBe("-100777");
    expect(await say("/digest list", { chat: { id: "-100777", kind: "group" } })).toContain(
      "daily at 09:00 Europe/Berlin",
    );
  });

  it("posts nothing when not the leader", async () => {
    await say("/digest add daily 09:00 Europe/Berlin");
    clock = at("2026-11-23T08:00:00Z");
    const sender = fakeSender();
    const follower = new DigestScheduler({
      ...(
        scheduler(sender) as unknown as { deps: ConstructorParameters<typeof DigestScheduler>[0] }
      ).deps,
      isLeader: () => false,
    });
    expect(await follower.tick()).toBe(0);
    expect(sender.sent).toEqual([]);
  });
});

describe("a digest's post (pure)", () => {
  const digest = {
    id: 7,
    platform: "telegram",
    chatId: "c",
    chain: "base",
    cadence: "weekly" as const,
    weekday: 1,
    time: "09:00",
    zone: "Europe/Berlin",
    metric: "sales",
    period: "7d",
    createdBy: "telegram:u1",
    createdAt: 0,
    pausedAt: null,
    pauseReason: null,
  };
  const top = {
    title: "Top collections by number of sales, last 7 days",
    text: "No collections ranked for this period.",
  };

  it("names the slot's local date, says when late, counts (capped) and names the chain", () => {
    const reply = digestReply({
      digest,
      slot: at("2026-11-23T08:00:00Z"),
      late: true,
      top,
      minted: { count: 5000, capped: true },
      chainName: "Base",
    });
    expect(reply.title).toBe(
      "Weekly digest for Mon 23 Nov 2026 (posted late: the bot was down at 09:00)",
    );
    expect(reply.text).toBe(
      "New collections minted on Base in the 24 hours before 09:00: more than 5,000.\nTop collections by number of sales, last 7 days: No collections ranked for this period.",
    );
    expect(reply.footer).toBe("Digest 7, weekly on Monday at 09:00 Europe/Berlin · /digest list");
  });

  it("on time: no note", () => {
    const reply = digestReply({
      digest: { ...digest, cadence: "daily", weekday: null },
      slot: at("2026-11-23T08:00:00Z"),
      late: false,
      top,
      minted: { count: 12, capped: false },
    });
    expect(reply.title).toBe("Daily digest for 23 Nov 2026");
    expect(reply.text).toMatch(/^New collections minted in the last 24 hours: 12\./);
  });
});
