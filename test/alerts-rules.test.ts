/**
 * Channel rules (/alerts) against the simulator: each filter and their combinations where alerts
 * are queued, quiet hours and digest mode where they are delivered (a later clock for the worker),
 * /alerts show and test, who may change them, bad input, and rules kept across a restart.
 */

import { afterEach, describe, expect, it } from "vitest";
import { DeliveryWorker } from "../src/alerts/delivery.ts";
import { BAD_ACTOR } from "../src/alerts/minters.ts";
import { alertStoresOf } from "../src/alerts/store/index.ts";
import { BEHAVIORS } from "../src/api/schemas.ts";
import type { Invocation } from "../src/core/command.ts";
import { behaviorLabel } from "../src/core/format.ts";
import type { RenderableReply } from "../src/core/reply.ts";
import { silentLogger } from "../src/log.ts";
import { renderDiscord } from "../src/render/discord.ts";
import { renderTelegram } from "../src/render/telegram.ts";
import { openSqliteStore } from "../src/store/sqlite/index.ts";
import { alertPipeline, RecordingSender } from "./alert-helpers.ts";
import { type RuntimeSetup, startRuntime } from "./helpers.ts";
import { outboundOf } from "./outbound-helpers.ts";

let t: RuntimeSetup;
afterEach(async () => {
  const setup = t;
  t = undefined as unknown as RuntimeSetup;
  await setup?.close();
});

/** The poller on the real clock; the worker on `clock.now`, which a test moves on. */
function alertsFor(setup: RuntimeSetup) {
  // Undefined: the real clock (what the poller enqueues by).
  const clock: { now: number | undefined } = { now: undefined };
  const pipeline = alertPipeline(setup, {
    worker: { reports: setup.store.reports, now: () => clock.now ?? Date.now() },
  });
  return { ...pipeline, clock };
}

const chat = (id: string, manager = true): Partial<Invocation> => ({
  chat: { id, kind: "group" },
  canManageChannel: async () => manager,
});

/** Runs a line in a chat and returns the reply as the console shows it. */
const say = async (line: string, id = "chat-1", manager = true) =>
  t.text(await t.say(line, chat(id, manager)));

/** Mints `n` NFT contracts (fungible ones are not alerted), with a bad-actor minter when asked. */
function mintNfts(n: number, minter?: string) {
  const out = [];
  while (out.length < n) {
    const [minted] = t.sim.mint(1, undefined, minter ? { minter } : {});
    if (minted && !minted.types.includes("TYPE_ERC20")) out.push(minted);
  }
  return out;
}

/** The names of the collections a sent message is about (one alert, or a digest's rows). */
function names(reply: RenderableReply | undefined): string[] {
  if (!reply) return [];
  if (reply.table) return reply.table.rows.map((row) => String(row[0]));
  return [String(reply.title).replace(/^.*collection: /, "")];
}

const sentNames = (sender: RecordingSender, chatId: string) =>
  sender.sent.filter((s) => s.chatId === chatId).flatMap((s) => names(s.reply));

/** A word of `name` (letters only, 3+), for keyword rules. */
const wordOf = (name: string) => name.split(/[^\p{L}\p{N}]+/u).find((w) => w.length >= 3) ?? "";

