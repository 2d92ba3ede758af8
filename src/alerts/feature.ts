import type { ApiClient } from "../api/client.ts";
import { ledBy } from "../jobs/job.ts";
import { isDeadLocalHolder, type Lease } from "../jobs/lease.ts";
import type { Feature } from "../kernel/feature.ts";
import { DeliveryWorker } from "./delivery.ts";
import { alertGauges } from "./metrics.ts";
import { NewContractPoller } from "./poller.ts";
import { alertStoresOf } from "./store/index.ts";

/**
 * How long the leader's delivery may go without completing a round before health fails: a round
 * of 500 alerts at the platforms' pace takes well under this.
 */
const DELIVERY_BOUND_MS = 120_000;

export interface AlertsExposed {
  delivery: DeliveryWorker;
  /** One poller per chain, by chain id, the default chain's first. */
  pollers: ReadonlyMap<string, NewContractPoller>;
}

/**
 * New-collection alerts: one poller per chain (each on its chain's client and lease: a chain
 * whose data service is down stops only its own alerts) feeds the outbox, and one delivery worker,
 * the default chain's lease holder, posts every chain's alerts through the outbound module.
 */
export const alertsFeature: Feature<AlertsExposed> = {
  name: "alerts",
  setup(kernel) {
    const { subscriptions } = alertStoresOf(kernel.store);
    // A chat that moved takes its subscriptions along, with their queued alerts.
    return { moveChat: (platform, from, to) => subscriptions.moveChat(platform, from, to) };
  },
  build(kernel) {
    const { config, chains, metrics, leader, stores, logger } = kernel;
    const alerts = alertStoresOf(kernel.store).outbox;
    const several = chains.length > 1;
    const delivery = new DeliveryWorker({
      alerts,
      reports: stores.reports,
      outbound: kernel.outbound,
      isLeader: () => leader.isLeader,
      holder: kernel.holder,
      isDeadHolder: isDeadLocalHolder,
      onDelivered: (delivered) =>
        metrics.onDelivered(
          delivered.length,
          delivered.map((alert) => alert.contract.mintedAt),
          Date.now(),
        ),
      onDropped: (dropped) => metrics.onAlertsDropped(dropped.length),
      onSuppressed: (suppressed) => metrics.onAlertsSuppressed(suppressed.length),
      logger: logger.child({ part: "delivery" }),
      settings: {
        digestThreshold: config.alerts.digestThreshold,
        maxAttempts: config.alerts.maxAttempts,
        suppressReports: config.alerts.suppressReports,
        batch: 500,
        tickMs: config.alerts.deliveryTickMs,
        explorerUrl: config.explorerUrl,
        chains,
      },
    });
    const pollers = new Map<string, NewContractPoller>();
    for (const chain of chains)
      pollers.set(
        chain.id,
        new NewContractPoller({
          chain: chain.id,
          api: kernel.apis.get(chain.id) as ApiClient,
          alerts,
          kv: kernel.store.kv,
          leases: kernel.store.leases,
          lease: kernel.leases.get(chain.id) as Lease,
          logger: logger.child({ part: "poller", ...(several ? { chain: chain.id } : {}) }),
          settings: {
            intervalMs: config.alerts.pollIntervalMs,
            overlapMs: config.alerts.overlapMs,
            limit: config.alerts.pollLimit,
            maxPages: config.alerts.maxPages,
            maxClockSkewMs: config.alerts.maxClockSkewMs,
            leaseTtlMs: config.lease.ttlMs,
            leaseRenewMs: config.lease.renewMs,
          },
          holder: kernel.holder,
          ...(kernel.monotonic ? { monotonic: kernel.monotonic } : {}),
          onEnqueued: () => delivery.poke(),
          onFutureMints: (count) => metrics.onFutureMints(count, several ? chain.id : undefined),
          onHidden: (count) => metrics.onAlertsHidden(count),
          // New contracts' names join their own chain's collection index.
          onContracts: (contracts) =>
            stores.collectionIndexes.get(chain.id)?.remember(contracts, "contracts"),
        }),
      );
    alertGauges(metrics.registry, {
      outboxDepth: () => alerts.depth(),
      pollers: [...pollers.values()],
    });
    const first = pollers.get(chains[0]?.id ?? "") as NewContractPoller;
    return {
      exposes: { delivery, pollers },
      // The manager's page: the chat's subscriptions, as /subscriptions lists them.
      chatSections: async (platform, chatId) => [
        {
          title: "New-collection alerts",
          lines: (await alertStoresOf(kernel.store).subscriptions.forChat(platform, chatId)).map(
            (s) =>
              `${s.chain}: ${s.types === "all" ? "ERC721 and ERC1155" : s.types.toUpperCase()}${Object.keys(s.rules).length > 0 ? ", with rules (/alerts)" : ""}${s.pausedAt === null ? "" : ` (paused: ${s.pauseReason ?? "the chat refused the bot"})`}`,
          ),
        },
      ],
      // The default chain's poller, and with several chains each one's, by chain id.
      figures: () => {
        if (!several) return { poller: first.health() };
        const each = Object.fromEntries([...pollers].map(([id, poller]) => [id, poller.health()]));
        return { poller: each[first.chain] ?? first.health(), pollers: each };
      },
      // Delivery first: the pollers poke it, so they stop before it (jobs stop in reverse).
      jobs: [
        {
          name: "delivery",
          start: () => delivery.start(),
          stop: () => delivery.stop(),
          checks: () =>
            delivery.liveness.flatMap((lane) =>
              ledBy(leader, lane, Math.max(3 * config.alerts.deliveryTickMs, DELIVERY_BOUND_MS)),
            ),
        },
        ...[...pollers.values()].map((poller) => ({
          name: `poller ${poller.chain}`,
          start: () => poller.start(),
          stop: () => poller.stop(),
          checks: () => poller.checks(),
        })),
      ],
    };
  },
};
