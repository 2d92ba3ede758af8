import { type DeliveryDeps, DeliveryWorker } from "../src/alerts/delivery.ts";
import { NewContractPoller, type PollerDeps } from "../src/alerts/poller.ts";
import { alertStoresOf } from "../src/alerts/store/index.ts";
import type { RenderableReply } from "../src/core/reply.ts";
import { silentLogger } from "../src/log.ts";
import type { ChatSender, SendFailure } from "../src/outbound/types.ts";
import type { RuntimeSetup } from "./helpers.ts";
import { outboundOf } from "./outbound-helpers.ts";

/** A platform that records what it is sent, and fails with the failures queued on it. */
export class RecordingSender implements ChatSender {
  maxInFlight = 4;
  keys: (string | undefined)[] = [];
  sent: { chatId: string; reply: RenderableReply }[] = [];
  failures: unknown[] = [];
  async sendToChat(chatId: string, reply: RenderableReply, key?: string): Promise<void> {
    this.keys.push(key);
    const failure = this.failures.shift();
    if (failure) throw failure;
    this.sent.push({ chatId, reply });
  }
  classifySendError(error: unknown): SendFailure {
    return error as SendFailure;
  }
}

/**
 * The alert pipeline on a test runtime's store: a poller on its client and a delivery worker to a
 * recording Telegram, as the bot wires them; the tests override what they are about.
 */
export function alertPipeline(
  setup: RuntimeSetup,
  overrides: {
    /** Takes the recording sender's place on Telegram (which is still returned). */
    sender?: ChatSender;
    worker?: Partial<DeliveryDeps>;
    workerSettings?: Partial<DeliveryDeps["settings"]>;
    poller?: Partial<PollerDeps>;
    pollerSettings?: Partial<PollerDeps["settings"]>;
  } = {},
) {
  const { kv } = setup.store;
  const alerts = alertStoresOf(setup.store).outbox;
  const sender = new RecordingSender();
  const worker = new DeliveryWorker({
    alerts,
    outbound: outboundOf(
      setup.store,
      { telegram: overrides.sender ?? sender },
      {
        moveChat: (platform, from, to) => setup.subscriptions.moveChat(platform, from, to),
        materialize: (platform, chatId, reply) =>
          setup.runtime.materialize(reply, { platform, chat: { id: chatId, kind: "group" } }),
        ...(overrides.worker?.now ? { now: overrides.worker.now } : {}),
      },
    ),
    logger: silentLogger(),
    isLeader: () => true,
    ...overrides.worker,
    settings: {
      digestThreshold: 5,
      batch: 500,
      tickMs: 1000,
      explorerUrl: "https://etherscan.io",
      maxAttempts: 10,
      ...overrides.workerSettings,
    },
  });
  const poller = new NewContractPoller({
    api: setup.api,
    alerts,
    kv,
    leases: setup.store.leases,
    logger: silentLogger(),
    holder: "test-holder",
    ...overrides.poller,
    settings: {
      intervalMs: 1000,
      overlapMs: 60_000,
      limit: 500,
      maxPages: 10,
      maxClockSkewMs: 300_000,
      ...overrides.pollerSettings,
    },
  });
  return { alerts, kv, sender, worker, poller };
}
