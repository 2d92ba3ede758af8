import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type pg from "pg";
import { NFT_CONTRACT_TYPES } from "../src/api/schemas.ts";
import type { Simulator } from "../src/simulator/index.ts";
import { COMPILED_BOT, ROOT } from "./compiled.ts";
import type { FakeDiscord } from "./fakes/discord/index.ts";
import type { FakeTelegram } from "./fakes/telegram/index.ts";
import { freePort } from "./helpers.ts";
import { POSTGRES_URL, REDIS_URL } from "./services.ts";

/**
 * Several compiled bot processes on one PostgreSQL schema and one Redis key prefix, Discord over
 * HTTP interactions and Telegram on a webhook, against the fakes and one simulator: the scaled-out
 * deployment of issue 16, for test/scale-out.test.ts and the 3-instance fan-out benchmark.
 */

/** Discord's documented limits (50 requests a second per bot, 5 messages per 5 s per channel). */
export const DISCORD_LIMITS = { perChannel: { limit: 5, windowMs: 5000 }, globalPerSecond: 50 };
export const WEBHOOK_SECRET = "scale-out-secret";

export interface Cluster {
  sim: Simulator;
  telegram: FakeTelegram;
  discord: FakeDiscord;
  /** The PostgreSQL schema and Redis key prefix the instances share. */
  schema: string;
  prefix: string;
}

export interface Instance {
  index: number;
  child: ChildProcess;
  /** http://127.0.0.1:PORT, its HTTP host. */
  base: string;
  /** What it printed (LOG_LEVEL warn by default). */
  output: string[];
  exited: Promise<unknown>;
  /** Ends it (SIGKILL if still running) and removes its data directory. */
  close(): Promise<void>;
}

/**
 * Starts instance `index` (1 registers the slash commands) and resolves once its /healthz answers
 * 200. `env` adds or overrides settings.
 */
