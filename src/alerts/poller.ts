import type { ApiClient } from "../api/client.ts";
import type { Contract } from "../api/schemas.ts";
import { NFT_CONTRACT_TYPES } from "../api/schemas.ts";
import { DEFAULT_CHAIN_ID } from "../chains.ts";
import type { PollerHealth } from "../http/ops.ts";
import type { Lease } from "../jobs/lease.ts";
import { chainLeaseName } from "../jobs/lease.ts";
import { LeasedLoop } from "../jobs/leased-loop.ts";
import type { Check } from "../jobs/liveness.ts";
import type { Logger } from "../log.ts";
import type { KeyValueStore, LeaseStore } from "../store/types.ts";
import { lookUpMinters, type MinterLookupSettings } from "./minters.ts";
import type { NewContract, OutboxStore } from "./store/types.ts";

/** Each chain's poller keeps its own cursor, gap note and lease (one leader per chain). */
export const cursorKey = (chain: string) => `poll_cursor:${chain}`;
export const pendingGapKey = (chain: string) => `poll_pending_gap:${chain}`;
export { chainLeaseName as pollerLeaseName } from "../jobs/lease.ts";
/** Ethereum's: what a store of one chain had, before SQLite migration 10 named the chain. */
export const CURSOR_KEY = cursorKey(DEFAULT_CHAIN_ID);
export const PENDING_GAP_KEY = pendingGapKey(DEFAULT_CHAIN_ID);

export interface PollerSettings {
  intervalMs: number;
  /** Contracts minted this long before the cursor are asked for again (late indexing). */
  overlapMs: number;
  /** Page size of endpoint 10 (the service's docs: default 20, maximum 500). */
  limit: number;
  /** Pages read in one poll before stopping. */
  maxPages: number;
  /**
   * How far past our clock a mint time may be and still move the cursor. A contract dated
   * further ahead (an indexer's bad timestamp) is posted, but the cursor does not follow it:
   * every later poll would ask for mints after that date and find none.
   */
  maxClockSkewMs: number;
  /** How long a taken lease lasts unless renewed (default LEASE_TTL_MS). */
  leaseTtlMs?: number;
  /** How often the lease is renewed by its holder and tried by the others (default LEASE_RENEW_MS). */
  leaseRenewMs?: number;
}

/**
 * The poller's lease lasts 6 s and is renewed (or tried, by the other instances) every 2 s,
 * independently of the poll interval: when the leader dies, its lease expires at most 6 s after
 * its last renewal and another instance takes it at its next try, within 8 s, then polls at once.
 */
export const LEASE_TTL_MS = 6_000;
export const LEASE_RENEW_MS = 2_000;

export interface PollerDeps {
  /** The chain polled (default ethereum): its cursor, gap note, lease and seen contracts. */
  chain?: string;
  /** That chain's data-service client. */
  api: ApiClient;
  alerts: OutboxStore;
  kv: KeyValueStore;
  leases: LeaseStore;
  /**
   * This chain's lease, when the caller shares it (bot.ts: the default chain's also leads delivery,
   * digests and report retries); default: one made from `leases`, `holder` and the settings.
   */
  lease?: Lease;
  logger: Logger;
  settings: PollerSettings;
  /** Identifies this process in the lease. */
  holder: string;
  /** Wall clock (the shared lease, mint times, stored times). */
  now?: () => number;
  /** Monotonic clock in ms (performance.now) for elapsed times: leadership, time since success. */
  monotonic?: () => number;
  /** Told when alerts were enqueued, so delivery need not wait for its next tick. */
  onEnqueued?: () => void;
  /** Told how many newly seen contracts were dated past the clock skew allowance. */
  onFutureMints?: (count: number) => void;
  /** Told of every contract a poll read (the collection index learns new names from them). */
  onContracts?: (contracts: readonly Contract[]) => void;
  /** How the minters' behavior labels are looked up (endpoint 1). */
  minterLookup?: MinterLookupSettings;
  /** Told how many alerts were not enqueued because their minter is a bad actor (metrics). */
  onHidden?: (count: number) => void;
}

export type PollResult =
  | { kind: "not_leader"; holder: string }
  | { kind: "started"; cursor: string }
  | {
      kind: "polled";
      seen: number;
      fresh: number;
      enqueued: number;
      /** Alerts not enqueued: the minter is a bad actor and the channel hides them. */
      hidden: number;
      pages: number;
      gap: string | undefined;
    };

