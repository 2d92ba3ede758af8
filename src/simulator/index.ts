/**
 * The embedded simulator of the data service: a node:http server on loopback that serves every
 * endpoint of the spec that has a path (plus endpoint 20 at an assumed path) over a seeded
 * synthetic data set, with fault injection for tests and benchmarks.
 */

import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { audienceRoutes } from "./audiences.ts";
import { collectionRoutes } from "./collections.ts";
import {
  BUILT_CONTRACTS_MIN_AGE_SEC,
  buildPopulation,
  buildWorld,
  type Population,
  populationWorld,
  syntheticWallets,
} from "./data.ts";
import { errorBody, HttpError } from "./errors.ts";
import {
  decideFault,
  type FaultConfig,
  malformedBody,
  mergeFaults,
  NO_FAULTS,
  type ScriptedResponse,
  truncateBody,
} from "./faults.ts";
import { foundationalRoutes } from "./foundational.ts";
import { chosenMinter, insertContract, mintContracts, mintSlot } from "./minting.ts";
import { hashSeed, mulberry32, Rng } from "./random.ts";
import type { ContractRec, Fixtures, WalletRec, World } from "./records.ts";
import { Router, type SpamReport } from "./router.ts";
import type { Contract } from "./types.ts";
import { parseTimestamp } from "./units.ts";
import { walletRoutes } from "./wallets.ts";
import { bumpOwners, giveNft, moveWhales, sellNfts, withChanges } from "./watches.ts";

export {
  CAST_AIRDROP,
  CAST_COLLECTIONS,
  CAST_WALLETS,
  type CastCollection,
  type CastWallet,
  DEMO_WALLET,
  NICK,
  VITALIK,
} from "./cast.ts";
export { buildWorld } from "./data.ts";
export type { FaultConfig, ScriptedResponse } from "./faults.ts";
export type { Fixtures, GateFixtures, SpendFigures, TokenRef, World } from "./records.ts";
export type { SpamReport } from "./router.ts";
export type {
  AggregatedBehaviorJson,
  Contract,
  EnsEntityJson,
  ErrorJson,
  FinancialStatsJson,
  NftJson,
  SaleJson,
  WalletBehaviorJson,
} from "./types.ts";

export interface SimulatorOptions {
  /** Default 1; the same seed yields the same data set. */
  seed?: number;
  /** Expected X-API-Key; default "sim-key". */
  apiKey?: string;
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 0 (ephemeral). */
  port?: number;
  /**
   * A new contract every N ms on each chain; 0 (the default) disables minting on a timer. Each is
   * the contract of the clock's slot (see mintSlot): a simulator started again never repeats one.
   */
  mintIntervalMs?: number;
  /**
   * Every Nth contract minted on the timer is minted by a bad actor (a wallet endpoint 1 labels
   * BEHAVIOR_BADACTOR), so the bot's hiding of them can be seen; 0 (the default): none.
   */
  badActorEvery?: number;
  faults?: Partial<FaultConfig>;
  /** Default true; false makes the report_not_spam path answer 404. */
  reportNotSpamSupported?: boolean;
  /**
   * The data clock (default Date.now): anchors the data set at start, stamps minted contracts,
   * and is "now" for sales windows (endpoint 15) and owner counts (endpoint 17).
   */
  now?: () => number;
  /**
   * A data set built before with `buildWorld`, served instead of one built at start (from `seed`
   * at `now()`). It is only read: this simulator's mints go to its own copy of the contract
   * list. Tests share one among the many simulators they start, as building one costs 0.2-0.5 s
   * of CPU.
   */
  world?: World;
  /**
   * The chains served, the first also without a prefix (default ["ethereum"]): chain C's base URL
   * is `${url}/C`, and each chain is a world of its own, built from the seed and its id (the first
   * from the seed alone, as with one chain). Only SPAM_CHAINS have spam data; on the others no
   * contract is spam and the report endpoints answer 404.
   */
  chains?: readonly string[];
}

