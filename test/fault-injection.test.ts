/**
 * Fault injection (issue 9): the simulator at 20% 5xx (500/502/503/504), 5% hangs and bursts of
 * 429 with Retry-After, and 1,000 commands and button presses through the runtime, 20 at a time.
 * Every one must be answered with a result or a clear error sentence within its deadline, with no
 * unhandled rejection and the process still serving afterwards.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Invocation } from "../src/core/command.ts";
import type { Outcome } from "../src/core/outcome.ts";
import type { RenderableReply } from "../src/core/reply.ts";
import { type RuntimeSetup, startRuntime } from "./helpers.ts";

const DEADLINE_MS = 3000;
/** A correctness bound (the deadline plus event-loop slack), not a performance target. */
const MARGIN_MS = 1500;
const TOTAL = 1000;
const CONCURRENCY = 20;
const PRESS_SHARE = 0.12;

const ENV: Record<string, string> = {
  COMMAND_DEADLINE_MS: String(DEADLINE_MS),
  API_TIMEOUT_MS: "800",
  API_RETRIES: "2",
  API_RETRY_MIN_DELAY_MS: "50",
  API_RETRY_MAX_DELAY_MS: "400",
  API_RETRY_MAX_TOTAL_MS: "2000",
  REPORTS_PER_HOUR: "10000",
  // No response cache: every command goes upstream and meets the faults (single flight stays).
  CACHE_TTL_BEHAVIORS_S: "0",
  CACHE_TTL_AUDIENCE_S: "0",
  CACHE_TTL_CONTRACTS_S: "0",
  CACHE_TTL_TOP_S: "0",
  CACHE_TTL_OWNERSHIP_S: "0",
  CACHE_TTL_NFT_S: "0",
  CACHE_TTL_ENS_S: "0",
};

/** The sentences of `apiErrorMessage` (src/core/api-errors.ts), one pattern per error kind. */
const API_SENTENCES: [kind: string, pattern: RegExp][] = [
  ["not_found", /^No ENS name .+ is registered\.$/],
  ["not_found", /^No ENS name points to that address\.$/],
  ["not_found", /^No token \S+ in collection \S+ on this chain\.$/],
  ["not_found", /^No collection \S+ on this chain\.$/],
  ["not_found", /^No data for wallet .+\.$/],
  ["not_found", /^The data service has nothing for that\.$/],
  ["bad_request", /^The data service refused that request: /],
  ["unauthorized", /^The data service refused the bot's key: tell the bot's operator\.$/],
  ["rate_limited", /^The data service is busy, try again in \d+ s\.$/],
  ["unavailable", /^The data service is unavailable right now\. Try again in a minute\.$/],
  ["timeout", /^The data service did not answer in time\. Try again shortly\.$/],
  [
    "invalid_response",
    /^The data service sent an answer I could not read(?: \(at .+\))?\. \(ref [0-9a-f]{10}\)$/,
  ],
];
/** Kinds the injected faults can cause; any other kind means a valid request was refused. */
const EXPECTED_API_KINDS = new Set(["unavailable", "timeout", "rate_limited"]);
const DEADLINE_SENTENCE = `That took longer than ${Math.round(DEADLINE_MS / 1000)} s, so I stopped. Try again, or ask for less.`;
const APOLOGY = /something went wrong/i;

/** What a successful answer of each command (or button action) looks like. */
const SUCCESS: Record<string, (reply: RenderableReply) => boolean> = {
  whois: (r) => r.fields?.some((f) => f.name === "Behavior") === true,
  audience: (r) => /^Audience of /.test(r.title ?? ""),
  "audience:samples": (r) => /^Sample wallets of /.test(r.title ?? ""),
  top: (r) => /^Top collections by /.test(r.title ?? ""),
  "top:page": (r) => /^Top collections by /.test(r.title ?? ""),
  nft: (r) => r.footer === "NFT details",
  "nft:raw": (r) => /^Raw metadata of #/.test(r.title ?? ""),
  behaviors: (r) => /^Behaviors of /.test(r.title ?? ""),
  contracts: (r) => /^Newest /.test(r.title ?? ""),
  wallet: (r) => /NFTs of /.test(r.title ?? ""),
  "wallet:page": (r) => /NFTs of /.test(r.title ?? ""),
  owners: (r) => /^Owners of /.test(r.title ?? ""),
  common: (r) => /in common with /.test(r.title ?? ""),
  "common:page": (r) => /in common with /.test(r.title ?? ""),
  stats: (r) => /^Financial stats of the owners of /.test(r.title ?? ""),
  walletstats: (r) => /^Financial stats of /.test(r.title ?? ""),
  profile: (r) => /^Financial profile of /.test(r.title ?? ""),
  segment: (r) => /^Wallets holding /.test(r.title ?? ""),
  "segment:page": (r) => /^Wallets holding /.test(r.title ?? ""),
  "segment:csv": (r) => r.title === "Segment export",
  report: (r) =>
    /^(Reported as |You already reported |The data service refused the report |The data service does not take)/.test(
      r.text ?? "",
    ),
  "report:ask": (r) => /^Report as /.test(r.title ?? ""),
  "report:confirm": (r) =>
    /^(Reported as |You already reported |The data service refused the report )/.test(r.text ?? ""),
  link: (r) => /^Wallets are no longer linked on your word/.test(r.text ?? ""),
};

