import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseCollectionWatch } from "../commands/watch.ts";
import type { RenderableReply } from "../src/core/reply.ts";
import { silentLogger } from "../src/log.ts";
import type { ChatSender } from "../src/outbound/types.ts";
import { renderDiscord } from "../src/render/discord.ts";
import { renderTelegram } from "../src/render/telegram.ts";
import { openMemorySqliteStore } from "../src/store/sqlite/index.ts";
import type { Store } from "../src/store/types.ts";
import { FRESHNESS_MS, WatchChecker } from "../src/watches/checker.ts";
import { watchStoreOf } from "../src/watches/store.ts";
import { type RuntimeSetup, startRuntime } from "./helpers.ts";
import { outboundOf } from "./outbound-helpers.ts";

const MIN = 60_000;

function fakeSender() {
  const sent: {
    chatId: string;
    text: string;
    key: string | undefined;
    reply: RenderableReply;
  }[] = [];
  type Failure = "transient" | "permanent" | "moved";
  let failNext: Failure | undefined;
  const sender: ChatSender & { sent: typeof sent; fail(kind: Failure): void } = {
    sent,
    maxInFlight: 1,
    fail(kind) {
      failNext = kind;
    },
    async sendToChat(chatId: string, reply: RenderableReply, key?: string) {
      if (failNext) {
        const kind = failNext;
        failNext = undefined;
        throw Object.assign(new Error(kind), { kind });
      }
      sent.push({ chatId, text: `${reply.title ?? ""}\n${reply.text ?? ""}`, key, reply });
    },
    classifySendError(error) {
      const kind = (error as { kind?: string }).kind;
      if (kind === "moved") return { kind: "moved", newChatId: "c-new" };
      return kind === "permanent"
        ? { kind: "permanent", reason: "gone" }
        : { kind: "transient", reason: "try again" };
    },
  };
  return sender;
}