describe("filters, where alerts are queued", () => {
  it("minters exclude: a channel showing bad actors' mints leaves them out by its rule", async () => {
    t = await startRuntime();
    await say("/subscribe badactors:show", "rule");
    await say("/subscribe badactors:show", "plain");
    expect(await say("/alerts minters exclude badactor", "rule")).toMatch(
      /Not mints whose minter is: Bad actor/,
    );
    const { poller, worker, sender } = alertsFor(t);
    await poller.pollOnce();
    const ordinary = mintNfts(2);
    const [bad] = mintNfts(1, "badactor");
    await poller.pollOnce();
    await worker.drain();
    const plain = sentNames(sender, "plain");
    const ruled = sentNames(sender, "rule");
    expect(plain).toHaveLength(3);
    expect(ruled.sort()).toEqual(ordinary.map((c) => c.name).sort());
    expect(ruled).not.toContain(bad?.name);
  });

  it("minters include: only mints whose minter has the label (bad actors with badactors:show)", async () => {
    t = await startRuntime();
    await say("/subscribe badactors:show", "only-bad");
    await say("/alerts minters include spammer", "only-bad");
    const { poller, worker, sender, alerts } = alertsFor(t);
    await poller.pollOnce();
    mintNfts(3);
    const [bad] = mintNfts(1, "badactor");
    await poller.pollOnce();
    const due = await alerts.due(Date.now(), 100);
    expect(due.map((a) => a.contract.minterBehavior)).toEqual([BAD_ACTOR]);
    await worker.drain();
    expect(sender.sent).toHaveLength(1);
    expect(sender.sent[0]?.reply.title).toMatch(/^Likely spam: new collection: /);
    expect(sentNames(sender, "only-bad")).toEqual([bad?.name]);
  });

  it("minters include with bad actors hidden: still hidden, and /alerts show says why", async () => {
    t = await startRuntime();
    await say("/subscribe", "hides");
    await say("/alerts minters include badactor", "hides");
    expect(await say("/alerts show", "hides")).toMatch(/stay hidden: \/subscribe badactors:show/);
    const { poller, alerts } = alertsFor(t);
    await poller.pollOnce();
    mintNfts(2);
    mintNfts(1, "badactor");
    const result = await poller.pollOnce();
    expect(result).toMatchObject({ enqueued: 0, hidden: 1 });
    expect(await alerts.depth()).toBe(0);
  });

  it("keywords include and exclude: whole words of the simulator's names, any case", async () => {
    t = await startRuntime();
    await say("/subscribe", "all");
    await say("/subscribe", "inc");
    await say("/subscribe", "exc");
    const { poller, worker, sender, alerts } = alertsFor(t);
    await poller.pollOnce();
    const minted = mintNfts(12);
    const word = wordOf(minted[0]?.name ?? "");
    expect(word).not.toBe("");
    await say(`/alerts keywords include ${word.toUpperCase()}`, "inc");
    await say(`/alerts keywords exclude ${word.toLowerCase()}`, "exc");
    await poller.pollOnce();
    const has = (name: string) =>
      new RegExp(`(^|[^\\p{L}\\p{N}])${word}($|[^\\p{L}\\p{N}])`, "iu").test(name);
    const with_ = minted.filter((c) => has(c.name)).map((c) => c.name);
    const without = minted.filter((c) => !has(c.name)).map((c) => c.name);
    expect(with_.length).toBeGreaterThan(0);
    const due = await alerts.due(Date.now(), 100);
    const queued = (chatId: string) =>
      due
        .filter((a) => a.chatId === chatId)
        .map((a) => a.contract.name)
        .sort();
    expect(queued("all")).toEqual(minted.map((c) => c.name).sort());
    expect(queued("inc")).toEqual([...with_].sort());
    expect(queued("exc")).toEqual([...without].sort());
    await worker.drain();
    expect(sender.sent.length).toBeGreaterThan(0);
  });

  it("types, minters and keywords together: each rule leaves out its own", async () => {
    t = await startRuntime();
    await say("/subscribe erc721 badactors:show", "combo");
    const { poller, alerts } = alertsFor(t);
    await poller.pollOnce();
    const minted = [...mintNfts(15), ...mintNfts(2, "badactor")];
    const word = wordOf(minted[0]?.name ?? "");
    await say(`/alerts keywords exclude ${word}`, "combo");
    await say("/alerts minters exclude badactor", "combo");
    await poller.pollOnce();
    const due = await alerts.due(Date.now(), 100);
    const expected = minted.filter(
      (c) =>
        c.types.some((type) => type.startsWith("TYPE_ERC721") || type === "TYPE_CRYPTOPUNKS") &&
        !new RegExp(`(^|[^\\p{L}\\p{N}])${word}($|[^\\p{L}\\p{N}])`, "iu").test(c.name),
    );
    const badAddresses = new Set(minted.slice(-2).map((c) => c.address.toLowerCase()));
    const want = expected.filter((c) => !badAddresses.has(c.address.toLowerCase()));
    expect(due.map((a) => a.contract.address.toLowerCase()).sort()).toEqual(
      want.map((c) => c.address.toLowerCase()).sort(),
    );
    for (const alert of due) expect(alert.contract.types.join()).toMatch(/ERC721|CRYPTOPUNKS/);
  });
});

