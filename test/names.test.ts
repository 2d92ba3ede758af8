import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { allCommands } from "../commands/index.ts";
import { type ApiClient, createApiClient } from "../src/api/client.ts";
import { DURATIONS, NFT_CONTRACT_TYPES, TOP_METRICS } from "../src/api/schemas.ts";
import { toChecksumAddress } from "../src/api/validate.ts";
import { apiClientSettings, createBot } from "../src/bot.ts";
import { parseConfig } from "../src/config.ts";
import { short } from "../src/core/format.ts";
import { KnownCollections } from "../src/core/known-collections.ts";
import { Runtime } from "../src/core/runtime.ts";
import { parseTextArgs } from "../src/core/text-args.ts";
import { silentLogger } from "../src/log.ts";
import { renderTelegram } from "../src/render/telegram.ts";
import { SqlActionStore } from "../src/store/shared/actions.ts";
import { SqlCollectionIndexStore } from "../src/store/shared/collections.ts";
import { sqliteSql } from "../src/store/sqlite/query.ts";
import { groupChat, privateChat, startFakeTelegram, user } from "./fakes/telegram/index.ts";
import { type RuntimeSetup, startRuntime, testInvocation } from "./helpers.ts";
import { telegramAdapterFor } from "./telegram-helpers.ts";
import { startTestSimulator } from "./test-simulator.ts";

/**
 * Collections by name: what a person types for a collection (its name in any case and
 * punctuation, its symbol or initials, a unique prefix, the short form the bot prints) answers
 * for that collection, on the simulator's seeded synthetic collections. The names are read from
 * the same lists the bot fills its index from, and chosen so that the rules below make them
 * unambiguous; more collections in the simulator do not break these tests.
 */

// ---------------------------------------------------------------------------------------------
// The matching rules as a person sees them, to choose the names the tests type.

const wordsOf = (text: string) =>
  text
    .normalize("NFKD")
    .replace(/\p{M}+/gu, "")
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean);
const keyOf = (text: string) => wordsOf(text).join("");
const initialsOf = (text: string) => {
  const words = wordsOf(text);
  return words.length >= 2 ? words.map((word) => word[0]).join("") : "";
};

interface Known {
  address: string;
  name: string;
  symbol: string;
}

/** The collections the index is filled from: every top list and the newest NFT contracts. */
async function universe(api: ApiClient): Promise<{ all: Known[]; top: Known[] }> {
  const lists = await Promise.all(
    TOP_METRICS.flatMap((metric) =>
      DURATIONS.map((duration) => api.collections.top(metric, duration, { limit: 100 })),
    ),
  );
  const { contracts } = await api.foundational.contracts({
    sortDirection: "SORT_DIRECTION_DESC",
    contractTypes: NFT_CONTRACT_TYPES,
    limit: 100,
  });
  const byAddress = new Map<string, Known>();
  const top: Known[] = [];
  for (const list of lists) {
    for (const item of list.collections) {
      const known = { address: item.contractAddress, name: item.contractName, symbol: "" };
      if (!byAddress.has(item.contractAddress.toLowerCase())) top.push(known);
      byAddress.set(item.contractAddress.toLowerCase(), known);
    }
  }
  for (const contract of contracts) {
    const known = byAddress.get(contract.address.toLowerCase());
    byAddress.set(contract.address.toLowerCase(), {
      address: contract.address,
      name: contract.name || known?.name || "",
      symbol: contract.symbol,
    });
  }
  return { all: [...byAddress.values()], top };
}

/** Whether `text` names nothing else than `target` by name, symbol or initials. */
function namesOnly(all: Known[], target: Known, text: string): boolean {
  const key = keyOf(text);
  return all.every(
    (c) =>
      c.address === target.address ||
      (keyOf(c.name) !== key && keyOf(c.symbol) !== key && initialsOf(c.name) !== key),
  );
}

interface Names {
  /** A top collection of two words or more, letters only, whose name and initials are its own. */
  target: Known;
  initials: string;
  /** Most of the target's name, which begins no other name. */
  prefix: string;
  /** Two or more names begin with it, and it names none exactly. */
  shared: { text: string; count: number };
  /** The target's name with one letter left out: it matches no name. */
  typo: string;
}