describe("/watch", () => {
  let t: RuntimeSetup;
  beforeAll(async () => {
    t = await startRuntime({ WATCHES_PER_CHAT: "3" });
  });
  afterAll(async () => {
    await t?.close();
  });

  it("parses thresholds after the collection", () => {
    expect(parseCollectionWatch("bored ape yacht club owners 5 whales 2.5")).toEqual({
      collection: "bored ape yacht club",
      owners: 5,
      whales: 2.5,
    });
    expect(parseCollectionWatch("0xabc owners:7%")).toEqual({
      collection: "0xabc",
      owners: 7,
      whales: undefined,
    });
  });

  it("adds, lists and removes a collection watch; only managers add and remove", async () => {
    const { collection } = t.sim.fixtures;
    const refused = await t.refusal(`/watch collection ${collection} owners 5`, {
      chat: { id: "perm", kind: "group" },
      canManageChannel: async () => false,
    });
    expect(refused).toBe("not_manager");
    expect(await watchStoreOf(t.store).forChat("telegram", "perm")).toEqual([]);

    const added = await t.say(`/watch collection ${collection} owners 5 whales 2`, {
      chat: { id: "perm", kind: "group" },
    });
    expect(t.text(added)).toMatch(
      /Watching #\d+ .*owner count moves over 5%.*whale share moves over 2 points/s,
    );
    const [watch] = await watchStoreOf(t.store).forChat("telegram", "perm");
    expect(watch).toMatchObject({
      kind: "collection",
      chain: "ethereum",
      target: collection.toLowerCase(),
      ownersPercent: 5,
      whalesPoints: 2,
    });
    // Anyone may list.
    const list = await t.say("/watch list", {
      chat: { id: "perm", kind: "group" },
      canManageChannel: async () => false,
    });
    expect(t.text(list)).toContain(`#${watch?.id}`);
    const notRemoved = await t.refusal(`/watch remove ${watch?.id}`, {
      chat: { id: "perm", kind: "group" },
      canManageChannel: async () => false,
    });
    expect(notRemoved).toBe("not_manager");
    const otherChat = await t.say(`/watch remove ${watch?.id}`, {
      chat: { id: "elsewhere", kind: "group" },
    });
    expect(t.text(otherChat)).toContain("no watch");
    const removed = await t.say(`/watch remove ${watch?.id}`, {
      chat: { id: "perm", kind: "group" },
    });
    expect(t.text(removed)).toContain("removed");
    expect(await watchStoreOf(t.store).forChat("telegram", "perm")).toEqual([]);
  });

  it("refuses bad input: a bad percent, an unknown collection, a bad wallet, a bad id", async () => {
    const { collection } = t.sim.fixtures;
    const chat = { id: "bad", kind: "group" as const };
    for (const line of [
      `/watch collection ${collection} owners abc`,
      `/watch collection ${collection} owners 0`,
      `/watch collection ${collection} owners -3`,
      `/watch collection ${collection} whales 500`,
      `/watch collection ${collection} owners`,
    ]) {
      const reply = await t.say(line, { chat });
      expect(reply.tone, `${line}: ${t.text(reply)}`).toBe("warning");
      expect(t.text(reply)).toMatch(/Owners|Whales|owners|whales/);
    }
    const unknownAddress = await t.say(`/watch collection 0x${"de".repeat(20)}`, { chat });
    expect(unknownAddress.tone).not.toBe("success");
    const unknownName = await t.say("/watch collection no such collection zzqx", { chat });
    expect(t.text(unknownName)).toContain("I know no collection");
    expect((await t.say("/watch wallet not-a-wallet", { chat })).tone).toBe("warning");
    expect((await t.say("/watch remove abc", { chat })).tone).toBe("warning");
    expect((await t.say("/watch collection", { chat })).tone).toBe("warning");
    expect(await watchStoreOf(t.store).forChat("telegram", "bad")).toEqual([]);
  });

  it("a rule given again changes that rule only, the reply says what changed, and off removes one", async () => {
    const chat = { id: "merge", kind: "group" as const };
    const { collection, erc1155Collection } = t.sim.fixtures;
    const stored = async () => {
      const [watch] = await watchStoreOf(t.store).forChat("telegram", chat.id);
      return { owners: watch?.ownersPercent, whales: watch?.whalesPoints };
    };
    const say = async (line: string) => {
      const reply = await t.say(line, { chat });
      return { tone: reply.tone, text: t.text(reply) };
    };
    await say(`/watch collection ${collection} owners 5 whales 2`);
    // The line: the whales rule was dropped without a word.
    const owners = await say(`/watch collection ${collection} owners 10`);
    expect(owners.tone).toBe("success");
    expect(owners.text).toMatch(/owners rule set to 10% \(was 5%\); whales rule 2 points kept/);
    expect(await stored()).toEqual({ owners: 10, whales: 2 });
    const whales = await say(`/watch collection ${collection} whales 3`);
    expect(whales.text).toMatch(
      /whales rule set to 3 points \(was 2 points\); owners rule 10% kept/,
    );
    expect(await stored()).toEqual({ owners: 10, whales: 3 });
    const off = await say(`/watch collection ${collection} whales off`);
    expect(off.text).toMatch(/whales rule removed \(was 3 points\); owners rule 10% kept/);
    expect(await stored()).toEqual({ owners: 10, whales: null });
    // Nothing to change, or no rule left: said, and nothing changes.
    const same = await say(`/watch collection ${collection}`);
    expect(same.text).toMatch(/nothing changed.*owners <percent>.*whales off/s);
    const none = await say(`/watch collection ${collection} owners off`);
    expect(none.tone).toBe("warning");
    expect(none.text).toMatch(/would have no rule left: \/watch remove \d+ stops it/);
    expect(await stored()).toEqual({ owners: 10, whales: null });
    const fresh = await say(`/watch collection ${erc1155Collection} owners off`);
    expect(fresh.tone).toBe("warning");
    expect(await watchStoreOf(t.store).forChat("telegram", chat.id)).toHaveLength(1);
    // A new watch with one rule off has the other.
    const whalesOnly = await say(`/watch collection ${erc1155Collection} whales 4 owners off`);
    expect(whalesOnly.text).toMatch(/^Watching #\d+ .*whale share moves over 4 points/);
    expect(whalesOnly.text).not.toMatch(/owner count/);
  });

  it("caps a channel's watches at WATCHES_PER_CHAT", async () => {
    const chat = { id: "cap", kind: "group" as const };
    const { collection, erc1155Collection, legacyCollection, cryptopunksCollection } =
      t.sim.fixtures;
    for (const c of [collection, erc1155Collection, legacyCollection])
      expect((await t.say(`/watch collection ${c}`, { chat })).tone).toBe("success");
    const full = await t.say(`/watch collection ${cryptopunksCollection}`, { chat });
    expect(t.text(full)).toContain("the most it may have (3)");
    // Changing one it has is not a new one.
    expect((await t.say(`/watch collection ${collection} owners 20`, { chat })).tone).toBe(
      "success",
    );
    expect(await watchStoreOf(t.store).forChat("telegram", "cap")).toHaveLength(3);
  });

  it("watches a wallet given by ENS name", async () => {
    const chat = { id: "ens", kind: "group" as const };
    const reply = await t.say(`/watch wallet ${t.sim.fixtures.walletEns}`, { chat });
    expect(reply.tone, t.text(reply)).toBe("success");
    const [watch] = await watchStoreOf(t.store).forChat("telegram", "ens");
    expect(watch).toMatchObject({
      kind: "wallet",
      target: t.sim.fixtures.wallet.toLowerCase(),
      label: t.sim.fixtures.walletEns,
    });
  });
});

describe("watch checker", () => {
  let t: RuntimeSetup;
  let store: Store;
  let clock: number;
  const start = Date.now();
  beforeAll(async () => {
    t = await startRuntime();
  });
  afterAll(async () => {
    await t?.close();
  });

  function checker(sender: ChatSender, checksPerMinute = 1000) {
    return new WatchChecker({
      watches: watchStoreOf(store),
      apis: t.apis,
      chains: t.chains,
      outbound: outboundOf(
        store,
        { telegram: sender },
        {
          // As the bot does: the reply's buttons stored and its chart drawn for the chat.
          materialize: (platform, chatId, reply) =>
            t.runtime.materialize(reply, { platform, chat: { id: chatId, kind: "group" } }),
          now: () => clock,
        },
      ),
      leases: store.leases,
      holder: "test-holder",
      logger: silentLogger(),
      settings: { tickMs: 1000, checksPerMinute },
      now: () => clock,
    });
  }

  async function addWatch(input: {
    kind: "collection" | "wallet";
    target: string;
    ownersPercent?: number;
    whalesPoints?: number;
    chatId?: string;
  }) {
    const result = await watchStoreOf(store).add(
      {
        platform: "telegram",
        chatId: input.chatId ?? "c",
        chain: "ethereum",
        kind: input.kind,
        target: input.target.toLowerCase(),
        label: "Test",
        ownersPercent: input.ownersPercent ?? null,
        whalesPoints: input.whalesPoints ?? null,
        createdBy: "telegram:u1",
        createdAt: clock,
      },
      100,
    );
    if (result.kind === "full") throw new Error("full");
    return result.watch;
  }

  const reads = (path: string) => t.sim.requests.filter((r) => r.path.includes(path)).length;

  /** A wallet watch in chat "c" on a fresh store, whose first post fails with `kind`. */
  async function failedPost(kind: Parameters<ReturnType<typeof fakeSender>["fail"]>[0]) {
    store = openMemorySqliteStore();
    clock = start;
    const { wallet } = t.sim.fixtures;
    const watch = await addWatch({ kind: "wallet", target: wallet });
    const sender = fakeSender();
    const c = checker(sender);
    await c.tick();
    t.sim.giveNft(wallet);
    clock += FRESHNESS_MS.nfts;
    sender.fail(kind);
    await c.tick();
    return { watch, sender, c };
  }

  it("owner count: a move under the threshold does not post, over it posts once, at most every 5 minutes, and not again after a restart", async () => {
    store = openMemorySqliteStore();
    clock = start;
    const { collection } = t.sim.fixtures;
    await addWatch({ kind: "collection", target: collection, ownersPercent: 10 });
    const sender = fakeSender();
    const first = checker(sender);
    expect(await first.tick()).toBe(true);
    const before = reads("/owners_count/");
    expect(before).toBeGreaterThan(0);
    expect(sender.sent).toEqual([]); // the simulator's own daily moves are small

    t.sim.bumpOwners(collection, 4);
    clock += FRESHNESS_MS.owners;
    await first.tick();
    expect(sender.sent).toEqual([]);

    t.sim.bumpOwners(collection, 15);
    clock += FRESHNESS_MS.owners - 1;
    await first.tick();
    // Not yet 5 minutes: not even asked.
    expect(reads("/owners_count/")).toBe(before + 1);
    expect(sender.sent).toEqual([]);
    clock += 1;
    await first.tick();
    expect(sender.sent).toHaveLength(1);
    expect(sender.sent[0]?.text).toMatch(/Owner count rose \d+(\.\d)?% in a day/);
    expect(sender.sent[0]?.chatId).toBe("c");

    clock += FRESHNESS_MS.owners;
    await first.tick();
    expect(sender.sent).toHaveLength(1);

    // A restart: a new checker on the same store posts nothing for the same move.
    const again = checker(sender);
    clock += FRESHNESS_MS.owners;
    await again.tick();
    expect(sender.sent).toHaveLength(1);
    expect(first.stats.posts).toBe(1);
    // The count falls back under the threshold, and a new jump down is a new post.
    t.sim.bumpOwners(collection, 100 / 1.196 - 100);
    clock += FRESHNESS_MS.owners;
    await again.tick();
    expect(sender.sent).toHaveLength(1);
    t.sim.bumpOwners(collection, -30);
    clock += FRESHNESS_MS.owners;
    await again.tick();
    expect(sender.sent).toHaveLength(2);
    expect(sender.sent[1]?.text).toContain("Owner count fell");
    await store.close();
  });

  it("whale share: a move under the points does not post, over them posts once; read daily only", async () => {
    store = openMemorySqliteStore();
    clock = start;
    const { erc1155Collection: collection } = t.sim.fixtures;
    // The natural 30-day move, to set the threshold above it.
    const { aggregatedBehaviors } = await t.api.audiences.behaviorsByCollection(collection, {
      fresh: true,
    });
    const { whaleShareMove } = await import("../src/watches/checker.ts");
    const natural = Math.abs(whaleShareMove(aggregatedBehaviors)?.move ?? 0);
    const points = Math.ceil(natural) + 3;
    await addWatch({ kind: "collection", target: collection, whalesPoints: points });
    const sender = fakeSender();
    const c = checker(sender);
    const ownerReads = reads("/owners_count/");
    await c.tick();
    expect(sender.sent).toEqual([]);
    expect(reads("/owners_count/")).toBe(ownerReads); // no owners threshold: not read

    t.sim.moveWhales(collection, 1);
    clock += FRESHNESS_MS.whales - 1;
    const before = reads("/behaviors/by_collection/");
    await c.tick();
    expect(reads("/behaviors/by_collection/")).toBe(before); // not a day yet
    clock += 1;
    await c.tick();
    expect(sender.sent).toEqual([]);

    t.sim.moveWhales(collection, points + 2);
    clock += FRESHNESS_MS.whales;
    await c.tick();
    expect(sender.sent).toHaveLength(1);
    expect(sender.sent[0]?.text).toMatch(/Whale share up [\d.]+ points over 30 days/);
    clock += FRESHNESS_MS.whales;
    await checker(sender).tick();
    expect(sender.sent).toHaveLength(1);
    await store.close();
  });

  it("owners and whales on one watch: both moves at once make one post, each posted once", async () => {
    store = openMemorySqliteStore();
    clock = start;
    const { legacyCollection: collection } = t.sim.fixtures;
    const { aggregatedBehaviors } = await t.api.audiences.behaviorsByCollection(collection, {
      fresh: true,
    });
    const { whaleShareMove } = await import("../src/watches/checker.ts");
    const points = Math.ceil(Math.abs(whaleShareMove(aggregatedBehaviors)?.move ?? 0)) + 3;
    await addWatch({
      kind: "collection",
      target: collection,
      ownersPercent: 10,
      whalesPoints: points,
    });
    const sender = fakeSender();
    await checker(sender).tick();
    expect(sender.sent).toEqual([]);
    t.sim.bumpOwners(collection, 30);
    t.sim.moveWhales(collection, points + 3);
    clock += FRESHNESS_MS.whales;
    await checker(sender).tick();
    expect(sender.sent).toHaveLength(1);
    expect(sender.sent[0]?.text).toContain("Owner count rose");
    expect(sender.sent[0]?.text).toContain("Whale share up");
    clock += FRESHNESS_MS.whales;
    await checker(sender).tick();
    expect(sender.sent).toHaveLength(1);
    await store.close();
  });

  it("wallet: a new NFT is posted once, spam is not, and a restart does not repost", async () => {
    store = openMemorySqliteStore();
    clock = start;
    const { wallet } = t.sim.fixtures;
    await addWatch({ kind: "wallet", target: wallet });
    const sender = fakeSender();
    await checker(sender).tick();
    expect(sender.sent).toEqual([]); // what it held when the watch began

    const gift = t.sim.giveNft(wallet);
    t.sim.giveNft(wallet, undefined, { spam: true });
    clock += FRESHNESS_MS.nfts;
    await checker(sender).tick();
    expect(sender.sent).toHaveLength(1);
    expect(sender.sent[0]?.text).toContain("A new NFT in the wallet");
    expect(sender.sent[0]?.text.toLowerCase()).toContain(gift.contract.slice(2, 6).toLowerCase());
    // Spam excluded upstream where the chain has spam data.
    expect(t.sim.requests.filter((r) => r.path.endsWith("/nfts")).at(-1)?.query.spam).toBe(
      "SPAM_FILTER_EXCLUDE",
    );

    clock += FRESHNESS_MS.nfts;
    await checker(sender).tick();
    expect(sender.sent).toHaveLength(1);
    await store.close();
  });

  it("wallet: a new NFT with a hostile name and a 78-digit token id is posted escaped, never pinging, its id exact", async () => {
    store = openMemorySqliteStore();
    clock = start;
    const { wallet, markupCollection, hugeTokenId } = t.sim.fixtures;
    await addWatch({ kind: "wallet", target: wallet });
    const sender = fakeSender();
    await checker(sender).tick();
    t.sim.giveNft(wallet, undefined, { token: { contract: markupCollection } });
    t.sim.giveNft(wallet, undefined, { token: hugeTokenId });
    clock += FRESHNESS_MS.nfts;
    await checker(sender).tick();
    const replies = sender.sent.map((s) => s.reply);
    expect(replies.length).toBeGreaterThan(0);
    const telegram = JSON.stringify(replies.flatMap((r) => renderTelegram(r)));
    const discord = replies.map((r) => renderDiscord(r));
    expect(telegram).toContain("&lt;b&gt;");
    expect(telegram).not.toMatch(/<b>x<\/b>/);
    for (const message of discord) expect(message.allowedMentions).toEqual({ parse: [] });
    expect(JSON.stringify(discord)).not.toMatch(/(?<!\u200b)@everyone/);
    // The 78-digit id is carried as the string it is, never through a number.
    expect(telegram).toContain(hugeTokenId.tokenId.slice(0, 12));
    expect(telegram).not.toMatch(/e\+7\d/);
  });

  it("a post that failed to send is sent at the next round, once; a chat that refuses the bot pauses with the post kept", async () => {
    const { sender, c } = await failedPost("transient");
    const { wallet } = t.sim.fixtures;
    expect(sender.sent).toEqual([]);
    expect((await watchStoreOf(store).all())[0]?.pending).not.toBeNull();
    // After a restart too: the owed post is stored, and so is its chat's wait (30 s ±25%).
    await checker(sender).tick();
    expect(sender.sent).toEqual([]);
    clock += 40_000;
    await checker(sender).tick();
    expect(sender.sent).toHaveLength(1);
    expect((await watchStoreOf(store).all())[0]?.pending).toBeNull();
    await checker(sender).tick();
    expect(sender.sent).toHaveLength(1);

    t.sim.giveNft(wallet);
    clock += FRESHNESS_MS.nfts;
    sender.fail("permanent");
    await c.tick();
    expect((await watchStoreOf(store).all())[0]).toMatchObject({ pauseReason: "gone" });
    expect((await watchStoreOf(store).all())[0]?.pending).not.toBeNull();
    expect(sender.sent).toHaveLength(1);
    await store.close();
  });

  it("a chat's failed tries and its wait survive a restart: the next checker neither sends early nor starts counting again", async () => {
    const { sender } = await failedPost("transient");
    const waitOf = async () => (await store.sendWaits.all("watches"))[0];
    expect(await waitOf()).toMatchObject({ platform: "telegram", chatId: "c", attempts: 1 });
    const firstWait = ((await waitOf())?.until ?? 0) - clock;
    // 30 s spread ±25%.
    expect(firstWait).toBeGreaterThanOrEqual(22_500);
    expect(firstWait).toBeLessThanOrEqual(37_500);
    // "Restart": a new checker on the same store, before the wait ends: nothing is sent.
    const restarted = checker(sender);
    await restarted.tick();
    expect(sender.sent).toEqual([]);
    expect(restarted.waitingChats).toBe(1);
    // Once it ends, the next try fails again: the second failed try, waiting twice as long.
    clock += 40_000;
    sender.fail("transient");
    await checker(sender).tick();
    expect(await waitOf()).toMatchObject({ attempts: 2 });
    const secondWait = ((await waitOf())?.until ?? 0) - clock;
    expect(secondWait).toBeGreaterThanOrEqual(45_000);
    expect(secondWait).toBeLessThanOrEqual(75_000);
    // Then it goes through, and the wait is gone.
    clock += 80_000;
    await checker(sender).tick();
    expect(sender.sent).toHaveLength(1);
    expect(await waitOf()).toBeUndefined();
    await store.close();
  });

  it("forgets a waiting chat once its watches are removed, so the waits follow the chats with watches", async () => {
    const { watch, c } = await failedPost("transient");
    expect(c.waitingChats).toBe(1);
    await watchStoreOf(store).remove("telegram", "c", watch.id);
    await c.tick();
    expect(c.waitingChats).toBe(0);
    await store.close();
  });

  it("a chat that moved to a new id takes its watches along, and the post goes there", async () => {
    const { sender, c } = await failedPost("moved");
    expect(await watchStoreOf(store).forChat("telegram", "c")).toEqual([]);
    expect(await watchStoreOf(store).forChat("telegram", "c-new")).toHaveLength(1);
    await c.tick();
    expect(sender.sent.map((s) => s.chatId)).toEqual(["c-new"]);
    await store.close();
  });

  it("reads at most WATCH_CHECKS_PER_MINUTE a minute; the rest wait", async () => {
    store = openMemorySqliteStore();
    clock = start;
    const { collection, erc1155Collection, legacyCollection } = t.sim.fixtures;
    for (const target of [collection, erc1155Collection, legacyCollection])
      await addWatch({ kind: "collection", target, ownersPercent: 50 });
    // Last in line, a post owed from before: it goes out though the reads are spent.
    const owed = await addWatch({ kind: "wallet", target: t.sim.fixtures.wallet });
    await watchStoreOf(store).advance(
      owed.id,
      "{}",
      JSON.stringify({ reply: { text: "owed post" } }),
    );
    const sender = fakeSender();
    const c = checker(sender, 2);
    const before = reads("/owners_count/");
    await c.tick();
    expect(reads("/owners_count/")).toBe(before + 2);
    expect(c.stats.deferred).toBeGreaterThan(0);
    expect(sender.sent.map((m) => m.text)).toEqual(["\nowed post"]);
    await c.tick();
    expect(reads("/owners_count/")).toBe(before + 2);
    clock += MIN;
    await c.tick();
    expect(reads("/owners_count/")).toBe(before + 3);
    await store.close();
  });

  it("only the holder of the watches lease checks", async () => {
    store = openMemorySqliteStore();
    clock = start;
    await store.leases.acquire("watches", "someone-else", 60_000, clock);
    const c = checker(fakeSender());
    expect(await c.tick()).toBe(false);
    await store.close();
  });
});

describe("watches per chain", () => {
  let t: RuntimeSetup;
  beforeAll(async () => {
    t = await startRuntime({ CHAINS: "ethereum,base" });
  });
  afterAll(async () => {
    await t?.close();
  });

  it("a watch is on the chain named (or the channel's), and read on that chain", async () => {
    const chat = { id: "chains", kind: "group" as const };
    const base = t.sim.fixturesOf("base");
    const reply = await t.say(`/watch collection ${base.collection} owners 5 chain:base`, { chat });
    expect(reply.tone, t.text(reply)).toBe("success");
    expect(t.text(reply)).toContain("(Base)");
    const wallet = await t.say(`/watch wallet ${t.sim.fixtures.wallet}`, { chat });
    expect(wallet.tone, t.text(wallet)).toBe("success");
    const watches = await watchStoreOf(t.store).forChat("telegram", "chains");
    expect(watches.map((w) => [w.kind, w.chain])).toEqual([
      ["collection", "base"],
      ["wallet", "ethereum"],
    ]);
    const store = t.store;
    const sent: string[] = [];
    const checker = new WatchChecker({
      watches: watchStoreOf(store),
      apis: t.apis,
      chains: t.chains,
      outbound: outboundOf(
        store,
        {
          telegram: {
            maxInFlight: 1,
            async sendToChat(_chatId, r) {
              sent.push(r.text ?? "");
            },
            classifySendError: () => ({ kind: "transient", reason: "" }),
          },
        },
        { now: () => clock },
      ),
      leases: store.leases,
      holder: "h",
      logger: silentLogger(),
      settings: { tickMs: 1000, checksPerMinute: 100 },
      now: () => clock,
    });
    let clock = Date.now();
    const before = t.sim.requests.length;
    await checker.tick();
    const asked = t.sim.requests.slice(before);
    expect(asked.find((r) => r.path.includes("/owners_count/"))?.chain).toBe("base");
    expect(asked.find((r) => r.path.endsWith("/nfts"))?.chain).toBe("ethereum");
    // Base has no spam data: no spam filter asked for there; ethereum's wallet read has one.
    expect(asked.find((r) => r.path.endsWith("/nfts"))?.query.spam).toBe("SPAM_FILTER_EXCLUDE");
    t.sim.bumpOwners(base.collection, 40, "base");
    // The same address on ethereum does not move.
    clock += FRESHNESS_MS.owners;
    await checker.tick();
    expect(sent).toHaveLength(1);
    expect(sent[0]).toContain("on Base");
  });
});