describe("delivery: quiet hours and digest mode", () => {
  /** Quiet hours around the real time now, in UTC: from an hour ago to an hour from now. */
  function quietAroundNow() {
    const now = new Date();
    const minutes = now.getUTCHours() * 60 + now.getUTCMinutes();
    const clock = (m: number) => {
      const v = ((m % 1440) + 1440) % 1440;
      return `${String(Math.floor(v / 60)).padStart(2, "0")}:${String(v % 60).padStart(2, "0")}`;
    };
    return `${clock(minutes - 60)}-${clock(minutes + 60)}`;
  }

  it("alerts in quiet hours are held and sent as one digest when they end; others go at once", async () => {
    t = await startRuntime();
    await say("/subscribe", "quiet");
    await say("/subscribe", "loud");
    expect(await say(`/alerts quiet ${quietAroundNow()} UTC`, "quiet")).toMatch(/Quiet hours: /);
    expect(await say("/alerts show", "quiet")).toMatch(/It is quiet hours now/);
    const { poller, worker, sender, clock } = alertsFor(t);
    await poller.pollOnce();
    const minted = mintNfts(3);
    await poller.pollOnce();
    await worker.drain();
    expect(sentNames(sender, "loud")).toHaveLength(3);
    expect(sentNames(sender, "quiet")).toEqual([]);
    // Still quiet 50 minutes on; after the end (at most an hour and a minute on), one digest.
    clock.now = Date.now() + 50 * 60_000;
    await worker.drain();
    expect(sentNames(sender, "quiet")).toEqual([]);
    clock.now = Date.now() + 62 * 60_000;
    await worker.drain();
    const quiet = sender.sent.filter((s) => s.chatId === "quiet");
    expect(quiet).toHaveLength(1);
    expect(quiet[0]?.reply.title).toBe("3 new collections");
    expect(quiet[0]?.reply.footer).toMatch(/by this channel's rules/);
    expect(names(quiet[0]?.reply).sort()).toEqual(minted.map((c) => c.name).sort());
  });

  it("digest every N minutes: nothing until the period ends, then one digest (even of 2)", async () => {
    t = await startRuntime();
    await say("/subscribe", "digest");
    expect(await say("/alerts digest 30", "digest")).toMatch(/one digest every 30 minutes/);
    const { poller, worker, sender, clock, alerts } = alertsFor(t);
    await poller.pollOnce();
    mintNfts(2);
    await poller.pollOnce();
    await worker.drain();
    expect(sender.sent).toHaveLength(0);
    const [held] = await alerts.due(Date.now() + 30 * 60_000, 10);
    expect(held?.held).toBe(true);
    clock.now = Date.now() + 30 * 60_000 + 1;
    await worker.drain();
    expect(sender.sent).toHaveLength(1);
    expect(sender.sent[0]?.reply.title).toBe("2 new collections");
    // Back to each mint: new alerts go at once, one message each.
    await say("/alerts digest off", "digest");
    mintNfts(1);
    await poller.pollOnce();
    clock.now = undefined;
    await worker.drain();
    expect(sender.sent).toHaveLength(2);
    expect(sender.sent[1]?.reply.title).toMatch(/^New collection: /);
  });

  it("digest with a keyword filter and quiet hours: filtered, held through both, one digest", async () => {
    t = await startRuntime();
    await say("/subscribe", "both");
    const { poller, worker, sender, clock } = alertsFor(t);
    await poller.pollOnce();
    const minted = mintNfts(8);
    const word = wordOf(minted[0]?.name ?? "");
    await say(`/alerts keywords exclude ${word}`, "both");
    await say("/alerts digest 15", "both");
    await say(`/alerts quiet ${quietAroundNow()} Etc/UTC`, "both");
    await poller.pollOnce();
    clock.now = Date.now() + 20 * 60_000;
    await worker.drain();
    expect(sender.sent).toHaveLength(0);
    clock.now = Date.now() + 62 * 60_000;
    await worker.drain();
    const want = minted
      .filter(
        (c) => !new RegExp(`(^|[^\\p{L}\\p{N}])${word}($|[^\\p{L}\\p{N}])`, "iu").test(c.name),
      )
      .map((c) => c.name);
    expect(sentNames(sender, "both").sort()).toEqual([...want].sort());
    expect(sender.sent.length).toBe(want.length >= 2 ? 1 : want.length);
  });
});

describe("/alerts show, test, permissions and bad input", () => {
  it("show lists the rules in plain words; anyone may read them", async () => {
    t = await startRuntime();
    await say("/subscribe erc721");
    expect(await say("/alerts", "chat-1", false)).toMatch(/No quiet hours/);
    await say("/alerts minters include whale, creator");
    await say("/alerts keywords exclude airdrop, free mint");
    await say("/alerts quiet 23:00-07:00 europe/berlin");
    await say("/alerts digest 30");
    const shown = await say("/alerts show", "chat-1", false);
    expect(shown).toMatch(/Collections: ERC-721/);
    expect(shown).toMatch(/Only mints whose minter is: Whale, Creator/);
    expect(shown).toMatch(/Not collections whose name has any of: "airdrop", "free mint"/);
    expect(shown).toMatch(/Quiet hours: 23:00 to 07:00 Europe\/Berlin time/);
    expect(shown).toMatch(/one digest every 30 minutes/);
    expect(await say("/subscriptions")).toMatch(/alert rules: \/alerts show/);
    await say("/alerts reset");
    expect(await say("/subscriptions")).not.toMatch(/alert rules/);
    const reset = await say("/alerts show");
    expect(reset).toMatch(/No quiet hours/);
    expect(reset).toMatch(/each mint as it comes/);
    expect(reset).not.toMatch(/Whale/);
  });

  it("test shows the last hour under the rules, in this channel only, sending nothing elsewhere", async () => {
    t = await startRuntime();
    await say("/subscribe badactors:show", "tester");
    await say("/subscribe", "other");
    const { poller, worker, sender, alerts } = alertsFor(t);
    await poller.pollOnce();
    const minted = mintNfts(4);
    const [bad] = mintNfts(1, "badactor");
    await poller.pollOnce();
    const depth = await alerts.depth();
    await say("/alerts minters exclude badactor", "tester");
    const reply = await t.say("/alerts test", chat("tester", false));
    const text = t.text(reply);
    expect(text).toMatch(/in the last hour 5 new collections were seen; 4 would have been posted/);
    expect(text).toMatch(/1 for their minter/);
    expect(names(reply).sort()).toEqual(minted.map((c) => c.name).sort());
    expect(names(reply)).not.toContain(bad?.name);
    // Nothing queued or sent by the test.
    expect(await alerts.depth()).toBe(depth);
    expect(sender.sent).toHaveLength(0);
    await worker.drain();
    expect(sender.sent.every((s) => ["tester", "other"].includes(s.chatId))).toBe(true);
  });

  it("test lists newest first, and says so; the minter column holds behaviors, the note the rest", async () => {
    t = await startRuntime();
    await say("/subscribe badactors:show", "tester");
    const { poller } = alertsFor(t);
    await poller.pollOnce();
    // More minters than are looked up one by one: they are known as "no spam history".
    const minted = [...mintNfts(6), ...mintNfts(1, "badactor"), ...mintNfts(1)];
    await poller.pollOnce();
    const reply = await t.say("/alerts test", chat("tester", false));
    const table = reply.table;
    expect(table?.columns).toEqual(["Collection", "Address", "Type", "Minter", "Note", "Minted"]);
    // Minted one after another: the last minted comes first.
    expect(names(reply)).toEqual(minted.map((c) => c.name).reverse());
    expect(reply.footer).toMatch(/newest first/);
    const column = (name: string) => {
      const index = table?.columns.indexOf(name) ?? -1;
      return (table?.rows ?? []).map((row) => String(row[index]));
    };
    const behaviors = new Set([...BEHAVIORS.map(behaviorLabel), "No label", "unknown"]);
    for (const minter of column("Minter")) expect(behaviors, minter).toContain(minter);
    for (const note of column("Note"))
      expect(["", "No spam history", "⚠ Likely spam"], note).toContain(note);
    expect(column("Note")).toContain("No spam history");
    // The bad actor's mint (second in the list): its behavior, and the warning as a note.
    expect(table?.rows[1]?.slice(3, 5)).toEqual(["Bad actor", "⚠ Likely spam"]);
    expect(names(reply)[1]).toBe(minted[6]?.name);
  });

  it("only people who can manage the channel change the rules", async () => {
    t = await startRuntime();
    await say("/subscribe");
    for (const line of [
      "/alerts digest 30",
      "/alerts quiet 23:00-07:00 UTC",
      "/alerts minters exclude badactor",
      "/alerts keywords include ape",
      "/alerts reset",
    ])
      expect(await say(line, "chat-1", false)).toMatch(/Only people who can manage this channel/);
    await expect(
      alertStoresOf(t.store).subscriptions.find("telegram", "chat-1"),
    ).resolves.toMatchObject({
      rules: {},
    });
  });

  it("bad input is refused with how to say it, and nothing is stored", async () => {
    t = await startRuntime();
    expect(await say("/alerts show", "nobody")).toMatch(/not subscribed.*\/subscribe first/);
    await say("/subscribe");
    const cases: [string, RegExp][] = [
      ["/alerts quiet 25:00-07:00 UTC", /two times, like 23:00-07:00/],
      ["/alerts quiet 23:00-07:00 Mars/Olympus", /not a time zone/],
      ["/alerts quiet 23:00-07:00", /Use \/alerts quiet/],
      ["/alerts quiet 07:00-07:00 UTC", /different times/],
      ["/alerts digest soon", /Use \/alerts digest <minutes>/],
      ["/alerts digest 100000", /Use \/alerts digest <minutes>/],
      ["/alerts minters include wizard", /wizard is not a minter behavior/],
      ["/alerts minters maybe whale", /Use \/alerts minters include/],
      ["/alerts keywords include", /Use \/alerts keywords include/],
      ["/alerts frobnicate", /use one of show, test/],
    ];
    for (const [line, error] of cases) expect(await say(line)).toMatch(error);
    expect((await alertStoresOf(t.store).subscriptions.find("telegram", "chat-1"))?.rules).toEqual(
      {},
    );
  });

  it("hostile keywords and minter names: stored without NUL, echoed escaped, never pinging", async () => {
    t = await startRuntime();
    await say("/subscribe");
    const shown = await t.say(
      "/alerts keywords include @everyone, <b>x</b>\u0000y",
      chat("chat-1", true),
    );
    const rules = (await alertStoresOf(t.store).subscriptions.find("telegram", "chat-1"))?.rules;
    expect(JSON.stringify(rules)).not.toContain("\\u0000");
    const html = JSON.stringify(renderTelegram(shown));
    expect(html).not.toMatch(/<b>x|\\u0000/);
    expect(html).toContain("&lt;b&gt;");
    for (const message of [renderDiscord(shown)])
      expect(message.allowedMentions).toEqual({ parse: [] });
    expect(await say("/alerts minters include <b>@everyone</b>")).toMatch(
      /is not a minter behavior/,
    );
    expect(
      JSON.stringify(
        (await alertStoresOf(t.store).subscriptions.find("telegram", "chat-1"))?.rules,
      ),
    ).not.toMatch(/everyone<\/b>|<b>@/);
  });

  it("/alerts test in quiet hours says when they end on the channel's clock, not in UTC", async () => {
    // 23:30 in Berlin (UTC+1 in November).
    t = await startRuntime({}, {}, [], { now: () => new Date("2026-11-23T22:30:00Z") });
    await say("/subscribe");
    await say("/alerts quiet 23:00-07:00 Europe/Berlin");
    const tested = await say("/alerts test");
    expect(tested).toContain("held until 07:00 Europe/Berlin time");
    expect(tested).not.toMatch(/06:00 UTC/);
  });

  it("digest minutes are whole minutes as typed: no exponent, hex, fraction or sign slips through", async () => {
    t = await startRuntime();
    await say("/subscribe");
    for (const minutes of ["1e3", "1e1", "0x1e", "30.0", "+30", "-5", "3_0"])
      expect(await say(`/alerts digest ${minutes}`), minutes).toMatch(
        /Use \/alerts digest <minutes>/,
      );
    expect((await alertStoresOf(t.store).subscriptions.find("telegram", "chat-1"))?.rules).toEqual(
      {},
    );
    expect(await say("/alerts digest 30min")).toMatch(/every 30 minutes/);
  });

  it("held alerts survive a restart: a new store and worker on the same data send the digest on time", async () => {
    t = await startRuntime();
    await say("/subscribe", "held");
    await say("/alerts digest 20", "held");
    const { poller } = alertsFor(t);
    await poller.pollOnce();
    const minted = mintNfts(3);
    await poller.pollOnce();
    // "Restart": another store over the same database, and a new worker.
    const reopened = openSqliteStore(t.dataDir);
    try {
      const sender = new RecordingSender();
      let now = Date.now();
      const worker = new DeliveryWorker({
        alerts: alertStoresOf(reopened).outbox,
        outbound: outboundOf(
          reopened,
          { telegram: sender },
          {
            moveChat: (platform, from, to) =>
              alertStoresOf(reopened).subscriptions.moveChat(platform, from, to),
            materialize: (platform, chatId, reply) =>
              t.runtime.materialize(reply, { platform, chat: { id: chatId, kind: "group" } }),
            now: () => now,
          },
        ),
        logger: silentLogger(),
        settings: {
          digestThreshold: 5,
          batch: 500,
          tickMs: 1000,
          explorerUrl: "https://etherscan.io",
          maxAttempts: 10,
        },
        isLeader: () => true,
        now: () => now,
      });
      await worker.drain();
      expect(sender.sent).toHaveLength(0);
      now = Date.now() + 20 * 60_000 + 1;
      await worker.drain();
      expect(sender.sent).toHaveLength(1);
      expect(names(sender.sent[0]?.reply).sort()).toEqual(minted.map((c) => c.name).sort());
    } finally {
      await reopened.close();
    }
  });

  it("rules survive a restart (stored with the subscription)", async () => {
    t = await startRuntime();
    await say("/subscribe");
    await say("/alerts quiet 22:00-06:00 America/New_York");
    await say("/alerts keywords exclude airdrop");
    const reopened = openSqliteStore(t.dataDir);
    try {
      expect(
        (await alertStoresOf(reopened).subscriptions.find("telegram", "chat-1"))?.rules,
      ).toEqual({
        quiet: { from: "22:00", to: "06:00", zone: "America/New_York" },
        keywords: { exclude: ["airdrop"] },
      });
    } finally {
      await reopened.close();
    }
  });
});

describe("per chain", () => {
  it("each chain's subscription has its own rules: chain word or chain: option", async () => {
    t = await startRuntime({ CHAINS: "ethereum,base" });
    await say("/subscribe");
    await say("/subscribe base");
    expect(await say("/alerts base digest 15")).toMatch(/digest every 15 minutes/);
    expect(await say("/alerts show chain:base")).toMatch(
      /Alert rules on Base[\s\S]*every 15 minutes/,
    );
    expect(await say("/alerts show")).toMatch(/each mint as it comes/);
    // A chain not served is no chain word: it reads as the (wrong) subcommand.
    expect(await say("/alerts polygon show")).toMatch(/action: use one of show, test/);
  });
});