function chooseNames(all: Known[], top: Known[]): Names {
  const startsWith = (key: string) => all.filter((c) => keyOf(c.name).startsWith(key));
  const target = top.find((c) => {
    if (!/^[A-Za-z]+( [A-Za-z]+)+$/.test(c.name)) return false;
    const key = keyOf(c.name);
    const prefix = c.name.slice(0, Math.ceil(c.name.length * 0.75)).trim();
    return (
      namesOnly(all, c, c.name) &&
      namesOnly(all, c, initialsOf(c.name)) &&
      namesOnly(all, c, prefix) &&
      startsWith(keyOf(prefix)).length === 1 &&
      key.length >= 8
    );
  });
  if (!target) throw new Error("no top collection fits the tests");
  const prefix = target.name.slice(0, Math.ceil(target.name.length * 0.75)).trim();
  let shared: Names["shared"] | undefined;
  for (const c of top) {
    const text = c.name.split(" ").slice(0, 2).join(" ");
    const key = keyOf(text);
    const count = startsWith(key).length;
    if (
      /^[A-Za-z]+ [A-Za-z]+$/.test(text) &&
      count >= 2 &&
      namesOnly(all, { ...c, address: "" }, text)
    ) {
      shared = { text, count };
      break;
    }
  }
  if (!shared) throw new Error("no two collections share a prefix");
  const key = keyOf(target.name);
  const typo = `${target.name.slice(0, 4)}${target.name.slice(5)}`;
  const typoKey = keyOf(typo);
  if (all.some((c) => keyOf(c.name).includes(typoKey) || keyOf(c.symbol) === typoKey))
    throw new Error(`the typo ${typo} of ${key} matches a name`);
  return { target, initials: initialsOf(target.name).toUpperCase(), prefix, shared, typo };
}

// ---------------------------------------------------------------------------------------------

let t: RuntimeSetup | undefined;
const cleanups: (() => Promise<unknown> | unknown)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await t?.close();
  t = undefined;
});

/** A runtime with a cold index (nothing refreshed yet), the names to type, and a clock. */
async function setUp(
  env: Record<string, string> = {},
): Promise<{ t: RuntimeSetup; names: Names; clock: { ms: number } }> {
  const clock = { ms: 1_000_000 };
  const setup = await startRuntime(env, {}, [], { monotonic: () => clock.ms });
  t = setup;
  // A client of its own, so what it reads is not in the runtime's client cache.
  const reader = createApiClient(
    apiClientSettings(setup.config, setup.sim.url, setup.sim.apiKey),
    silentLogger(),
  );
  cleanups.push(() => reader.close());
  const { all, top } = await universe(reader);
  return { t: setup, names: chooseNames(all, top), clock };
}

const topReads = (setup: RuntimeSetup) => setup.sim.countRequests("/collections/v1beta2/top/");
const newestReads = (setup: RuntimeSetup) =>
  setup.sim.countRequests("/foundational/v1beta2/contracts");

