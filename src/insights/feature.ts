import dashboardCommand from "../../commands/dashboard.ts";
import insightsCommand from "../../commands/insights.ts";
import type { Platform } from "../core/platform.ts";
import { publicBaseUrl } from "../http/host.ts";
import { SLOW_JOB_BOUND_MS } from "../jobs/job.ts";
import { LeasedLoop, MinuteBudget } from "../jobs/leased-loop.ts";
import type { Feature } from "../kernel/feature.ts";
import { readSome, walletsThisRound } from "./background.ts";
import { insightCharts } from "./charts.ts";
import { dashboardRoutes } from "./dashboard/routes.ts";
import { CALLS_PER_WALLET } from "./reads.ts";
import { InsightsService, READ_TTL_MS } from "./service.ts";
import { simulatedCommunity } from "./simulated.ts";
import { INSIGHT_MIGRATIONS, insightStoreOf } from "./store.ts";
import type { DashboardApi, DashboardSession, InsightsView } from "./types.ts";

/** The background reads' lease: one instance reads members' wallets at a time. */
export const INSIGHTS_LEASE = "insights";
/** How long the page's view of a community is kept for its charts' requests. */
const VIEW_KEPT_MS = 10_000;
/** How often the background reads look for wallets to read. */
const TICK_MS = 10_000;

declare module "../core/command.ts" {
  interface CommandServices {
    /** Insights of a community's proved members (/insights, /dashboard, /wallets private). */
    insights?: InsightsService;
  }
}

/**
 * Insights (issue 36): what a community's managers learn of the members who proved a wallet
 * there, in chat (/insights) and on a manager's page (/dashboard); members' wallets are read in
 * the background on a lease, within a share of the upstream budget.
 */
export const insightsFeature: Feature<InsightsService> = {
  name: "insights",
  migrations: INSIGHT_MIGRATIONS,
  commands: [insightsCommand, dashboardCommand],
  setup(kernel) {
    const { config, store } = kernel;
    const logger = kernel.logger.child({ part: "insights" });
    const membership = (platform: Platform) =>
      kernel.platforms.get().find((adapter) => adapter.platform === platform)?.gateMembership;
    const service = new InsightsService({
      sql: store.sql,
      chains: kernel.chains,
      apis: kernel.apis,
      names: (chain) => kernel.stores.collectionIndexes.get(chain),
      gates: () => kernel.services.gates,
      // Called on its object: the Telegram membership's method reads its own API client.
      // Bounded like a command's call: a platform that does not answer leaves the proof uncounted.
      isMember: async (platform, place, userId) =>
        membership(platform)?.isMember?.(
          place,
          userId,
          AbortSignal.timeout(config.commandDeadlineMs),
        ),
      simulated: kernel.dataMark ? simulatedCommunity(kernel.dataMark, kernel.apis) : undefined,
      delegations: (platform, userIds) => store.delegations.ofPeople(platform, userIds),
      baseUrl: () =>
        publicBaseUrl(config.http.publicUrl, kernel.http.port ?? config.http.port ?? 0),
      now: kernel.now,
      logger,
    });
    return {
      services: { insights: service },
      moveChat: (platform, from, to) =>
        insightStoreOf(store).moveChat(platform as Platform, from, to),
    };
  },
  build(kernel) {
    const service = kernel.services.insights as InsightsService;
    const logger = kernel.logger.child({ part: "insights" });
    const now = kernel.now;
    const perMinute = kernel.config.insights.callsPerMinute;
    const budget = new MinuteBudget(perMinute, now);
    const loop = new LeasedLoop({
      lease: INSIGHTS_LEASE,
      name: "insights",
      leases: kernel.store.leases,
      holder: kernel.holder,
      tickMs: TICK_MS,
      logger,
      now,
      monotonic: kernel.monotonic,
      messages: {
        failed: "insights' background reads failed; will try again",
        notReleased: "could not release the insights lease",
      },
      onFailure: () => {
        service.failures++;
      },
    });
    service.pacePerMinute = Math.floor(perMinute / CALLS_PER_WALLET);
    const charts = insightCharts(kernel.charts, logger);
    // A page load reads the view and its three charts at once: one view for them all.
    const views = new Map<string, { at: number; view: Promise<InsightsView> }>();
    const viewOf = (session: DashboardSession, signal?: AbortSignal) => {
      const key = `${session.community.platform}:${session.community.id}:${session.chain}`;
      const kept = views.get(key);
      if (kept && now() - kept.at < VIEW_KEPT_MS) return kept.view;
      const view = service.view(session.community, session.chain, signal);
      views.set(key, { at: now(), view });
      view.catch(() => views.delete(key));
      if (views.size > 100) views.delete(views.keys().next().value as string);
      return view;
    };
    const api: DashboardApi = {
      open: (token) => service.links.open(token),
      session: (id) => service.links.session(id),
      view: (session, signal) => viewOf(session, signal),
      members: (session, query) => service.members(session.community, session.chain, query),
      membersCsv: (session) => service.membersCsv(session.community, session.chain),
      gates: (session) => service.gatesWithLog(session.community, session.chain),
      sections: (session) =>
        kernel.chatSections(session.community.platform, session.community.channelId),
      chart: async (session, which) => charts(await viewOf(session), which),
    };
    return {
      exposes: service,
      routes: dashboardRoutes({
        api,
        logger,
        publicUrl: kernel.config.http.publicUrl,
        callTimeoutMs: kernel.config.commandDeadlineMs,
      }),
      jobs: [
        {
          name: "insights",
          start: () =>
            loop.start(async (signal) => {
              const hold = await loop.hold(signal);
              if (!hold) return;
              try {
                // A round's part of the minute's share, not all of it at once: the reads spread
                // over the minute and leave commands the upstream budget in every second of it.
                const wallets = walletsThisRound(perMinute, budget.left(), TICK_MS);
                if (wallets <= 0) return;
                // Every call the round made counts against the share, the day's snapshots'
                // included, even when the round fails half-way (a full disk at the write).
                const before = service.walletCalls + service.aggregateCalls;
                try {
                  await readSome(service, wallets, hold.signal).catch((error: unknown) => {
                    // A stop or a lost lease ends the round's calls: not a failure.
                    if (hold.signal.aborted) return 0;
                    throw error;
                  });
                } finally {
                  budget.spend(service.walletCalls + service.aggregateCalls - before);
                }
              } finally {
                hold.end();
              }
            }),
          stop: () => loop.stop(),
          checks: () => loop.checks(Math.max(3 * TICK_MS, SLOW_JOB_BOUND_MS)),
        },
      ],
      // What the background did, for /healthz: failed rounds and snapshots, and its pace.
      figures: async () => ({
        insights: { failures: service.failures, walletsPerMinute: service.pacePerMinute },
      }),
      prune: [
        {
          what: "insights' links and old reads",
          run: () => insightStoreOf(kernel.store).prune(now(), now() - 2 * READ_TTL_MS),
        },
      ],
    };
  },
};