/** The simulator's chains with spam detection (the service has it on two chains). */
export const SPAM_CHAINS: ReadonlySet<string> = new Set(["ethereum", "polygon"]);

export interface RecordedRequest {
  method: string;
  /** Path without the query string, as received (percent-encoded). */
  path: string;
  /** Query parameters; a repeated key's values are joined with ",". */
  query: Record<string, string>;
  /** Parsed JSON body, the raw text when it is not JSON, undefined when empty. */
  body: unknown;
  apiKey: string | undefined;
  /** The chain the path was for (its prefix, or the first chain without one). */
  chain: string;
  /** Date.now() on arrival (wall clock, for measuring retry delays). */
  at: number;
}

export interface MintOptions {
  /** "badactor": a wallet labelled BEHAVIOR_BADACTOR; or an address; default a random wallet. */
  minter?: "badactor" | string;
}

export interface Simulator {
  /** e.g. http://127.0.0.1:41234 (no trailing slash): the first chain's base URL. */
  url: string;
  /** The chains served, the first one first. */
  chains: readonly string[];
  /** A chain's own base URL, `${url}/<chain>`; throws for a chain not served. */
  urlOf(chain: string): string;
  /** A chain's fixtures (what `fixtures` is for the first). */
  fixturesOf(chain: string): Fixtures;
  apiKey: string;
  fixtures: Fixtures;
  /** Every request received, in order. */
  requests: RecordedRequest[];
  /** Spam and not-spam reports received (endpoints 19 and 20), in order. */
  reports: SpamReport[];
  countRequests(pathPrefix?: string): number;
  /**
   * Merged into the current fault configuration; with `chain`, into that chain's own, which then
   * decides its requests' faults in place of the global one (its latency stays the global's).
   */
  setFaults(faults: Partial<FaultConfig>, chain?: string): void;
  /** Clears every fault, global and per chain. */
  clearFaults(): void;
  /** The next N authenticated requests get these answers, in order, before faults. */
  script(responses: ScriptedResponse[]): void;
  /**
   * Mints now, on the first chain or `chain`; timestamps strictly increase. The minters are
   * random wallets that are not bad actors, unless `minter` says "badactor" (a wallet endpoint 1
   * labels BEHAVIOR_BADACTOR) or gives an address.
   */
  mint(count?: number, chain?: string, options?: MintOptions): Contract[];
  /**
   * Mints contracts dated `atMs` whatever the clock says (an indexer's bad timestamp, e.g. year
   * 9999). Later mint()s are not pushed after a date more than a day ahead of the clock.
   */
  mintDated(atMs: number, count?: number, chain?: string): Contract[];
  /** Today's owner count of a collection (endpoint 17's last point) moves by `percent`. */
  bumpOwners(collection: string, percent: number, chain?: string): void;
  /**
   * Whales join a collection, so its whale share's 30-day change (endpoint 2) grows by about
   * `points` percentage points; returns how many joined.
   */
  moveWhales(collection: string, points: number, chain?: string): number;
  /** A wallet receives an NFT it did not hold (of a spam collection with spam: true). */
  giveNft(
    wallet: string,
    chain?: string,
    options?: { spam?: boolean; token?: { contract: string; tokenId?: string } },
  ): { contract: string; tokenId: string };
  /**
   * The wallet sells every NFT it holds of a collection (address): the holdings endpoints leave
   * them out from now on. Returns how many tokens went. For tests of holder gates.
   */
  sellNfts(wallet: string, collection: string, chain?: string): number;
  /**
   * How much of a chain's data set is built: nothing yet, its population (wallets and collections,
   * enough to mint on and to answer the pollers), or the whole world (any other request).
   */
  built(chain?: string): "nothing" | "population" | "world";
  /** Ends hung requests, stops minting and closes the server. */
  close(): Promise<void>;
}

const MAX_BODY_BYTES = 1_000_000;

interface Answer {
  status: number;
  text: string;
  headers?: Record<string, string>;
}

type Body = { kind: "none" } | { kind: "json"; value: unknown } | { kind: "invalid"; text: string };