describe("a collection by name", () => {
  it("the first name fills a cold index once (every top list and the newest contracts), then answers", async () => {
    // The newest contracts are cached for 30 s of real time: not at all here, to see each read.
    const { t, names, clock } = await setUp({ CACHE_TTL_CONTRACTS_S: "0" });
    const before = { top: topReads(t), newest: newestReads(t) };
    const reply = await t.say(`/audience ${names.target.name}`);
    expect(reply.title).toBe(`Audience of ${names.target.name}`);
    expect(topReads(t) - before.top).toBe(12);
    expect(newestReads(t) - before.newest).toBe(1);

    // Names already known need no refresh; a miss within the minute does not refresh again.
    await t.say(`/stats ${names.target.name.toLowerCase()}`);
    const miss = await t.say("/audience Qwxz Unheard Of");
    expect(miss.text).toContain('I know no collection named "Qwxz Unheard Of"');
    expect(topReads(t) - before.top).toBe(12);

    // A minute later a miss refreshes once more, and two misses at once share that refresh: the
    // newest contracts are read again; the top lists, fresh for 15 minutes, come from the cache.
    clock.ms += 61_000;
    await Promise.all([t.say("/audience Qwxz One"), t.say("/stats Qwxz Two")]);
    expect(newestReads(t) - before.newest).toBe(2);
    expect(topReads(t) - before.top).toBe(12);
  });

  it("ignores case, spaces and punctuation; takes the initials and a unique prefix", async () => {
    const { t, names } = await setUp();
    const { name } = names.target;
    const typed = [
      name.toUpperCase(),
      name.toLowerCase().replaceAll(" ", "-"),
      `"${name.toLowerCase().replaceAll(" ", "")}"`,
      names.initials,
      names.initials.toLowerCase(),
      names.prefix,
    ];
    for (const text of typed) {
      const reply = await t.say(`/stats ${text}`);
      expect(reply.title, text).toBe(`Financial stats of the owners of ${name}`);
    }
    // Between other options, and by name on Telegram: name:value takes one word.
    const owners = await t.say(`/owners ${names.prefix} 7d`);
    expect(owners.title).toBe(`Owners of ${name}`);
    const nft = await t.say(`/audience collection:${names.initials}`);
    expect(nft.title).toBe(`Audience of ${name}`);
  });

  it("the short form the bot prints, with … or ..., names the one collection it fits", async () => {
    const { t, names } = await setUp();
    const shown = short(names.target.address);
    expect(shown).toMatch(/^0x[0-9a-fA-F]{4}…[0-9a-fA-F]{4}$/);
    for (const text of [shown, shown.replace("…", "..."), shown.toLowerCase()]) {
      const reply = await t.say(`/audience ${text}`);
      expect(reply.title, text).toBe(`Audience of ${names.target.name}`);
    }
    const unknown = await t.say("/audience 0x0000…0001");
    expect(unknown.text).toMatch(/I know no collection at "0x0000…0001".*whole address/);
    expect(unknown.tone).toBe("warning");
  });

  it("several matches: up to 5 buttons, and pressing one answers for that collection", async () => {
    const { t, names } = await setUp();
    const reply = await t.say(`/audience ${names.shared.text}`);
    expect(reply.text).toContain(
      `"${names.shared.text}" matches ${names.shared.count} collections`,
    );
    const buttons = reply.buttons ?? [];
    expect(buttons.length).toBe(Math.min(5, names.shared.count));
    const chosen = buttons[1];
    const chosenName = /^(.*) \(0x[0-9a-fA-F]{4}…[0-9a-fA-F]{4}\)$/.exec(chosen?.label ?? "")?.[1];
    expect(chosenName?.toLowerCase().replace(/\s/g, "")).toContain(
      names.shared.text.toLowerCase().replace(/\s/g, ""),
    );
    const answer = await t.press(chosen?.id ?? "");
    expect(answer.title).toBe(`Audience of ${chosenName}`);
    // The other options of the command are kept: /owners with a period.
    const owners = await t.say(`/owners ${names.shared.text} 7d`);
    const pressed = await t.press(owners.buttons?.[0]?.id ?? "");
    expect(pressed.title).toMatch(/^Owners of /);
    expect(pressed.footer).toMatch(/^7 daily points/);
  });

  it("no match: says so, suggests the closest names, and reminds that an address works", async () => {
    const { t, names } = await setUp();
    const reply = await t.say(`/audience ${names.typo}`);
    expect(reply.text).toContain(`I know no collection named "${names.typo}"`);
    expect(reply.text).toContain(`Did you mean ${names.target.name}`);
    expect(reply.text).toContain(
      "A contract address (0x…) or an OpenSea or Etherscan link always works",
    );
    expect(reply.tone).toBe("warning");
    const suggestion = reply.buttons?.find((b) => b.label.startsWith(names.target.name));
    expect((await t.press(suggestion?.id ?? "")).title).toBe(`Audience of ${names.target.name}`);

    const nothing = await t.say("/stats zzqqxxvvkk");
    expect(nothing.text).toMatch(/I know no collection named "zzqqxxvvkk"\. A contract address/);
    expect(nothing.buttons ?? []).toEqual([]);
  });

  it("an NFT's collection by name, with its token id", async () => {
    const { t, names } = await setUp();
    const reply = await t.say(`/nft ${names.initials} 1`);
    // Whether or not the collection has a token 1, the request went to the named collection.
    expect(reply.text ?? "").not.toMatch(/not a valid contract address/);
    expect(
      t.sim.requests.some((r) =>
        r.path
          .toLowerCase()
          .startsWith(`/foundational/v1beta2/nfts/${names.target.address.toLowerCase()}/`),
      ),
    ).toBe(true);
  });

  it("bad input on the name path answers clearly and asks the data service nothing", async () => {
    const { t, names } = await setUp();
    // Warm the index first, so what follows reads nothing but what the input itself would ask for.
    await t.say(`/stats ${names.target.name}`);
    const before = t.sim.requests.length;

    const hugeId = await t.say(`/nft ${names.initials} ${"9".repeat(79)}`);
    expect(hugeId.tone).toBe("warning");
    expect(hugeId.text).toMatch(/token/i);

    const markup = await t.say("/audience <b>Bored</b> @everyone");
    expect(markup.tone).toBe("warning");
    // Quoted as typed, and escaped where it is rendered.
    const html = renderTelegram(markup)
      .map((message) => (message.kind === "text" ? message.text : ""))
      .join("");
    expect(html).toContain("&lt;b&gt;Bored&lt;/b&gt;");
    expect(html).not.toContain("<b>Bored");

    const nul = await t.say("/audience Bo\u0000red\u0007");
    // The control characters do not count: "bored" is asked about, and several collections match.
    expect(nul.tone).not.toBe("error");
    expect(nul.text).not.toMatch(/[\u0000\u0007]/);

    // Only the index refresh a miss may trigger reads anything: never a collection endpoint.
    const asked = t.sim.requests.slice(before).map((r) => r.path);
    expect(asked.filter((path) => !/\/top\/|\/contracts$/.test(path))).toEqual([]);
  });

  it("addresses and links keep working without the index", async () => {
    const { t } = await setUp();
    const before = topReads(t);
    const f = t.sim.fixtures;
    expect((await t.say(`/audience ${f.collection}`)).title).toMatch(/^Audience of /);
    expect((await t.say(`/stats https://etherscan.io/address/${f.collection}`)).title).toMatch(
      /^Financial stats of the owners of /,
    );
    expect((await t.say("/owners 0x12345")).text).toContain("not a valid contract address");
    expect(topReads(t)).toBe(before);
  });
});