export type { PollerHealth } from "../http/ops.ts";

export interface PollerStats {
  polls: number;
  gaps: number;
  failures: number;
}

const mintTime = (contract: Contract) => Date.parse(contract.mintEvent?.blockTimestamp ?? "");

/**
 * Where the cursor moves: the newest mint time, at least `floor`. Mints dated past `horizon` (now
 * plus the skew allowance) do not count: the cursor says everything up to it was seen, and
 * contracts minted from now on would be dated before such a date.
 */
function newestMint(contracts: readonly Contract[], floor: number, horizon: number): number {
  return contracts.reduce((max, contract) => {
    const at = mintTime(contract);
    return at <= horizon ? Math.max(max, at) : max;
  }, floor);
}

function toNewContract(contract: Contract): NewContract {
  return {
    address: contract.address,
    name: contract.name,
    types: contract.types,
    minter: contract.mintEvent?.minterAddress,
    txHash: contract.mintEvent?.txHash,
    mintedAt: contract.mintEvent?.blockTimestamp,
  };
}

/**
 * Watches endpoint 10 for newly minted NFT contracts. Each poll asks for everything minted after
 * the cursor minus an overlap, pages on where the order of the answer allows it, and records a
 * gap (log, counter, a line in the next alert) where it cannot be sure it saw everything.
 */
export class NewContractPoller {
  readonly stats: PollerStats = { polls: 0, gaps: 0, failures: 0 };
  /** The lease, the rounds and the lease's renewals between them (the job kit's). */
  private readonly job: LeasedLoop;
  private warnedNotLeader = false;
  /** Monotonic time a poll last succeeded. */
  private lastSuccessAt: number | undefined;
  private readonly now: () => number;
  private readonly monotonic: () => number;
  /** The chain polled. */
  readonly chain: string;
  /** One leader per chain. */
  readonly lease: Lease;
  private readonly keys: { cursor: string; gap: string };

  constructor(private readonly deps: PollerDeps) {
    this.chain = deps.chain ?? DEFAULT_CHAIN_ID;
    this.keys = { cursor: cursorKey(this.chain), gap: pendingGapKey(this.chain) };
    this.now = deps.now ?? Date.now;
    this.monotonic = deps.monotonic ?? (() => performance.now());
    this.job = new LeasedLoop({
      lease: deps.lease ?? chainLeaseName(this.chain),
      name: `poller ${this.chain}`,
      leases: deps.leases,
      holder: deps.holder,
      tickMs: deps.settings.intervalMs,
      leaseTtlMs: deps.settings.leaseTtlMs ?? LEASE_TTL_MS,
      // The lease is kept apart from the polls: a leader that dies is replaced within a lease's
      // life and a renewal, whatever the poll interval.
      renewEveryMs: deps.settings.leaseRenewMs ?? LEASE_RENEW_MS,
      logger: deps.logger,
      now: this.now,
      monotonic: this.monotonic,
      messages: {
        failed: "new-contract poll failed; will try again",
        notReleased: "could not release the poller lease",
        notRenewed: "could not renew the poller lease",
      },
      onFailure: () => {
        this.stats.failures++;
      },
    });
    this.lease = this.job.lease;
  }

  /**
   * Polls every interval (on the leader), and takes or renews the lease every LEASE_RENEW_MS;
   * the process that takes the lease over polls at once.
   */
  start(): void {
    this.job.start(async () => {
      await this.pollOnce();
    });
  }

  /** Whether this process holds the lease (and so polls and delivers). */
  get isLeader(): boolean {
    return this.lease.isLeader;
  }

  /**
   * Unhealthy once this leader has had no successful poll for max(3 intervals, 30 s), counted
   * from when it took the lease if none succeeded since: alerts are then not being found.
   */
  health(): PollerHealth {
    const leaderSince = this.lease.leaderSince;
    if (leaderSince === undefined)
      return { leader: false, lagSeconds: null, lastSuccessAgoSeconds: null, healthy: true };
    const now = this.monotonic();
    const seconds = (ms: number) => Math.round(ms / 100) / 10;
    const lagMs = now - Math.max(leaderSince, this.lastSuccessAt ?? leaderSince);
    const limitMs = Math.max(3 * this.deps.settings.intervalMs, 30_000);
    const health: PollerHealth = {
      leader: true,
      lagSeconds: seconds(lagMs),
      lastSuccessAgoSeconds:
        this.lastSuccessAt === undefined ? null : seconds(now - this.lastSuccessAt),
      healthy: lagMs < limitMs,
    };
    if (!health.healthy) {
      health.reason = `no successful poll for ${Math.round(lagMs / 1000)} s${
        this.lastSuccessAt === undefined ? " (none since this process took the lease)" : ""
      }`;
    }
    return health;
  }