function errorAnswer(status: number, message?: string): Answer {
  return { status, text: JSON.stringify(errorBody(status, message)) };
}

async function readBody(req: IncomingMessage): Promise<{ text: string; tooLarge: boolean }> {
  const chunks: Buffer[] = [];
  let size = 0;
  let tooLarge = false;
  for await (const chunk of req) {
    const buffer = chunk as Buffer;
    size += buffer.length;
    if (size > MAX_BODY_BYTES) tooLarge = true;
    else chunks.push(buffer);
  }
  return { text: tooLarge ? "" : Buffer.concat(chunks).toString("utf8"), tooLarge };
}

function parseBody(text: string): Body {
  if (text.trim() === "") return { kind: "none" };
  try {
    return { kind: "json", value: JSON.parse(text) as unknown };
  } catch {
    return { kind: "invalid", text };
  }
}

function queryRecord(params: URLSearchParams): Record<string, string> {
  const record: Record<string, string> = {};
  for (const key of new Set(params.keys())) record[key] = params.getAll(key).join(",");
  return record;
}

function firstHeader(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

interface ChainState {
  id: string;
  spam: boolean;
  mintRng: Rng;
  /** Its world's seed. */
  seed: number;
  /** A world given to share (the first chain's, SimulatorOptions.world): never changed. */
  given: World | undefined;
  /** Not the first chain: its world is this simulator's own (the first's may be shared). */
  own: boolean;
  /**
   * Its wallets and collections, built when first needed (a mint, or a request), and continued
   * into `full` when a request needs more (see worldFor).
   */
  population: Population | undefined;
  /** The population's world, with the mints so far, until `full` is built. */
  light: World | undefined;
  /** Contracts minted on `light`: carried into `full` when it is built. */
  lightMints: ContractRec[];
  full: World | undefined;
  /** Where the timer's random minters come from: the synthetic wallets. */
  minters: readonly WalletRec[] | undefined;
}

/** The one path the new-contract poller reads: endpoint 10, and endpoint 1 for the minters. */
const CONTRACTS_PATTERN = "/foundational/v1beta2/contracts";
const BEHAVIORS_PATTERN = "/audiences/v1beta1/behaviors/by_wallets";

export async function startSimulator(options: SimulatorOptions = {}): Promise<Simulator> {
  if (options.world && options.seed !== undefined && options.seed !== options.world.seed) {
    throw new Error(
      `seed ${options.seed} given with a data set built from seed ${options.world.seed}`,
    );
  }
  const seed = options.seed ?? options.world?.seed ?? 1;
  const apiKey = options.apiKey ?? "sim-key";
  const host = options.host ?? "127.0.0.1";
  const now = options.now ?? Date.now;
  const reportNotSpamSupported = options.reportNotSpamSupported ?? true;
  const chainIds = options.chains?.length ? [...options.chains] : ["ethereum"];
  if (
    new Set(chainIds).size !== chainIds.length ||
    chainIds.some((id) => !/^[a-z][a-z0-9-]*$/.test(id))
  )
    throw new Error(`chains must be distinct lower-case ids: ${chainIds.join(", ")}`);
  // Every chain's world is anchored here, whenever it is built: building all of them at start
  // took most of the embedded simulator's start-up time and memory, for chains nobody asked about.
  const anchorMs = now();
  const chainStates = new Map<string, ChainState>();
  for (const [index, id] of chainIds.entries()) {
    chainStates.set(id, {
      id,
      spam: SPAM_CHAINS.has(id),
      mintRng: new Rng(hashSeed(seed, index === 0 ? "minting" : `minting:${id}`)),
      seed: index === 0 ? seed : hashSeed(seed, `chain:${id}`),
      given: index === 0 ? options.world : undefined,
      own: index > 0,
      population: undefined,
      light: undefined,
      lightMints: [],
      full: undefined,
      minters: undefined,
    });
  }
  /** A chain's whole world, built (from its population, if that was) the first time it is asked for. */
  const fullWorld = (state: ChainState): World => {
    if (state.full) return state.full;
    const built = state.given ?? buildWorld(state.seed, anchorMs, state.population);
    // Minting adds to the contract list and index, and changes no record: with copies of those
    // two, a data set shared with other simulators never sees this one's mints.
    const world: World = withChanges({
      ...built,
      contracts: [...built.contracts],
      contractByAddress: new Map(built.contractByAddress),
    });
    // A world of this simulator's own (the first may be shared): no spam on a chain without it.
    if (!state.spam && state.own) for (const contract of world.contracts) contract.spam = false;
    for (const contract of state.lightMints) insertContract(world, contract);
    state.full = world;
    state.light = undefined;
    state.lightMints = [];
    return world;
  };
  /** The world to mint on: the whole one once built, else the population's. */
  const mintingWorld = (state: ChainState): World => {
    if (state.full || state.given) return fullWorld(state);
    state.population ??= buildPopulation(state.seed, anchorMs);
    state.light ??= populationWorld(state.population);
    return state.light;
  };
  /**
   * The world that answers a request: the population's while it answers it as the whole world
   * would (so the pollers of chains nobody asked about yet need no more), else the whole one.
   */
  const worldFor = (state: ChainState, pattern: string, query: URLSearchParams, body: Body) => {
    if (state.full || state.given) return fullWorld(state);
    const light = mintingWorld(state);
    if (pattern === CONTRACTS_PATTERN) {
      // Every built contract is older than this: what was minted after it is all in `light`.
      const after = parseTimestamp(query.get("blockTimestampGt") ?? "");
      if (after !== undefined && after >= (light.anchorSec - BUILT_CONTRACTS_MIN_AGE_SEC) * 1000)
        return light;
    }
    if (pattern === BEHAVIORS_PATTERN && body.kind === "json") {
      // Synthetic wallets' behaviors are final in the population; the cast's and names are not.
      const wallets = (body.value as { walletAddresses?: unknown } | null)?.walletAddresses;
      if (
        Array.isArray(wallets) &&
        wallets.every(
          (wallet) => typeof wallet === "string" && light.walletByAddress.has(wallet.toLowerCase()),
        )
      )
        return light;
    }
    return fullWorld(state);
  };
  const mintersOf = (state: ChainState): readonly WalletRec[] => {
    state.minters ??= syntheticWallets(mintingWorld(state).wallets);
    return state.minters;
  };
  const first = chainStates.get(chainIds[0] as string) as ChainState;
  let fixtures: Fixtures | undefined;
  const stateOf = (chain: string): ChainState => {
    const state = chainStates.get(chain);
    if (!state) throw new Error(`the simulator serves ${chainIds.join(", ")}, not ${chain}`);
    return state;
  };
  /** The chain a path is for, and the path within it. */
  const chainOfPath = (path: string): { state: ChainState; path: string } => {
    const slash = path.indexOf("/", 1);
    const prefix = path.slice(1, slash < 0 ? undefined : slash);
    const state = chainStates.get(prefix);
    if (!state) return { state: first, path };
    return { state, path: slash < 0 ? "/" : path.slice(slash) };
  };
  const router = new Router([
    ...audienceRoutes,
    ...foundationalRoutes,
    ...collectionRoutes,
    ...walletRoutes,
  ]);
  const requests: RecordedRequest[] = [];
  const reports: SpamReport[] = [];
  const scripted: ScriptedResponse[] = [];
  const faultDraw = mulberry32(hashSeed(seed, "faults"));
  let faults = mergeFaults(NO_FAULTS, options.faults ?? {});
  /** Faults of one chain (setFaults with a chain), in place of the global ones for its requests. */
  const chainFaults = new Map<string, FaultConfig>();
  const hung = new Set<ServerResponse>();
  const pendingDelays = new Set<() => void>();

  const delay = (ms: number) =>
    new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        pendingDelays.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      pendingDelays.add(done);
    });

  const respond = async (res: ServerResponse, answer: Answer) => {
    if (faults.latencyMs > 0) await delay(faults.latencyMs);
    if (res.destroyed || res.headersSent) return;
    res.writeHead(answer.status, {
      "content-type": "application/json; charset=utf-8",
      "content-length": Buffer.byteLength(answer.text),
      ...answer.headers,
    });
    res.end(answer.text);
  };

  const hang = (res: ServerResponse) => {
    hung.add(res);
    res.on("close", () => hung.delete(res));
  };

  const route = (
    method: string,
    url: URL,
    body: Body,
    { state, path }: ReturnType<typeof chainOfPath>,
  ): Answer => {
    try {
      if (!state.spam && /\/report_(?:not_)?spam\//.test(path))
        return errorAnswer(404, `spam detection is not available on ${state.id}`);
      const match = router.match(method, path);
      if (match.kind === "not_found") return errorAnswer(404, `no route for ${url.pathname}`);
      if (match.kind === "method_not_allowed") {
        return {
          ...errorAnswer(405, `method ${method} not allowed`),
          headers: { allow: match.allowed.join(", ") },
        };
      }
      if (match.route.method === "POST" && body.kind === "invalid") {
        return errorAnswer(400, "request body is not valid JSON");
      }
      const value = match.route.handler({
        world: worldFor(state, match.route.pattern, url.searchParams, body),
        params: match.params,
        query: url.searchParams,
        body: body.kind === "json" ? body.value : undefined,
        now,
        reports,
        reportNotSpamSupported,
      });
      return { status: 200, text: JSON.stringify(value) };
    } catch (error) {
      if (error instanceof HttpError) return errorAnswer(error.status, error.message);
      return errorAnswer(500);
    }
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const at = Date.now();
    const method = req.method ?? "GET";
    const url = new URL(req.url ?? "/", "http://simulator.invalid");
    const { text, tooLarge } = await readBody(req);
    const body = parseBody(text);
    const key = firstHeader(req.headers["x-api-key"]);
    const onChain = chainOfPath(url.pathname);
    requests.push({
      method,
      path: url.pathname,
      query: queryRecord(url.searchParams),
      body: body.kind === "json" ? body.value : body.kind === "invalid" ? body.text : undefined,
      apiKey: key,
      chain: onChain.state.id,
      at,
    });

    if (key !== apiKey) return respond(res, errorAnswer(401));
    if (tooLarge) return respond(res, errorAnswer(413, "request body too large"));

    const step = scripted.shift();
    if (step) {
      if (step.hang) return hang(res);
      const headers: Record<string, string> =
        step.retryAfterSeconds === undefined
          ? {}
          : { "retry-after": String(step.retryAfterSeconds) };
      if (step.body !== undefined)
        return respond(res, { status: step.status, text: step.body, headers });
      if (step.status >= 400) return respond(res, { ...errorAnswer(step.status), headers });
      return respond(res, route(method, url, body, onChain));
    }

    const applied = chainFaults.get(onChain.state.id) ?? faults;
    const fault = decideFault(applied, faultDraw());
    if (fault.kind === "hang") return hang(res);
    if (fault.kind === "status") {
      const headers: Record<string, string> =
        fault.status === 429 ? { "retry-after": String(applied.retryAfterSeconds) } : {};
      return respond(res, { ...errorAnswer(fault.status, "simulated fault"), headers });
    }
    const answer = route(method, url, body, onChain);
    if (answer.status === 200 && fault.kind === "truncate") answer.text = truncateBody(answer.text);
    if (answer.status === 200 && fault.kind === "malform") answer.text = malformedBody(faultDraw());
    return respond(res, answer);
  };

  const server = createServer((req, res) => {
    handle(req, res).catch(() => {
      // The last line of defence: nothing a client sends may take the server down.
      if (!res.destroyed && !res.headersSent) {
        const answer = errorAnswer(500);
        res.writeHead(500, { "content-type": "application/json; charset=utf-8" });
        res.end(answer.text);
      }
    });
  });
  server.on("clientError", (_error, socket) => {
    if (socket.writable) socket.end("HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n");
    else socket.destroy();
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://${host.includes(":") ? `[${host}]` : host}:${port}`;

  const mint = (count = 1, chain = first.id, mintOptions: MintOptions = {}) => {
    const state = stateOf(chain);
    const world = fullWorld(state);
    const minter = chosenMinter(world, mintOptions.minter);
    return mintContracts(world, state.mintRng, count, now(), undefined, minter);
  };
  const mintIntervalMs = options.mintIntervalMs ?? 0;
  const badActorEvery = options.badActorEvery ?? 0;
  /**
   * The timer's slots are the clock's (its time divided by the interval), each minting a contract
   * of its own per chain (mintSlot): a simulator started again on the same seed, even on the same
   * data directory's bot, never mints what it minted before. A clock that stands still (a test's)
   * moves on a slot a tick.
   */
  let lastSlot = Number.NEGATIVE_INFINITY;
  const mintOnTimer = () => {
    const slot = Math.max(Math.floor(now() / mintIntervalMs), lastSlot + 1);
    lastSlot = slot;
    const bad = badActorEvery > 0 && slot % badActorEvery === 0;
    for (const state of chainStates.values()) {
      const world = mintingWorld(state);
      const minter = bad ? chosenMinter(world, "badactor") : undefined;
      const slotMs = slot * mintIntervalMs;
      const slotMint = { seed, chain: state.id, slotMs, nowMs: now() };
      const contract = mintSlot(world, slotMint, mintersOf(state), minter);
      if (world === state.light) state.lightMints.push(contract);
    }
  };
  const mintTimer = mintIntervalMs > 0 ? setInterval(mintOnTimer, mintIntervalMs) : undefined;

  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= new Promise<void>((resolve) => {
      clearInterval(mintTimer);
      for (const res of hung) res.destroy();
      hung.clear();
      for (const done of [...pendingDelays]) done();
      server.closeAllConnections();
      server.close(() => resolve());
    });
    return closing;
  };

  return {
    url,
    apiKey,
    chains: chainIds,
    urlOf: (chain) => `${url}/${stateOf(chain).id}`,
    fixturesOf: (chain) => structuredClone(fullWorld(stateOf(chain)).fixtures),
    // Read, it builds the first chain's world: the bot never reads it, tests do.
    get fixtures() {
      fixtures ??= structuredClone(fullWorld(first).fixtures);
      return fixtures;
    },
    requests,
    reports,
    countRequests: (pathPrefix) =>
      pathPrefix === undefined
        ? requests.length
        : requests.filter((request) => request.path.startsWith(pathPrefix)).length,
    setFaults: (change, chain) => {
      if (chain === undefined) faults = mergeFaults(faults, change);
      else {
        const id = stateOf(chain).id;
        chainFaults.set(id, mergeFaults(chainFaults.get(id) ?? NO_FAULTS, change));
      }
    },
    clearFaults: () => {
      faults = NO_FAULTS;
      chainFaults.clear();
    },
    script: (responses) => {
      scripted.push(...responses);
    },
    mint,
    mintDated: (atMs, count = 1, chain = first.id) => {
      const state = stateOf(chain);
      return mintContracts(fullWorld(state), state.mintRng, count, now(), atMs);
    },
    bumpOwners: (collection, percent, chain = first.id) =>
      bumpOwners(fullWorld(stateOf(chain)), collection, percent),
    moveWhales: (collection, points, chain = first.id) =>
      moveWhales(fullWorld(stateOf(chain)), collection, points),
    built: (chain = first.id) => {
      const state = stateOf(chain);
      return state.full || state.given ? "world" : state.population ? "population" : "nothing";
    },
    sellNfts: (wallet, collection, chain = first.id) =>
      sellNfts(fullWorld(stateOf(chain)), wallet, collection),
    giveNft: (wallet, chain = first.id, options = {}) =>
      giveNft(fullWorld(stateOf(chain)), wallet, options.spam ?? false, options.token),
    close,
  };
}