describe("a wallet by the short form the bot printed", () => {
  it("resolves to the wallet this chat was shown, and says clearly when it cannot", async () => {
    const { t, names } = await setUp();
    const { owner } = await t.api.collections.ownersList(names.target.address, {
      sortDirection: "SORT_DIRECTION_DESC",
      limit: 10,
    });
    const holder = owner[0]?.address ?? "";
    const shown = short(holder);
    const here = { chat: { id: "chat-wallets", kind: "group" as const } };
    const before = await t.say(`/whois ${shown}`, here);
    expect(before.text).toContain(`"${shown}" is a shortened address`);
    expect(before.text).toContain("paste the whole address");

    const owners = await t.say(`/owners ${names.target.address}`, here);
    expect(t.text(owners)).toContain(shown);
    const whois = await t.say(`/whois ${shown.replace("…", "...")}`, here);
    expect(whois.title?.toLowerCase()).toBe(holder.toLowerCase());
    const wallet = await t.say(`/wallet ${shown}`, here);
    expect(t.text(wallet).toLowerCase()).toContain(holder.toLowerCase());

    const elsewhere = await t.say(`/whois ${shown}`, { chat: { id: "chat-other", kind: "group" } });
    expect(elsewhere.text).toContain("have not shown a wallet like it in this chat");
  });
});

