import type { ApiClient } from "../api/client.ts";
import { DURATIONS, NFT_CONTRACT_TYPES, TOP_METRICS } from "../api/schemas.ts";
import type { Check } from "../jobs/liveness.ts";
import { PeriodicJob, untilAborted } from "../jobs/periodic.ts";
import type { Logger } from "../log.ts";
import type { KnownCollections } from "./known-collections.ts";

/** Collections read from each top list and from the newest contracts: 13 requests in all. */
const TOP_LIMIT = 100;
const NEWEST_LIMIT = 100;

export interface CollectionRefreshOptions {
  api: ApiClient;
  collections: KnownCollections;
  logger: Logger;
  /** Background refreshes this far apart (the top lists' freshness); 0: only for missed names. */
  intervalMs: number;
  /** A missed name refreshes the index at most this often. */
  missIntervalMs?: number;
  /** Monotonic milliseconds. */
  monotonic?: () => number;
  /** Names the job in logs and health (default "collection refresh"). */
  name?: string;
}

/** The refresh may go this long without reading a list before health fails, if 3 rounds are less. */
const MIN_BOUND_MS = 5 * 60_000;

/**
 * Fills the collection index from the top lists (every metric and period) and the newest
 * contracts: at start in the background, then at the top lists' freshness, and when a name
 * misses the index. One refresh at a time: a refresh asked for while one runs joins it. The
 * timed refreshes are a job: a refresh that reads no list is a failed round, and /healthz says
 * so once none has read one for 3 intervals (at least 5 minutes).
 */
export class CollectionRefresher {
  private running: Promise<boolean> | undefined;
  private startedAt: number | undefined;
  /** Whether the last refresh read a list. */
  private lastRead = false;
  private job: PeriodicJob | undefined;
  private stopped = false;
  private startOnMiss = false;
  private readonly monotonic: () => number;
  private readonly missIntervalMs: number;

  constructor(private readonly options: CollectionRefreshOptions) {
    this.monotonic = options.monotonic ?? (() => performance.now());
    this.missIntervalMs = options.missIntervalMs ?? 60_000;
  }

  /**
   * Refreshes `firstAfterMs` from now (at once by default) without waiting, then every
   * `intervalMs` (with 0, neither). A name missed before the first refresh starts it then.
   */
  start(firstAfterMs = 0): void {
    const { intervalMs, logger, monotonic } = this.options;
    if (intervalMs <= 0 || this.job || this.stopped) return;
    let first = true;
    this.job = new PeriodicJob({
      name: this.name,
      everyMs: intervalMs,
      firstAfterMs,
      boundMs: Math.max(3 * intervalMs, MIN_BOUND_MS),
      round: async (signal) => {
        // A missed name may have refreshed already: that refresh is the first round.
        const joined = first && this.startedAt !== undefined;
        first = false;
        // A stop ends the round at once (the refresh in flight is not written to the index).
        const read = joined
          ? await untilAborted(this.running ?? Promise.resolve(this.lastRead), signal, false)
          : await untilAborted(this.refresh(), signal, false);
        if (!read) throw new Error("the collection index refresh read no list");
      },
      // refresh() says why it failed.
      onError: () => {},
      logger,
      ...(monotonic ? { monotonic } : {}),
    });
    this.job.start();
  }

  /**
   * Like `start()`, but at the first name the index misses (`refreshForMiss`): a chain nobody
   * asks about costs its data service nothing (the embedded simulator builds a chain's data set
   * on its first request other than the pollers').
   */
  startWhenUsed(): void {
    this.startOnMiss = true;
  }

  /** No more refreshes; one in flight is not written to the index (and not waited for). */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.job?.stop();
  }

  /** For /healthz, without I/O: whether refreshes read the lists (once started). */
  checks(): Check[] {
    return this.job?.checks() ?? [];
  }

  /** Names the job in logs and health. */
  get name(): string {
    return this.options.name ?? "collection refresh";
  }

  /** Resolves true when at least one list was read (the index may have changed). */
  refresh(): Promise<boolean> {
    if (this.running) return this.running;
    this.startedAt = this.monotonic();
    const running = this.load()
      .catch((error: unknown) => {
        this.options.logger.error({ err: error }, "the collection index refresh failed");
        return false;
      })
      .then((read) => {
        this.lastRead = read;
        // A missed name's refresh counts as a good round too.
        if (read) this.job?.liveness.good();
        return read;
      })
      .finally(() => {
        this.running = undefined;
      });
    this.running = running;
    return running;
  }

  /**
   * A name missed the index: the refresh in flight, or a new one unless the last began less than
   * `missIntervalMs` ago (then undefined: the index is as fresh as it will be for now).
   */
  refreshForMiss(): Promise<boolean> | undefined {
    if (this.startOnMiss && !this.stopped) {
      this.startOnMiss = false;
      this.start();
    }
    if (this.running) return this.running;
    if (this.startedAt !== undefined && this.monotonic() - this.startedAt < this.missIntervalMs)
      return undefined;
    return this.refresh();
  }

  /**
   * The index's first filling, for a name an answer needs now (a collection given by its address
   * or a link): the refresh in flight, or the first one planned (`start` with a delay, or
   * `startWhenUsed`: a chain nobody asked about yet) brought forward; undefined once one has run
   * (the index is as full as it gets), and when no refresh is planned (never started, stopped).
   */
  firstFill(): Promise<boolean> | undefined {
    if (this.running) return this.running;
    const planned = (this.job !== undefined || this.startOnMiss) && !this.stopped;
    if (this.startedAt !== undefined || !planned) return undefined;
    return this.refreshForMiss();
  }

  private async load(): Promise<boolean> {
    const { api, collections, logger } = this.options;
    // Background: first in line for the upstream budget and never refused by it; few and rare.
    const call = { background: true };
    const tops = TOP_METRICS.flatMap((metric) =>
      DURATIONS.map((duration) =>
        api.collections
          .top(metric, duration, { limit: TOP_LIMIT }, call)
          .then(({ collections: items }) =>
            items.map((item) => ({ address: item.contractAddress, name: item.contractName })),
          ),
      ),
    );
    const newest = api.foundational
      .contracts(
        {
          sortDirection: "SORT_DIRECTION_DESC",
          contractTypes: NFT_CONTRACT_TYPES,
          limit: NEWEST_LIMIT,
        },
        call,
      )
      .then(({ contracts }) => contracts);
    const [lists, contracts] = await Promise.all([
      Promise.allSettled(tops),
      newest.then(
        (value) => ({ status: "fulfilled" as const, value }),
        (reason: unknown) => ({ status: "rejected" as const, reason }),
      ),
    ]);
    if (this.stopped) return false;
    const read = lists.flatMap((list) => (list.status === "fulfilled" ? [list.value] : []));
    // A list that could not be read says nothing about ranks: keep them until a full read.
    if (read.length === lists.length) collections.rank(read);
    else collections.remember(read.flat(), "top");
    if (contracts.status === "fulfilled") collections.remember(contracts.value, "contracts");
    const failed = [...lists, contracts].filter((result) => result.status === "rejected");
    if (failed.length > 0) {
      const reason = (failed[0] as PromiseRejectedResult).reason;
      logger.warn(
        {
          reason: reason instanceof Error ? reason.message : String(reason),
          failed: failed.length,
          of: lists.length + 1,
        },
        "could not read every list for the collection index; it keeps what it knew",
      );
    }
    return failed.length < lists.length + 1;
  }
}