type Task =
  | { kind: "say"; key: string; line: string; who: Partial<Invocation> }
  | { kind: "press"; key: string; id: string; who: Partial<Invocation> };

interface Result {
  task: Task;
  reply?: RenderableReply;
  thrown?: unknown;
  outcome: Outcome | undefined;
  ms: number;
}

/** mulberry32: the mix is the same on every run. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const user = (id: string): Partial<Invocation> => ({ user: { id, name: "Tester" } });

let t: RuntimeSetup;
const outcomeOf = new AsyncLocalStorage<{ outcome?: Outcome }>();

beforeAll(async () => {
  t = await startRuntime(ENV);
  for (let i = 0; i < REPORTERS; i++) await t.prove(user(`reporter-${i}`));
  t.runtime.onOutcome = (event) => {
    const store = outcomeOf.getStore();
    if (store) store.outcome = event.outcome;
  };
});

afterAll(async () => {
  await t?.close();
});

/** Runs the same reply through every step once without faults, and keeps the buttons to press. */
async function seedButtons(): Promise<{ key: string; id: string; who: Partial<Invocation> }[]> {
  const f = t.sim.fixtures;
  const presses: { key: string; id: string; who: Partial<Invocation> }[] = [];
  const button = (reply: RenderableReply, label: RegExp) => {
    const found = reply.buttons?.find((b) => label.test(b.label));
    if (!found) throw new Error(`no button ${label} under ${JSON.stringify(reply).slice(0, 300)}`);
    return found.id;
  };
  const say = async (line: string, who?: Partial<Invocation>) => t.say(line, who);

  presses.push({
    key: "audience:samples",
    id: button(await say(`/audience ${f.collection}`), /Sample wallets/),
    who: user("p1"),
  });
  presses.push({
    key: "top:page",
    id: button(await say("/top volume 30d 5"), /Next/),
    who: user("p2"),
  });
  presses.push({
    key: "common:page",
    id: button(await say(`/common ${f.collection}`), /Next/),
    who: user("p3"),
  });
  presses.push({
    key: "wallet:page",
    id: button(await say(`/wallet ${f.wallet}`), /Next/),
    who: user("p4"),
  });
  const segment = await say(`/segment ${f.collection}`);
  presses.push({ key: "segment:page", id: button(segment, /Next/), who: user("p5") });
  presses.push({ key: "segment:csv", id: button(segment, /Export CSV/), who: user("p5") });
  const nft = await say(`/nft ${f.token.contract} ${f.token.tokenId}`);
  presses.push({ key: "nft:raw", id: button(nft, /Raw metadata/), who: user("p6") });
  // The report buttons under /wallet name the wallet (one the presser proved): asking needs no
  // request, confirming sends one.
  const ownAsk = async (who: Partial<Invocation>) => {
    const { address } = await t.prove(who);
    t.sim.giveNft(address);
    return button(await say(`/wallet ${address}`, who), /^(Spam|Not spam) #1$/);
  };
  presses.push({ key: "report:ask", id: await ownAsk(user("p7")), who: user("p7") });
  for (let i = 0; i < 12; i++) {
    const who = user(`confirmer-${i}`);
    const prompt = await t.press(await ownAsk(who), who);
    presses.push({ key: "report:confirm", id: button(prompt, /Confirm report/), who });
  }
  return presses;
}

/** People who proved a wallet (in beforeAll): reports are made by them. */
const REPORTERS = 40;

function commandMix(): { key: string; line: string; users?: "reporters" }[] {
  const f = t.sim.fixtures;
  const token = (ref: { contract: string; tokenId: string }) => `${ref.contract} ${ref.tokenId}`;
  const lines: Record<string, string[]> = {
    whois: [f.walletEns, f.wallet, f.subdomain, f.dnsName, f.multiNameWallet, f.emojiEnsName],
    audience: [
      f.collection,
      f.erc1155Collection,
      f.otherBehaviorCollection,
      f.markupCollection,
      `https://etherscan.io/token/${f.collection}`,
    ],
    top: ["volume 1d", "sales 7d 20", "max_price 30d", "volume 365d 5"],
    nft: [
      token(f.token),
      token(f.hugeTokenId),
      token(f.multiOwnerToken),
      token(f.tokenWithoutSale),
      token(f.tokenWithTextMetadata),
      `https://opensea.io/assets/ethereum/${f.token.contract}/${f.token.tokenId}`,
    ],
    behaviors: [`${f.wallet} ${f.walletEns}`, `${f.multiNameWallet}, ${f.wallet}`],
    contracts: ["", "erc721 5", "erc1155 limit:20"],
    wallet: [
      f.wallet,
      `${f.walletEns} exclude`,
      `${f.wallet} only`,
      `${f.wallet} collection:${f.collection}`,
    ],
    owners: [f.collection, `${f.collection} 365d`, `${f.erc1155Collection} 7d`],
    common: [f.collection, `${f.collection} 7d`],
    stats: [f.collection, f.erc1155Collection],
    walletstats: [`${f.wallet} ${f.multiNameWallet}`, `min_volume:1.5 ${f.wallet}`],
    profile: [f.collection, f.erc1155Collection],
    segment: [
      f.collection,
      `${f.collection} ${f.erc1155Collection} 1 any`,
      `${f.collection} min_owned:2 min_volume:10`,
    ],
    // For the reporter's proved wallet (see REPORTERS).
    report: [
      `spam ${token(f.token)}`,
      `not_spam ${f.collection}`,
      `spam ${f.spamCollection} looks like an airdrop`,
    ],
    link: [f.walletEns, f.multiNameWalletNames[0] ?? f.walletEns],
  };
  return Object.entries(lines).flatMap(([command, list]) =>
    list.map((args) => ({
      key: command,
      line: `/${command} ${args}`.trim(),
      // A report counts once per person and target: each one from one of many reporters.
      ...(command === "report" ? { users: "reporters" as const } : {}),
    })),
  );
}

function buildTasks(presses: Awaited<ReturnType<typeof seedButtons>>): Task[] {
  const random = rng(0x5eed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)] as T;
  // Every command the same share, whatever the number of example lines it has.
  const byCommand = new Map<string, ReturnType<typeof commandMix>>();
  for (const entry of commandMix()) {
    byCommand.set(entry.key, [...(byCommand.get(entry.key) ?? []), entry]);
  }
  const commands = [...byCommand.values()];
  const tasks: Task[] = [];
  for (let i = 0; i < TOTAL; i++) {
    if (random() < PRESS_SHARE) {
      const press = pick(presses);
      tasks.push({ kind: "press", key: press.key, id: press.id, who: press.who });
    } else {
      const entry = pick(pick(commands));
      const who = user(entry.users === "reporters" ? `reporter-${i % REPORTERS}` : `u${i % 37}`);
      tasks.push({ kind: "say", key: entry.key, line: entry.line, who });
    }
  }
  return tasks;
}