describe("the collection index", () => {
  it("is kept in SQLite: a new runtime on the same database knows the names at once", async () => {
    const { t, names } = await setUp();
    expect((await t.say(`/audience ${names.target.name}`)).title).toBe(
      `Audience of ${names.target.name}`,
    );
    await t.runtime.collections.flush();
    const before = topReads(t);

    const collections = new KnownCollections({
      store: new SqlCollectionIndexStore(sqliteSql(t.db)),
    });
    expect(await collections.load()).toBeGreaterThan(100);
    const restarted = new Runtime({
      commands: allCommands(),
      api: t.api,
      actions: new SqlActionStore(sqliteSql(t.db)),
      charts: t.charts,
      logger: silentLogger(),
      settings: {
        reportsPerHour: 10,
        ipfsGateway: t.config.ipfsGateway,
      },
      deadlineMs: 20_000,
      rateLimit: { burst: 100, perMinute: 1000 },
      buttonTtlSeconds: 600,
      collections,
      store: t.store,
    });
    const reply = await restarted.runText(testInvocation(), "stats", names.initials);
    expect(reply.title).toBe(`Financial stats of the owners of ${names.target.name}`);
    expect(topReads(t)).toBe(before);
  });

  it("is bounded: past its size the least recently seen go, from the database too", async () => {
    const { t } = await setUp();
    const store = new SqlCollectionIndexStore(sqliteSql(t.db));
    const index = new KnownCollections({ store, max: 2 });
    const address = (n: number) => `0x${n.toString(16).padStart(40, "0")}`;
    index.remember([{ address: address(1), name: "One" }]);
    index.remember([{ address: address(2), name: "Two" }]);
    index.remember([{ address: address(1), name: "One", symbol: "ONE" }]);
    index.remember([{ address: address(3), name: "Three" }]);
    await index.flush();
    const kept = await store.load();
    expect(kept.map((c) => c.name).sort()).toEqual(["One", "Three"]);
    expect(kept.find((c) => c.name === "One")?.symbol).toBe("ONE");
  });

  it("a collection shown again unchanged is not written again until an hour has passed", async () => {
    let now = 1_000_000;
    const writes: string[][] = [];
    const index = new KnownCollections({
      now: () => now,
      store: {
        load: async () => [],
        write: async ({ put }) => {
          writes.push(put.map((c) => c.name));
        },
      },
    });
    const one = { address: `0x${"1".padStart(40, "0")}`, name: "One" };
    index.remember([one]);
    for (let i = 0; i < 5; i++) {
      now += 60_000;
      index.remember([one]);
    }
    index.remember([{ ...one, name: "One renamed" }]);
    now += 3_600_000;
    index.remember([{ ...one, name: "One renamed" }]);
    await index.flush();
    expect(writes).toEqual([["One"], ["One renamed"], ["One renamed"]]);
  });

  it("autocomplete ranks exact > symbol > prefix > word prefix > contains, then popularity, then recency", async () => {
    let now = 1_000;
    const index = new KnownCollections({ now: () => now++ });
    const address = (n: number) => `0x${n.toString(16).padStart(40, "0")}`;
    index.remember([
      { address: address(1), name: "Grapes" },
      { address: address(2), name: "Bored Ape Club" },
      { address: address(3), name: "Apex Legends" },
      { address: address(4), name: "Apes Together" },
      { address: address(5), name: "Zeta", symbol: "APE" },
      { address: address(6), name: "Ape" },
    ]);
    index.remember([{ address: address(7), name: "Apeiron" }]);
    // Apes Together ranks in a top list, Apex Legends and Apeiron do not (Apeiron seen last).
    index.rank([[{ address: address(4), name: "Apes Together" }]]);
    t = await startRuntime({}, {}, [], { collections: index });
    const { runtime } = t;
    expect(
      (await runtime.autocomplete("audience", "collection", "ape")).map((c) => c.name),
    ).toEqual([
      `Ape (${short(address(6))})`,
      `Zeta (${short(address(5))})`,
      `Apes Together (${short(address(4))})`,
      `Apeiron (${short(address(7))})`,
      `Apex Legends (${short(address(3))})`,
      `Bored Ape Club (${short(address(2))})`,
      `Grapes (${short(address(1))})`,
    ]);
    expect((await runtime.autocomplete("audience", "collection", "ape"))[0]?.value).toBe(
      toChecksumAddress(address(6)),
    );
    // Initials rank after a symbol.
    index.remember([
      { address: address(8), name: "Bored Ape Yacht Club" },
      { address: address(9), name: "Copycat", symbol: "BAYC" },
    ]);
    expect(index.search("bayc").map((c) => c.name)).toEqual(["Copycat", "Bored Ape Yacht Club"]);
  });
});

describe("text arguments", () => {
  const command = (name: string) => allCommands().find((c) => c.name === name)!;

  it("a name takes the words up to the next option's", () => {
    expect(parseTextArgs(command("owners"), "bored ape yacht club 7d")).toEqual({
      collection: "bored ape yacht club",
      duration: "7d",
    });
    expect(parseTextArgs(command("nft"), "bored ape yacht club 42")).toEqual({
      item: "bored ape yacht club",
      token_id: "42",
    });
    expect(parseTextArgs(command("audience"), "Bored Ape Yacht Club")).toEqual({
      collection: "Bored Ape Yacht Club",
    });
  });

  it("two names take a word each (quotes group more); addresses stay apart; choices keep their errors", () => {
    expect(parseTextArgs(command("segment"), "bayc mayc 2 any")).toMatchObject({
      collection: "bayc",
      collection2: "mayc",
      min_owned: "2",
      condition: "any",
    });
    expect(parseTextArgs(command("segment"), '"bored ape yacht club" mayc')).toMatchObject({
      collection: "bored ape yacht club",
      collection2: "mayc",
    });
    const a = "0xBC4CA0EdA7647A8aB7C2061c2E118A18a936f13D";
    expect(parseTextArgs(command("segment"), `${a} 2`)).toMatchObject({
      collection: a,
      min_owned: "2",
    });
    expect(parseTextArgs(command("wallet"), "vitalik.eth maybe")).toMatchObject({
      wallet: "vitalik.eth",
      spam: "maybe",
    });
  });
});

