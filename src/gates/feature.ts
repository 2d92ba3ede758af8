import type { Platform } from "../core/platform.ts";
import { SLOW_JOB_BOUND_MS } from "../jobs/job.ts";
import type { Feature } from "../kernel/feature.ts";
import type { Outbound } from "../outbound/outbound.ts";
import { ApiGateEvaluator } from "./evaluate.ts";
import { gateMetrics } from "./metrics.ts";
import { GateRecheck } from "./recheck.ts";
import { GateService } from "./service.ts";
import { gateStoreOf } from "./store.ts";
import type { GateTell } from "./types.ts";

/**
 * How often the gate re-check job looks for due members and expired join requests: a join
 * request is declined within this of its 10 minutes.
 */
const GATE_TICK_MS = 30_000;

export interface GatesExposed {
  service: GateService;
  recheck: GateRecheck;
}

/** Failed tries of a grace warning before it is given up (each at a re-check during the grace). */
const WARNING_TRIES = 5;
/** The outbound module's stream that keeps each person's wait between tries of a warning. */
const WARNINGS = "gate-warnings";

/**
 * The gates' private notices through the outbound module: a warning before a grace that fails is
 * kept in the person's wait (stream `gate-warnings`) and tried again at the re-checks, other
 * notices once. With made-up data every notice carries its mark: the holdings it was decided on
 * are the simulator's.
 */
export function gateTell(
  outbound: () => Pick<Outbound, "tell">,
  dataMark: string | undefined,
  callTimeoutMs: number,
): GateTell {
  return async (note) => {
    const told = await outbound().tell({
      platform: note.platform,
      to: { userId: note.userId, userChatId: note.userChatId },
      message: dataMark ? `${note.text}\n\n(${dataMark})` : note.text,
      what: note.warning ? "gate warning" : "gate notice",
      timeoutMs: callTimeoutMs,
      signal: note.signal,
      // A new grace's warning starts afresh: an earlier grace's tries do not count against it.
      ...(note.warning ? { stream: WARNINGS, fresh: note.warning === "first" } : {}),
      policy: { maxAttempts: WARNING_TRIES, backoff: { baseMs: 15 * 60_000 } },
    });
    return told.outcome === "sent" ? true : told.outcome === "closed" ? "closed" : false;
  };
}

/**
 * Gates (/gate): roles and group entry for proved wallets that pass, decided at a proof, an unlink
 * and a join request; the re-check job goes over the members under its own lease (`gates`).
 * The service is the commands' (`ctx.gates`) and verify's, which tells it of proofs.
 */
export const gatesFeature: Feature<GatesExposed> = {
  name: "gates",
  setup(kernel) {
    const { config, store, apis } = kernel;
    const logger = kernel.logger.child({ part: "gates" });
    const gates = gateStoreOf(store);
    const service = new GateService({
      gates,
      wallets: store.wallets,
      // Proofs on their chains and delegations (issue 37), when the verify feature is there (it
      // is set up after gates: asked at each decision).
      holdings: (platform, userId, signal) =>
        kernel.services.verify?.holdings(platform, userId, { refresh: true, signal }),
      evaluator: new ApiGateEvaluator({ apis, logger }),
      freshEvaluator: new ApiGateEvaluator({ apis, fresh: true, logger }),
      logger,
      // Each call of a gate (a read, a grant, a message) is bounded like a command (issue 34).
      settings: { graceHours: config.gates.graceHours, callTimeoutMs: config.commandDeadlineMs },
      tell: gateTell(() => kernel.sending.get(), kernel.dataMark, config.commandDeadlineMs),
      // Each platform that enforces gates: its membership (roles, or a group's join requests).
      memberships: () => kernel.platforms.get().flatMap((adapter) => adapter.gateMembership ?? []),
      now: kernel.now,
    });
    return {
      services: { gates: service },
      moveChat: (platform, from, to) => gates.moveChat(platform as Platform, from, to),
      // The invite link the request came through picks its gate (issue 34).
      onJoinRequest: (platform, chatId, userId, userChatId, inviteLink) =>
        service
          .onJoinRequest(platform, chatId, userId, userChatId, inviteLink)
          .catch((error: unknown) => {
            // The request stays with the group's admins; the person may ask again.
            logger.warn({ err: error }, "could not decide a join request");
          }),
    };
  },
  build(kernel) {
    const service = kernel.services.gates as GateService;
    const logger = kernel.logger.child({ part: "gates" });
    const recheck = new GateRecheck({
      service,
      leases: kernel.store.leases,
      holder: kernel.holder,
      logger,
      settings: { checksPerMinute: kernel.config.gates.checksPerMinute, tickMs: GATE_TICK_MS },
      now: kernel.now,
      ...(kernel.monotonic ? { monotonic: kernel.monotonic } : {}),
    });
    gateMetrics(kernel.metrics.registry, {
      counters: () => service.counters,
      counts: () => gateStoreOf(kernel.store).counts(),
    });
    return {
      exposes: { service, recheck },
      // The gates' counts (bounded by /healthz: a slow count is left out).
      figures: async (database) => (database ? { gates: await service.stats() } : {}),
      jobs: [
        {
          name: "gates",
          start: () => recheck.start(),
          stop: () => recheck.stop(),
          checks: () => recheck.checks(Math.max(3 * GATE_TICK_MS, SLOW_JOB_BOUND_MS)),
        },
      ],
    };
  },
};
