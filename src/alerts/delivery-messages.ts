/**
 * The messages a delivery round makes of the alerts it took (delivery.ts sends them): one per
 * alert, or one digest per channel for a burst or for alerts its rules held; channels taking
 * turns; the same idempotency key for every try at the same alerts.
 */

import { type Chain, KNOWN_CHAINS } from "../chains.ts";
import type { Reply } from "../core/reply.ts";
import { sendKey } from "../outbound/key.ts";
import { type AlertChain, alertReply, digestReply } from "./message.ts";
import type { DueAlert } from "./store/types.ts";

export interface Message {
  reply: Reply;
  alerts: DueAlert[];
  /** A note that these alerts are suppressed (the most reports among them), not the alerts. */
  suppressedBy?: number;
}

/** Alerts grouped by their subscription (one channel on one chain), in order of first appearance. */
export function bySubscription(alerts: readonly DueAlert[]): DueAlert[][] {
  const groups = new Map<number, DueAlert[]>();
  for (const alert of alerts) {
    const group = groups.get(alert.subscriptionId);
    if (group) group.push(alert);
    else groups.set(alert.subscriptionId, [alert]);
  }
  return [...groups.values()];
}

/** The same key for every attempt at the same alert (or digest of the same alerts). */
export function idempotencyKey(alerts: readonly DueAlert[]): string {
  return sendKey(
    alerts
      .map((alert) => `${alert.subscriptionId}:${alert.contract.address}`)
      .sort()
      .join(","),
  );
}

/** Takes one message per channel in turn, so no channel waits behind another's burst. */
export function interleave(groups: Message[][]): Message[] {
  const out: Message[] = [];
  for (let i = 0; out.length < groups.reduce((n, g) => n + g.length, 0); i++) {
    for (const group of groups) {
      const message = group[i];
      if (message) out.push(message);
    }
  }
  return out;
}

/**
 * How alerts of `id` show their chain (a chain no longer configured still gets its links):
 * `chains` are the chains served, `explorerUrl` the explorer of a chain neither served nor known.
 */
export function alertChain(
  id: string,
  chains: readonly Pick<Chain, "id" | "name" | "explorer" | "spam">[],
  explorerUrl: string,
): AlertChain {
  const chain =
    chains.find((c) => c.id === id) ?? (KNOWN_CHAINS[id] && { ...KNOWN_CHAINS[id], id });
  return {
    id,
    explorer: chain?.explorer ?? explorerUrl,
    name: chains.length > 1 ? (chain?.name ?? id) : undefined,
    spam: chain?.spam,
  };
}

/**
 * A channel's alerts (one subscription: one chain) as messages, or one digest for a burst
 * (`digestThreshold` alerts or more) or for alerts its rules held.
 */
export function messagesFor(
  alerts: DueAlert[],
  chain: AlertChain,
  digestThreshold: number,
  now: () => number,
): Message[] {
  // Alerts held by the channel's rules (quiet hours, a digest every N minutes) go out as one
  // digest when there are several; otherwise a burst of digestThreshold makes one.
  const held = alerts.some((alert) => alert.held);
  if (alerts.length >= (held ? Math.min(2, digestThreshold) : digestThreshold)) {
    const note = alerts.find((alert) => alert.note)?.note ?? null;
    return [
      {
        reply: digestReply(
          alerts.map((alert) => alert.contract),
          note,
          chain,
          held ? "rules" : "burst",
        ),
        alerts,
      },
    ];
  }
  return alerts.map((alert) => ({
    reply: alertReply(alert.contract, alert.note, chain, new Date(now())),
    alerts: [alert],
  }));
}
