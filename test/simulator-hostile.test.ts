/**
 * Issue "What a community sees", item 1: the simulator keeps hostile collection names (markup,
 * javascript: links, control characters, right-to-left text, @everyone…) for the tests of
 * escaping, but never on the first pages of the lists a newcomer sees: every top list, the newest
 * contracts, the new mints of the first minutes, the collections held in common with the cast's
 * (/common, /audience's examples). Those lists also fill the bot's collection index (the top 100
 * of each, the newest 100 contracts), so autocomplete never offers one for a common word. Tests
 * that need them ask: deeper pages, or a hostile collection's address.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DURATIONS, NFT_CONTRACT_TYPES, TOP_METRICS } from "../src/api/schemas.ts";
import { CAST_COLLECTIONS, type Simulator, startSimulator } from "../src/simulator/index.ts";
import { MARKUP_NAME, SPAM_NAMES, TRICKY_NAMES } from "../src/simulator/names.ts";

const CHAINS = ["ethereum", "base", "polygon"];
/** What a first page shows; the index reads 100 of each list (src/core/collection-refresh.ts). */
const FIRST_PAGE = 25;
const INDEX_READ = 100;

const HOSTILE_SIGNS: readonly [string, RegExp][] = [
  ["a link's brackets", /[[\]]/],
  ["an HTML tag's brackets", /[<>]/],
  ["an asterisk", /\*/],
  ["underscores around a word", /__|(^|[^\p{L}\p{N}])_[^_\s][^_]*_/u],
  ["code, strike-through or spoiler marks", /`|~~|\|\|/],
  ["a javascript: link", /javascript:/i],
  ["an HTML entity", /&(#\d+|[a-z]+);/i],
  ["a backslash", /\\/],
  ["a control character", /\p{Cc}/u],
  ["an invisible or direction character", /\p{Cf}/u],
  ["a mass mention", /@(everyone|here)\b/i],
  ["right-to-left text", /[\p{Script=Arabic}\p{Script=Hebrew}]/u],
  ["full-width letters", /[\uFF01-\uFF5E]/],
  ["a name over 100 characters", /^.{101,}$/su],
];
const TEST_STRINGS = new Set([MARKUP_NAME, ...TRICKY_NAMES, ...SPAM_NAMES]);

/** Why a name is hostile, or undefined. */
function hostile(name: string): string | undefined {
  if (TEST_STRINGS.has(name)) return "one of the simulator's test strings";
  return HOSTILE_SIGNS.find(([, sign]) => sign.test(name))?.[0];
}

async function get<T>(sim: Simulator, chain: string, path: string): Promise<T> {
  const response = await fetch(`${sim.urlOf(chain)}${path}`, {
    headers: { "x-api-key": sim.apiKey },
  });
  expect(response.status, path).toBe(200);
  return (await response.json()) as T;
}

interface Row {
  list: string;
  rank: number;
  name: string;
}

const types = (list: readonly string[]) => list.map((type) => `contractTypes=${type}`).join("&");
const START = Date.UTC(2025, 5, 1, 12);

/** The first rows of every list a newcomer sees on a chain (and the index reads). */
async function firstRows(sim: Simulator, chain: string): Promise<Row[]> {
  const rows: Row[] = [];
  const add = (list: string, names: readonly string[], first: number) =>
    rows.push(...names.slice(0, first).map((name, index) => ({ list, rank: index + 1, name })));
  for (const metric of TOP_METRICS)
    for (const duration of DURATIONS) {
      const path = `/collections/v1beta2/top/${metric}/${duration}?limit=${INDEX_READ}`;
      const { collections } = await get<{ collections: { contractName: string }[] }>(
        sim,
        chain,
        path,
      );
      add(
        path,
        collections.map((item) => item.contractName),
        INDEX_READ,
      );
    }
  type Contracts = { contracts: { name: string }[] };
  const contractLists: [string, number][] = [
    [`sortDirection=SORT_DIRECTION_DESC&${types(NFT_CONTRACT_TYPES)}&limit=${INDEX_READ}`, 100],
    [`sortDirection=SORT_DIRECTION_DESC&${types(["TYPE_ERC721"])}&limit=${FIRST_PAGE}`, 25],
    [`sortDirection=SORT_DIRECTION_DESC&${types(["TYPE_ERC1155"])}&limit=${FIRST_PAGE}`, 25],
    // The new-contract poller's first reads: what it alerts in the first minutes.
    [
      `${types(NFT_CONTRACT_TYPES)}&limit=${INDEX_READ}&blockTimestampGt=${new Date(START - 600_000).toISOString()}`,
      100,
    ],
  ];
  for (const [query, first] of contractLists) {
    const path = `/foundational/v1beta2/contracts?${query}`;
    const { contracts } = await get<Contracts>(sim, chain, path);
    add(
      path,
      contracts.map((contract) => contract.name),
      first,
    );
  }
  for (const collection of CAST_COLLECTIONS) {
    const address = collection.address.toLowerCase();
    for (const path of [
      `/audiences/v1beta1/common/collections/${address}`,
      `/audiences/v1beta1/common/collections/${address}/trends?duration=DURATION_7_DAYS`,
    ]) {
      const { collections } = await get<{ collections: { name: string }[] }>(sim, chain, path);
      add(
        path,
        collections.map((item) => item.name),
        FIRST_PAGE,
      );
    }
  }
  return rows;
}

const hostileRows = (rows: readonly Row[]) =>
  rows.flatMap((row) => {
    const why = hostile(row.name);
    return why ? [`${row.list} row ${row.rank}: ${JSON.stringify(row.name)} (${why})`] : [];
  });

describe("hostile names stay off the first pages", () => {
  let clock = START;
  let asStarted: Simulator;
  let untimed: Simulator;
  beforeAll(async () => {
    // As `npm start` runs it (a contract every 5 s), a few minutes after start.
    asStarted = await startSimulator({ chains: CHAINS, mintIntervalMs: 5000, now: () => clock });
    clock += 3 * 60_000;
    untimed = await startSimulator({ chains: CHAINS, now: () => START });
  });
  afterAll(async () => {
    await asStarted?.close();
    await untimed?.close();
  });

  it("the detector knows the test strings and passes ordinary names", () => {
    for (const name of [MARKUP_NAME, "[Click](javascript:alert(1)) Gallery", "Multi\nLine"])
      expect(hostile(name), name).toBeDefined();
    expect(hostile("_italic_ *star*")).toBeDefined();
    expect(hostile("مجموعة الفن الرقمي")).toBeDefined();
    for (const name of ["Bored Ape Yacht Club", "Lazy Otters Club", "Hashed Names", "Café"])
      expect(hostile(name), name).toBeUndefined();
  });

  it.each(CHAINS)("on %s, as npm start serves it: none in any list's first rows", async (chain) => {
    const rows = await firstRows(asStarted, chain);
    expect(rows.length).toBeGreaterThan(1000);
    expect(hostileRows(rows)).toEqual([]);
  });

  it.each(CHAINS)("on %s, with timed mints off: none either", async (chain) => {
    const rows = await firstRows(untimed, chain);
    expect(rows.length).toBeGreaterThan(1000);
    expect(hostileRows(rows)).toEqual([]);
  });

  it("tests that ask find them: deeper pages of the year's top lists, every contract, a fixture's address", async () => {
    for (const chain of CHAINS) {
      for (const metric of TOP_METRICS) {
        const { collections } = await get<{
          collections: { contractAddress: string; contractName: string }[];
        }>(untimed, chain, `/collections/v1beta2/top/${metric}/DURATION_365_DAYS?limit=500`);
        const names = collections.map((item) => item.contractName);
        for (const name of [MARKUP_NAME, ...TRICKY_NAMES])
          expect(names.indexOf(name), `${chain} ${metric} ${name}`).toBeGreaterThanOrEqual(
            INDEX_READ,
          );
        const markup = untimed.fixturesOf(chain).markupCollection;
        expect(collections.find((item) => item.contractAddress === markup)?.contractName).toBe(
          MARKUP_NAME,
        );
      }
      const { contracts } = await get<{ contracts: { name: string }[] }>(
        untimed,
        chain,
        "/foundational/v1beta2/contracts?limit=500",
      );
      const names = new Set(contracts.map((contract) => contract.name));
      for (const name of TEST_STRINGS) expect(names.has(name), `${chain} ${name}`).toBe(true);
    }
  });
});