async function runOne(task: Task): Promise<Result> {
  const store: { outcome?: Outcome } = {};
  const started = performance.now();
  return outcomeOf.run(store, async () => {
    try {
      const reply =
        task.kind === "say" ? await t.say(task.line, task.who) : await t.press(task.id, task.who);
      // Counted after the answer went out.
      await t.runtime.settled();
      return { task, reply, outcome: store.outcome, ms: performance.now() - started };
    } catch (thrown) {
      await t.runtime.settled();
      return { task, thrown, outcome: store.outcome, ms: performance.now() - started };
    }
  });
}

async function runPool(tasks: Task[], concurrency: number): Promise<Result[]> {
  const results: Result[] = new Array(tasks.length);
  let next = 0;
  const worker = async () => {
    while (next < tasks.length) {
      const index = next++;
      results[index] = await runOne(tasks[index] as Task);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return results;
}

/** What is wrong with one answer, or undefined when it is a result or a clear error in time. */
function judge(result: Result, apiKinds: Map<string, number>): string | undefined {
  const { task, reply, outcome, ms } = result;
  if (result.thrown !== undefined) return `threw ${String(result.thrown)}`;
  if (!reply) return "no reply";
  const text = reply.text ?? "";
  if (APOLOGY.test(text)) return `the generic apology: ${text}`;
  if (ms > DEADLINE_MS + MARGIN_MS) return `answered after ${Math.round(ms)} ms`;
  switch (outcome) {
    case "ok": {
      const check = SUCCESS[task.key];
      if (!check) return `no success check for ${task.key}`;
      return check(reply)
        ? undefined
        : `ok, but not a ${task.key} answer: ${JSON.stringify(reply)}`;
    }
    case "api_error": {
      const kind = API_SENTENCES.find(([, pattern]) => pattern.test(text))?.[0];
      if (!kind) return `api_error with an unknown sentence: ${text}`;
      apiKinds.set(kind, (apiKinds.get(kind) ?? 0) + 1);
      return EXPECTED_API_KINDS.has(kind) ? undefined : `api_error ${kind} on a valid request`;
    }
    case "deadline":
      return text === DEADLINE_SENTENCE ? undefined : `deadline with another sentence: ${text}`;
    default:
      return `outcome ${String(outcome)}: ${text}`;
  }
}

describe("fault injection: 1,000 commands against a failing data service", () => {
  it("answers every command with a result or a clear error within its deadline, and nothing leaks", {
    timeout: 90_000,
  }, async () => {
    const presses = await seedButtons();
    const tasks = buildTasks(presses);

    const unhandled: unknown[] = [];
    const onRejection = (reason: unknown) => unhandled.push(reason);
    const onException = (error: unknown) => unhandled.push(error);
    process.on("unhandledRejection", onRejection);
    process.on("uncaughtException", onException);

    t.sim.setFaults({
      errorRates: { 500: 0.05, 502: 0.05, 503: 0.05, 504: 0.05 },
      hangRate: 0.05,
    });
    // Bursts of 429 with Retry-After: 1 s, every 700 ms, on top of the random faults.
    let bursts = 0;
    const burst = () => {
      bursts++;
      t.sim.script(Array.from({ length: 6 }, () => ({ status: 429, retryAfterSeconds: 1 })));
    };
    burst();
    const burstTimer = setInterval(burst, 700);

    const requestsBefore = t.sim.countRequests();
    const started = performance.now();
    let results: Result[];
    try {
      results = await runPool(tasks, CONCURRENCY);
    } finally {
      clearInterval(burstTimer);
    }
    const wallMs = performance.now() - started;
    t.sim.clearFaults();
    // The same runtime and client still serve once the service recovers; the first tries may
    // still meet the last scripted 429s (at most a burst and a half are left).
    let probe: RenderableReply = {};
    let probeOk = false;
    for (let i = 0; i < 20 && !probeOk; i++) {
      probe = await t.say(`/stats ${t.sim.fixtures.collection}`, user(`after-${i}`));
      probeOk = /^Financial stats of the owners of /.test(probe.title ?? "");
    }

    // Work that outlived its deadline finishes on its own; no rejection may escape it.
    const drained = await Promise.race([
      t.runtime.drain().then(() => true),
      new Promise<false>((resolve) => setTimeout(() => resolve(false), 10_000)),
    ]);
    await new Promise((resolve) => setImmediate(resolve));
    process.off("unhandledRejection", onRejection);
    process.off("uncaughtException", onException);

    const apiKinds = new Map<string, number>();
    const failures: string[] = [];
    const outcomes = new Map<string, number>();
    const perCommand = new Map<string, Map<string, number>>();
    let slowest = 0;
    for (const result of results) {
      const outcome = result.outcome ?? "none";
      outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
      const row = perCommand.get(result.task.key) ?? new Map<string, number>();
      row.set(outcome, (row.get(outcome) ?? 0) + 1);
      perCommand.set(result.task.key, row);
      slowest = Math.max(slowest, result.ms);
      const problem = judge(result, apiKinds);
      if (problem) {
        const what = result.task.kind === "say" ? result.task.line : `press ${result.task.key}`;
        failures.push(`${what}: ${problem}`);
      }
    }

    const summary = {
      commands: results.length,
      wallSeconds: Number((wallMs / 1000).toFixed(1)),
      upstreamRequests: t.sim.countRequests() - requestsBefore,
      burstsOf429: bursts,
      slowestMs: Math.round(slowest),
      outcomes: Object.fromEntries(outcomes),
      apiErrorKinds: Object.fromEntries(apiKinds),
      perCommand: Object.fromEntries(
        [...perCommand].map(([key, row]) => [key, Object.fromEntries(row)]),
      ),
    };
    console.log(`fault injection summary\n${JSON.stringify(summary, null, 2)}`);

    expect(results).toHaveLength(TOTAL);
    expect(failures.slice(0, 20), `${failures.length} bad answers`).toEqual([]);
    expect(unhandled.map(String)).toEqual([]);
    expect(drained, "work still running 10 s after the last answer").toBe(true);
    expect(probeOk, `after the faults: ${JSON.stringify(probe)}`).toBe(true);
    // The faults did happen, and were survived: some results, some errors of each injected kind.
    expect(outcomes.get("ok") ?? 0).toBeGreaterThan(TOTAL / 2);
    expect(apiKinds.get("unavailable") ?? 0).toBeGreaterThan(0);
    expect(apiKinds.get("timeout") ?? 0).toBeGreaterThan(0);
    expect(apiKinds.get("rate_limited") ?? 0).toBeGreaterThan(0);
  });
});