  /**
   * For /healthz, without I/O: on the leader, whether polls succeed; on the others, whether their
   * lease attempts get answers (one that cannot reach the store could never take over).
   */
  checks(): Check[] {
    const health = this.health();
    if (health.leader)
      return [
        {
          name: `poller ${this.chain}`,
          ok: health.healthy,
          ...(health.reason ? { reason: `poller ${this.chain}: ${health.reason}` } : {}),
        },
      ];
    return this.job.leaseChecks();
  }

  /** No more polls nor renewals; the lease is given up (shutdown goes on if that fails). */
  async stop(): Promise<void> {
    await this.job.stop();
  }

  async pollOnce(): Promise<PollResult> {
    const { kv, settings, logger } = this.deps;
    const now = this.now();
    const holder = await this.lease.attempt();
    if (holder !== this.lease.holder) {
      if (!this.warnedNotLeader) {
        logger.warn(
          { holder, chain: this.chain },
          "another bot process is polling this chain; this one will not poll it",
        );
        this.warnedNotLeader = true;
      }
      return { kind: "not_leader", holder };
    }
    this.warnedNotLeader = false;
    const horizon = now + settings.maxClockSkewMs;
    const cursor = await kv.get(this.keys.cursor);
    if (cursor === undefined) {
      // First start: begin at now. What was minted before (the overlap window included) counts
      // as seen, so a new subscriber is not flooded with old contracts.
      const { contracts } = await this.fetchSince(now - settings.overlapMs);
      this.deps.onContracts?.(contracts);
      const start = new Date(newestMint(contracts, now, horizon)).toISOString();
      const { fresh } = await this.deps.alerts.record({
        chain: this.chain,
        contracts: contracts.map(toNewContract),
        subscriptions: [],
        cursorKey: this.keys.cursor,
        cursor: start,
        note: null,
        now,
      });
      this.reportFuture(fresh, horizon);
      this.lastSuccessAt = this.monotonic();
      logger.info(
        { cursor: start, alreadyMinted: contracts.length },
        "new-contract poller starts from now",
      );
      return { kind: "started", cursor: start };
    }
    // A cursor stored in the future (before mints past the horizon stopped moving it) is read as
    // now: everything since (and the overlap before) is asked for again.
    const stored = Date.parse(cursor);
    const from = stored > horizon ? now : stored;
    const since = from - settings.overlapMs;
    const { contracts, pages, gap } = await this.fetchSince(since);
    this.deps.onContracts?.(contracts);
    this.stats.polls++;

    let gapNote = gap;
    if (gapNote) {
      this.stats.gaps++;
      logger.warn({ gap: gapNote }, "new-contract poll may have missed contracts");
      await kv.set(this.keys.gap, gapNote);
    }
    gapNote = await kv.get(this.keys.gap);

    const { fresh, enqueued, hidden } = await this.deps.alerts.record({
      chain: this.chain,
      contracts: await this.withMinters(contracts.map(toNewContract)),
      subscriptions: "active",
      cursorKey: this.keys.cursor,
      cursor: new Date(newestMint(contracts, from, horizon)).toISOString(),
      note: gapNote ?? null,
      now,
    });
    this.reportFuture(fresh, horizon);
    // The gap line rides on the first alerts enqueued after it.
    if (gapNote && enqueued > 0) await kv.delete(this.keys.gap);
    this.lastSuccessAt = this.monotonic();
    if (enqueued > 0) this.deps.onEnqueued?.();
    if (fresh.length > 0) logger.info({ fresh: fresh.length, enqueued, hidden }, "new contracts");
    if (hidden > 0) {
      logger.info({ hidden }, "alerts not posted: minted by bad actors");
      this.deps.onHidden?.(hidden);
    }
    return {
      kind: "polled",
      seen: contracts.length,
      fresh: fresh.length,
      enqueued,
      hidden,
      pages,
      gap,
    };
  }