export async function startInstance(
  cluster: Cluster,
  index: number,
  env: Record<string, string> = {},
): Promise<Instance> {
  const { sim, telegram, discord } = cluster;
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), `scale-out-${index}-`));
  const inherited: Record<string, string> = {};
  for (const key of ["PATH", "HOME"])
    if (process.env[key]) inherited[key] = process.env[key] as string;
  const child = spawn(process.execPath, COMPILED_BOT, {
    cwd: ROOT,
    env: {
      ...inherited,
      DATA_DIR: dataDir,
      DATABASE_URL: POSTGRES_URL,
      DATABASE_SCHEMA: cluster.schema,
      REDIS_URL,
      REDIS_KEY_PREFIX: cluster.prefix,
      API_BASE_URL: sim.url,
      API_KEY: sim.apiKey,
      DISCORD_TOKEN: discord.token,
      DISCORD_PUBLIC_KEY: discord.publicKey,
      DISCORD_API_URL: discord.apiBase,
      DISCORD_GUILD_ID: discord.guildId,
      DISCORD_REGISTER_ON_START: index === 1 ? "true" : "false",
      TELEGRAM_BOT_TOKEN: telegram.token,
      TELEGRAM_API_ROOT: telegram.apiRoot,
      TELEGRAM_WEBHOOK_URL: "https://bot.example.com/telegram",
      TELEGRAM_WEBHOOK_SECRET: WEBHOOK_SECRET,
      HTTP_PORT: String(port),
      HTTP_HOST: "127.0.0.1",
      POLL_INTERVAL_S: "1",
      DELIVERY_TICK_MS: "200",
      COLLECTION_INDEX_REFRESH_S: "0",
      LOG_LEVEL: "warn",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const output: string[] = [];
  child.stdout?.on("data", (chunk: Buffer) => output.push(String(chunk)));
  child.stderr?.on("data", (chunk: Buffer) => output.push(String(chunk)));
  const exited = new Promise((resolve) => child.once("exit", resolve));
  const instance: Instance = {
    index,
    child,
    base: `http://127.0.0.1:${port}`,
    output,
    exited,
    async close() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await exited;
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  const deadline = Date.now() + 45_000;
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`bot ${index} exited: ${output.join("")}`);
      const health = await fetch(`${instance.base}/healthz`).catch(() => undefined);
      if (health?.status === 200) return instance;
      if (Date.now() > deadline) throw new Error(`bot ${index} not healthy: ${output.join("")}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } catch (error) {
    await instance.close();
    throw error;
  }
}

/** Subscriptions written straight into the shared schema, in one transaction. */
export async function seedSubscriptions(
  db: pg.Pool,
  subscriptions: readonly { platform: "telegram" | "discord"; chatId: string }[],
): Promise<void> {
  const client = await db.connect();
  try {
    await client.query("BEGIN");
    await client.query(
      `INSERT INTO subscriptions (platform, chat_id, chain, types, created_by, created_at)
       SELECT p, c, 'ethereum', 'all', 'seed', $3 FROM unnest($1::text[], $2::text[]) AS t (p, c)`,
      [subscriptions.map((s) => s.platform), subscriptions.map((s) => s.chatId), Date.now()],
    );
    await client.query("COMMIT");
  } catch (error) {
    await client.query("ROLLBACK");
    throw error;
  } finally {
    client.release();
  }
}

/** The holder of the poller's lease ("host:pid:suffix"), and the instance that is it. */
export async function leaseHolder(
  db: pg.Pool,
  instances: readonly Instance[],
): Promise<{ holder: string | undefined; instance: Instance | undefined }> {
  const { rows } = await db.query<{ holder: string }>(
    "SELECT holder FROM leases WHERE name = 'new-contract-poller:ethereum'",
  );
  const holder = rows[0]?.holder;
  const pid = Number(holder?.split(":")[1]);
  return { holder, instance: instances.find((instance) => instance.child.pid === pid) };
}

/** Mints until the contract is an NFT one (some mints are fungible and never alerted); its address. */
export function mintNft(sim: Simulator): string {
  for (;;) {
    const [contract] = sim.mint(1);
    if (contract?.types.some((type) => (NFT_CONTRACT_TYPES as readonly string[]).includes(type)))
      return contract.address.toLowerCase();
  }
}

/**
 * What the platforms accepted in [from, to): Telegram's accepted sendMessage per chat, Discord's
 * messages per channel (a create answered from Discord's nonce memory is the message made before,
 * not a new one), and the times of those sends.
 */
export function acceptedSends(cluster: Cluster, from: number, to = Number.POSITIVE_INFINITY) {
  const tg = new Map<string, number>();
  const tgTimes: number[] = [];
  for (const call of cluster.telegram.sent)
    if (call.method === "sendMessage" && call.ok && call.at >= from && call.at < to) {
      const chat = String(call.params.chat_id);
      tg.set(chat, (tg.get(chat) ?? 0) + 1);
      tgTimes.push(call.at);
    }
  const dcIds = new Map<string, Set<string>>();
  const dcTimes: number[] = [];
  for (const request of cluster.discord.requestsOf("createMessage"))
    if (request.status >= 200 && request.status < 300 && request.at >= from && request.at < to) {
      const channel = request.params.channelId ?? "";
      const id = String((request.response as { id?: string } | undefined)?.id);
      dcIds.set(channel, (dcIds.get(channel) ?? new Set()).add(id));
      dcTimes.push(request.at);
    }
  const dc = new Map([...dcIds].map(([channel, ids]) => [channel, ids.size]));
  return { tg, dc, tgTimes, dcTimes };
}

/** The 429s each fake answered (every route), since `from`. */
export function rateLimited(cluster: Cluster, from = 0): { telegram: number; discord: number } {
  return {
    telegram: cluster.telegram.sent.filter(
      (call) => call.at >= from && call.error?.error_code === 429,
    ).length,
    discord: cluster.discord.requests.filter(
      (request) => request.at >= from && request.status === 429,
    ).length,
  };
}

/** Duplicates (sends past the first) and chats that got nothing, of `ids`. */
export function tally(
  ids: readonly string[],
  counts: Map<string, number>,
): { duplicates: number; lost: number } {
  let duplicates = 0;
  let lost = 0;
  for (const id of ids) {
    const n = counts.get(id) ?? 0;
    if (n === 0) lost++;
    else duplicates += n - 1;
  }
  return { duplicates, lost };
}

/** The most sends within any rolling second. */
export function peakPerSecond(times: readonly number[]): number {
  const sorted = [...times].sort((a, b) => a - b);
  let most = 0;
  for (let i = 0, j = 0; i < sorted.length; i++) {
    while ((sorted[j] ?? 0) <= (sorted[i] ?? 0) - 1000) j++;
    most = Math.max(most, i - j + 1);
  }
  return most;
}

/** Resolves once every alert of `contract` is delivered and the outbox is empty; false on timeout. */
export async function waitDelivered(
  db: pg.Pool,
  contract: string,
  expected: number,
  timeoutMs: number,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { rows } = await db.query<{ delivered: string; waiting: string }>(
      `SELECT (SELECT COUNT(*) FROM deliveries WHERE contract = $1) AS delivered,
              (SELECT COUNT(*) FROM outbox) AS waiting`,
      [contract],
    );
    if (Number(rows[0]?.delivered) === expected && Number(rows[0]?.waiting) === 0) return true;
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