// ---------------------------------------------------------------------------------------------
// End to end: the real Telegram adapter against the fake Bot API, and the console bot.

describe("end to end", () => {
  it("Telegram: /audience <name> and /stats <initials> answer with data", async () => {
    const { t, names } = await setUp();
    const fake = await startFakeTelegram();
    const adapter = telegramAdapterFor(fake, t.runtime);
    await adapter.start();
    cleanups.push(() => fake.close());
    cleanups.push(() => adapter.stop());
    const alice = user(1001, "Alice", "alice");
    const group = groupChat(-5001, "Apes");
    const answer = async (chat: Parameters<typeof fake.message>[0], text: string) => {
      const mark = fake.sent.length;
      fake.pushUpdate(fake.message(chat, alice, text));
      const call = await fake.waitFor(
        (c) => c.seq > mark && c.ok && (c.method === "sendMessage" || c.method === "sendPhoto"),
        15_000,
      );
      return String(call.params.caption ?? call.params.text ?? "");
    };
    expect(await answer(privateChat(alice), `/audience ${names.target.name}`)).toContain(
      `Audience of ${names.target.name}`,
    );
    expect(await answer(group, `/stats@${fake.botInfo.username} ${names.initials}`)).toContain(
      `Financial stats of the owners of ${names.target.name}`,
    );
  });

  it("the bot fills the index in the background at start, and learns new contracts from the poller", async () => {
    const sim = await startTestSimulator({ faults: { latencyMs: 300 } });
    cleanups.push(() => sim.close());
    const dataDir = mkdtempSync(join(tmpdir(), "bot-names-"));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const bot = await createBot(
      parseConfig({
        API_BASE_URL: sim.url,
        API_KEY: sim.apiKey,
        DATA_DIR: dataDir,
        POLL_INTERVAL_S: "1",
      }),
      { logger: silentLogger(), input: new PassThrough(), output: new PassThrough() },
    );
    await bot.start();
    cleanups.push(() => bot.stop());
    // Start did not wait for the lists (each answer takes 300 ms); they arrive after.
    expect(bot.runtime.collections.size).toBe(0);
    await expect.poll(() => bot.runtime.collections.size, { timeout: 10_000 }).toBeGreaterThan(100);
    expect(sim.countRequests("/collections/v1beta2/top/")).toBe(12);

    const minted = sim
      .mint(5)
      .find(
        (c) =>
          c.name !== "" &&
          c.types.some((type) => (NFT_CONTRACT_TYPES as readonly string[]).includes(type)),
      );
    await expect
      .poll(() => bot.runtime.collections.name(minted?.address ?? ""), { timeout: 10_000 })
      .toBe(minted?.name);
  });

  it("console: the bot as npm start wires it answers /audience <name> and /stats <initials>", async () => {
    const sim = await startTestSimulator();
    cleanups.push(() => sim.close());
    const reader = createApiClient(
      apiClientSettings(parseConfig({}), sim.url, sim.apiKey),
      silentLogger(),
    );
    cleanups.push(() => reader.close());
    const { all, top } = await universe(reader);
    const names = chooseNames(all, top);
    const dataDir = mkdtempSync(join(tmpdir(), "bot-names-"));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const input = new PassThrough();
    const output = new PassThrough();
    let printed = "";
    output.on("data", (chunk) => {
      printed += String(chunk);
    });
    const bot = await createBot(
      parseConfig({ API_BASE_URL: sim.url, API_KEY: sim.apiKey, DATA_DIR: dataDir }),
      { logger: silentLogger(), input, output },
    );
    await bot.start();
    cleanups.push(() => bot.stop());
    input.end(`/audience ${names.target.name}\n/stats ${names.initials}\n`);
    await bot.finished;
    expect(printed).toContain(`Audience of ${names.target.name}`);
    expect(printed).toContain(`Financial stats of the owners of ${names.target.name}`);
  });
});