  /**
   * The contracts with their minters' behavior labels, looked up for the contracts not seen yet
   * only (what was seen has its label stored, or is not alerted again): all their minters in
   * batches of 500 per call. A failed lookup leaves the labels unknown and the alerts go on.
   */
  private async withMinters(contracts: NewContract[]): Promise<NewContract[]> {
    if (contracts.length === 0) return contracts;
    const unseen = new Set(
      await this.deps.alerts.unseen(
        this.chain,
        contracts.map((contract) => contract.address),
      ),
    );
    const minters = [
      ...new Set(
        contracts
          .filter((contract) => unseen.has(contract.address.toLowerCase()) && contract.minter)
          .map((contract) => (contract.minter as string).toLowerCase()),
      ),
    ];
    if (minters.length === 0) return contracts;
    let failures = 0;
    const labels = await lookUpMinters(this.deps.api, minters, this.deps.minterLookup, (error) => {
      failures++;
      this.deps.logger.warn(
        { err: error, chain: this.chain },
        "minter behavior lookup failed; those alerts say the minter is unknown",
      );
    });
    if (failures > 0 || labels.size < minters.length)
      this.deps.logger.info(
        { minters: minters.length, labelled: labels.size, failures },
        "some minters' behavior is unknown",
      );
    return contracts.map((contract) => {
      const label = contract.minter ? labels.get(contract.minter.toLowerCase()) : undefined;
      return label === undefined ? contract : { ...contract, minterBehavior: label };
    });
  }

  /** Logs and counts newly seen contracts dated past the horizon (each once: they are seen now). */
  private reportFuture(fresh: readonly NewContract[], horizon: number): void {
    const future = fresh.filter((contract) => Date.parse(contract.mintedAt ?? "") > horizon);
    for (const contract of future) {
      this.deps.logger.warn(
        { address: contract.address, blockTimestamp: contract.mintedAt },
        "contract dated in the future: posted, but the poll cursor does not follow it",
      );
    }
    if (future.length > 0) this.deps.onFutureMints?.(future.length);
  }

  /** Reads every page since `since`, following the order the service answers in. */
  private async fetchSince(
    since: number,
  ): Promise<{ contracts: Contract[]; pages: number; gap: string | undefined }> {
    const { api, settings } = this.deps;
    const seen = new Map<string, Contract>();
    let gt = since;
    let offset = 0;
    let previousFirst: string | undefined;
    for (let page = 1; page <= settings.maxPages; page++) {
      const { contracts } = await api.foundational.contracts(
        {
          contractTypes: NFT_CONTRACT_TYPES,
          limit: settings.limit,
          blockTimestampGt: new Date(gt).toISOString(),
          ...(offset > 0 ? { offset } : {}),
        },
        { fresh: true, background: true },
      );
      for (const contract of contracts) seen.set(contract.address.toLowerCase(), contract);
      if (contracts.length < settings.limit)
        return { contracts: [...seen.values()], pages: page, gap: undefined };

      const first = mintTime(contracts[0] as Contract);
      const last = mintTime(contracts[contracts.length - 1] as Contract);
      const range = `${new Date(since).toISOString()} and ${new Date(Math.min(first, last)).toISOString()}`;
      if (first <= last) {
        // Ascending: the next page starts at this page's last mint (minus 1 ms, so contracts
        // sharing that instant are not skipped: the duplicates are dropped by address).
        const next = last - 1;
        if (next <= gt)
          return {
            contracts: [...seen.values()],
            pages: page,
            gap: `more than ${settings.limit} contracts share one mint time near ${range}`,
          };
        gt = next;
        continue;
      }
      // Descending: only offsets reach older contracts; an answer that ignores the offset is a gap.
      const firstAddress = contracts[0]?.address;
      if (offset > 0 && firstAddress === previousFirst) {
        return {
          contracts: [...seen.values()],
          pages: page,
          gap: `contracts minted between ${range} may be missing`,
        };
      }
      previousFirst = offset === 0 ? firstAddress : previousFirst;
      offset += settings.limit;
      if (page === settings.maxPages) {
        return {
          contracts: [...seen.values()],
          pages: page,
          gap: `contracts minted between ${range} may be missing`,
        };
      }
    }
    return { contracts: [...seen.values()], pages: settings.maxPages, gap: undefined };
  }
}
