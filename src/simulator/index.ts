/**
 * The embedded simulator of the data service: a node:http server on loopback that serves every
 * endpoint of the spec that has a path (plus endpoint 20 at an assumed path) over a seeded
 * synthetic data set, with fault injection for tests and benchmarks.
 */

import type { IncomingMessage, ServerResponse } from "node:http";
import { audienceRoutes } from "./audiences.ts";
import {
  builtOf,
  type ChainState,
  chainStates,
  currentWorld,
  fullWorld,
  mintersOf,
  worldFor,
} from "./chains.ts";
import { collectionRoutes } from "./collections.ts";
import { HttpError } from "./errors.ts";
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
import { timedMints } from "./history.ts";
import {
  type Answer,
  answering,
  type Body,
  errorAnswer,
  firstHeader,
  listen,
  parseBody,
  queryRecord,
  readBody,
} from "./http.ts";
import { chosenMinter, mintContracts } from "./minting.ts";
import { hashSeed, mulberry32 } from "./random.ts";
import type { Fixtures, World } from "./records.ts";
import { Router, type SpamReport } from "./router.ts";
import type { Contract } from "./types.ts";
import { walletRoutes } from "./wallets.ts";
import { bumpOwners, giveNft, moveWhales, sellNfts } from "./watches.ts";

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
export { SPAM_CHAINS } from "./chains.ts";
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
   * A new contract every N ms on each chain; 0 (the default): none. They are a history that
   * follows the clock (history.ts): one contract per slot of N ms, from a week before the start
   * until now, the same for every simulator on the seed, so one started again answers the same
   * past, and each new slot brings a contract no run listed before.
   */
  mintIntervalMs?: number;
  /**
   * Every Nth slot's contract (slot number divisible by N) is minted by a bad actor (a wallet
   * endpoint 1 labels BEHAVIOR_BADACTOR), so the bot's hiding of them can be seen; 0: none.
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
   * enough for the timed mints and to answer the pollers), or the whole world (any other request).
   */
  built(chain?: string): "nothing" | "population" | "world";
  /** Ends hung requests and closes the server. */
  close(): Promise<void>;
}

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
  const states = chainStates(seed, chainIds, options.world, anchorMs);
  const mintIntervalMs = options.mintIntervalMs ?? 0;
  if (mintIntervalMs > 0)
    for (const state of states.values())
      state.timed = timedMints({
        seed,
        chain: state.id,
        intervalMs: mintIntervalMs,
        badActorEvery: options.badActorEvery ?? 0,
        startMs: anchorMs,
        minters: () => mintersOf(state),
        badActor: () => chosenMinter(currentWorld(state), "badactor") as string,
      });
  const first = states.get(chainIds[0] as string) as ChainState;
  let fixtures: Fixtures | undefined;
  const stateOf = (chain: string): ChainState => {
    const state = states.get(chain);
    if (!state) throw new Error(`the simulator serves ${chainIds.join(", ")}, not ${chain}`);
    return state;
  };
  /** The chain a path is for, and the path within it. */
  const chainOfPath = (path: string): { state: ChainState; path: string } => {
    const slash = path.indexOf("/", 1);
    const prefix = path.slice(1, slash < 0 ? undefined : slash);
    const state = states.get(prefix);
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
  const { respond, hang, endAll } = answering(() => faults.latencyMs);

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

  const { server, url } = await listen(handle, host, options.port ?? 0);

  const mint = (count = 1, chain = first.id, mintOptions: MintOptions = {}) => {
    const state = stateOf(chain);
    const world = fullWorld(state);
    const minter = chosenMinter(world, mintOptions.minter);
    return mintContracts(world, state.mintRng, count, now(), undefined, minter);
  };
  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= new Promise<void>((resolve) => {
      endAll();
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
    built: (chain = first.id) => builtOf(stateOf(chain)),
    sellNfts: (wallet, collection, chain = first.id) =>
      sellNfts(fullWorld(stateOf(chain)), wallet, collection),
    giveNft: (wallet, chain = first.id, options = {}) =>
      giveNft(fullWorld(stateOf(chain)), wallet, options.spam ?? false, options.token),
    close,
  };
}
