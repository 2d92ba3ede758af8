/**
 * The HTTP host under a slow-body attack on Discord's interactions route (issue 25, item 3): many
 * connections each send most of a body and stall. They must be closed by the request timeout, the
 * bytes held for bodies not yet verified must stay under one shared budget, connections past the
 * cap must be refused, and a signed interaction must still be answered meanwhile.
 */
import type { Socket } from "node:net";
import { Registry } from "prom-client";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { DiscordHttpAdapter, INTERACTIONS_PATH } from "../src/adapters/discord-http/index.ts";
import { HttpHost, type HttpLimits } from "../src/http/host.ts";
import { silentLogger } from "../src/log.ts";
import { SourceUpdateDedup } from "../src/store/updates.ts";
import { type FakeDiscord, startFakeDiscord } from "./fakes/discord/index.ts";
import { freePort, type RuntimeSetup, startRuntime } from "./helpers.ts";
import { interactionHead, stalledRequest } from "./stalling-client.ts";

let t: RuntimeSetup;
let fake: FakeDiscord;
let adapter: DiscordHttpAdapter;
const hosts: HttpHost[] = [];
const sockets: Socket[] = [];
const attacker = (port: number, head: string, bodyBytes = 0) =>
  stalledRequest(port, sockets, head, bodyBytes);

beforeAll(async () => {
  t = await startRuntime();
  fake = await startFakeDiscord();
  adapter = new DiscordHttpAdapter({
    token: fake.token,
    publicKey: fake.publicKey,
    runtime: t.runtime,
    logger: silentLogger(),
    apiUrl: fake.apiBase,
    interactions: new SourceUpdateDedup(t.store.updates, { source: "discord" }),
  });
  await adapter.start();
});

afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  for (const host of hosts.splice(0)) await host.close();
});

afterAll(async () => {
  await adapter.stop();
  await fake.close();
  await t.close();
});

async function serve(
  limits: Partial<HttpLimits>,
  registry?: Registry,
): Promise<{ host: HttpHost; port: number }> {
  const host = new HttpHost(silentLogger(), { limits, ...(registry ? { registry } : {}) });
  hosts.push(host);
  for (const route of adapter.routes) host.mount(route);
  const port = await freePort();
  await host.listen(port, "127.0.0.1");
  return { host, port };
}

async function until(check: () => boolean, what: string, withinMs = 10_000): Promise<void> {
  const deadline = Date.now() + withinMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`not within ${withinMs} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe("the HTTP host under stalled bodies", () => {
  it("closes requests whose headers or body stall, after the request and header timeouts", async () => {
    const { host, port } = await serve({ headersTimeoutMs: 300, requestTimeoutMs: 500 });
    const bodies = Array.from({ length: 10 }, () =>
      attacker(port, interactionHead(64 * 1024), 64 * 1024 - 1),
    );
    const headers = attacker(port, `POST ${INTERACTIONS_PATH} HTTP/1.1\r\nHost: x\r\n`);
    // Without timeouts Node waits 300 s for a body; generous against 0.5 s.
    await until(
      () => [...bodies, headers].every((a) => a.isClosed()),
      "every stalled request closed",
    );
    for (const answer of await Promise.all(bodies.map((a) => a.closed)))
      expect(answer).toMatch(/^(HTTP\/1\.1 408|$)/);
    await until(() => host.stats().connections === 0, "no connection left");
    expect(host.stats().unauthenticatedBodyBytes).toBe(0);
  });

  it("holds at most the budget of unverified body bytes, and still answers a signed interaction", async () => {
    const budget = 256 * 1024;
    const registry = new Registry();
    const { host, port } = await serve(
      { unauthenticatedBodyBytes: budget, maxConnections: 200, requestTimeoutMs: 60_000 },
      registry,
    );
    // 40 x 64 KiB is ten times the budget.
    const bodies = Array.from({ length: 40 }, () =>
      attacker(port, interactionHead(64 * 1024), 64 * 1024 - 1),
    );
    const fits = Math.floor(budget / (64 * 1024 - 1));
    await until(
      () => bodies.filter((a) => a.isClosed()).length >= bodies.length - fits,
      "bodies over the budget refused",
    );
    const stats = host.stats();
    expect(stats.unauthenticatedBodyBytes).toBeLessThanOrEqual(budget);
    expect(stats.peakUnauthenticatedBodyBytes).toBeLessThanOrEqual(budget);
    expect(stats.peakUnauthenticatedBodyBytes).toBeGreaterThan(budget / 2);
    expect(stats.shedBodies).toBeGreaterThanOrEqual(bodies.length - fits);

    // Discord's own request, while the stalled bodies still hold the budget.
    const delivery = await fake.postInteraction(
      `http://127.0.0.1:${port}${INTERACTIONS_PATH}`,
      fake.ping(),
    );
    expect(delivery).toMatchObject({ status: 200, body: { type: 1 } });
    expect(host.stats().peakUnauthenticatedBodyBytes).toBeLessThanOrEqual(budget);

    const metrics = await registry.metrics();
    const peak = /bot_http_unauthenticated_body_bytes_peak (\d+)/.exec(metrics)?.[1];
    expect(Number(peak)).toBeLessThanOrEqual(budget);
    expect(Number(peak)).toBeGreaterThan(0);
  });

  it("refuses connections past the cap at once, and serves again when they go", async () => {
    const { host, port } = await serve({ maxConnections: 5, headersTimeoutMs: 60_000 });
    const held = Array.from({ length: 5 }, () =>
      attacker(port, `POST ${INTERACTIONS_PATH} HTTP/1.1\r\n`),
    );
    await until(() => host.stats().connections === 5, "five connections held");
    const extra = attacker(port, `POST ${INTERACTIONS_PATH} HTTP/1.1\r\n`);
    expect(await extra.closed).toBe("");
    expect(host.stats().refusedConnections).toBeGreaterThanOrEqual(1);
    expect(held.every((a) => !a.isClosed())).toBe(true);

    for (const socket of sockets.splice(0)) socket.destroy();
    await until(() => host.stats().connections === 0, "held connections gone");
    const delivery = await fake.postInteraction(
      `http://127.0.0.1:${port}${INTERACTIONS_PATH}`,
      fake.ping(),
    );
    expect(delivery.status).toBe(200);
  });
});
