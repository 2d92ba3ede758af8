/**
 * Issues 14 and 28, memory: charts are drawn in a child process, so Skia's library and pages never
 * weigh on the bot's own memory; the child is replaced after a number of charts and exits when
 * idle, because Skia keeps memory for every text it rasterizes until its thread ends (the figures
 * are in `npm run bench`, "Charts"). These tests check the mechanics: the pictures come out the
 * same, the child is replaced and stopped, and a failing, killed, hung or closed child fails its
 * draws without breaking the next ones.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { createBot } from "../src/bot.ts";
import { parseConfig } from "../src/config.ts";
import { silentLogger } from "../src/log.ts";
import { ChartPainter, chartPainter } from "../src/render/charts.ts";

const PNG = [0x89, 0x50, 0x4e, 0x47];
const items = (n: number) =>
  Array.from({ length: n }, (_, i) => ({ label: `c${i}`, value: i + 1 }));
const painters: ChartPainter[] = [];
const painter = (options: {
  drawsPerWorker: number;
  idleMs: number;
  timeoutMs: number;
  maxWaiting?: number;
}) => {
  const made = new ChartPainter(options);
  painters.push(made);
  return made;
};

afterEach(async () => {
  for (const made of painters.splice(0)) await made.close();
});

describe("the chart painter", () => {
  it("draws in order, concurrently requested charts each get their own picture", async () => {
    const p = painter({ drawsPerWorker: 100, idleMs: 60_000, timeoutMs: 20_000 });
    const pngs = await Promise.all(
      [1, 2, 3, 4].map((n) =>
        p.draw({ kind: "ranking", args: [`Top ${n}`, "Sales", items(n * 3)] }),
      ),
    );
    for (const png of pngs) expect([...png.subarray(0, 4)]).toEqual(PNG);
    // Different data, different pictures: no response went to the wrong request.
    expect(new Set(pngs.map((png) => png.toString("base64"))).size).toBe(4);
    expect(p.started).toBe(1);
  });

  it("a child that has drawn its share is replaced, and the pictures stay the same", async () => {
    const p = painter({ drawsPerWorker: 3, idleMs: 60_000, timeoutMs: 20_000 });
    const first = await p.draw({ kind: "ranking", args: ["Top", "Sales", items(5)] });
    for (let i = 0; i < 6; i++)
      await p.draw({
        kind: "owners",
        args: ["Owners", [{ timestamp: "2026-11-01T00:00:00Z", count: String(i) }]],
      });
    expect(p.started).toBe(3);
    const again = await p.draw({ kind: "ranking", args: ["Top", "Sales", items(5)] });
    expect(p.started).toBe(3);
    expect(again.equals(first)).toBe(true);
  });

  it("an idle child stops; the next chart starts a new one", async () => {
    const p = painter({ drawsPerWorker: 100, idleMs: 50, timeoutMs: 20_000 });
    await p.draw({
      kind: "audience",
      args: ["Audience", [{ label: "Trader", share: 40, change: "+1" }]],
    });
    await expect.poll(() => p.running, { timeout: 5_000 }).toBe(0);
    await p.draw({
      kind: "audience",
      args: ["Audience", [{ label: "Trader", share: 40, change: "+1" }]],
    });
    expect(p.started).toBe(2);
  });

  it("a draw that fails in the child rejects with its error; the child draws on", async () => {
    const p = painter({ drawsPerWorker: 100, idleMs: 60_000, timeoutMs: 20_000 });
    await expect(
      p.draw({ kind: "ranking", args: ["Top\u0000", "Sales", items(3)] }),
    ).rejects.toThrow(/CString/);
    expect([
      ...(await p.draw({ kind: "ranking", args: ["Top", "Sales", items(3)] })).subarray(0, 4),
    ]).toEqual(PNG);
    expect(p.started).toBe(1);
  });

  it("draws in progress fail when the painter closes, and a later draw starts afresh", async () => {
    const p = painter({ drawsPerWorker: 100, idleMs: 60_000, timeoutMs: 20_000 });
    const pending = p.draw({ kind: "ranking", args: ["Top", "Sales", items(25)] });
    const failed = expect(pending).rejects.toThrow(/closed/);
    await p.close();
    await failed;
    expect(p.running).toBe(0);
    const png = await p.draw({ kind: "ranking", args: ["Top", "Sales", items(2)] });
    expect([...png.subarray(0, 4)]).toEqual(PNG);
  });

  it("a draw that outlasts its time limit fails, and its child is replaced", async () => {
    const p = painter({ drawsPerWorker: 100, idleMs: 60_000, timeoutMs: 1 });
    await expect(p.draw({ kind: "ranking", args: ["Top", "Sales", items(25)] })).rejects.toThrow(
      /longer than 1 ms/,
    );
    await expect.poll(() => p.running, { timeout: 5_000 }).toBe(0);
  });

  it("a painter killed mid-draw fails that chart only; the next chart starts a new one", async () => {
    const p = painter({ drawsPerWorker: 100, idleMs: 60_000, timeoutMs: 20_000 });
    await p.draw({ kind: "ranking", args: ["Top", "Sales", items(3)] });
    const first = p.pid as number;
    const pending = p.draw({ kind: "ranking", args: ["Top", "Sales", items(25)] });
    process.kill(first, "SIGKILL");
    await expect(pending).rejects.toThrow(/exited/);
    const png = await p.draw({ kind: "ranking", args: ["Top", "Sales", items(3)] });
    expect([...png.subarray(0, 4)]).toEqual(PNG);
    expect(p.started).toBe(2);
    expect(p.pid).not.toBe(first);
  });

  it("a hung painter: the chart fails at its deadline, the child is killed, the next starts afresh", async () => {
    // Room for a painter's start (Skia loading) on a loaded 2-core machine, which took over 1 s.
    const p = painter({ drawsPerWorker: 100, idleMs: 60_000, timeoutMs: 3_000 });
    await p.draw({ kind: "ranking", args: ["Top", "Sales", items(3)] });
    const hung = p.pid as number;
    // Stopped, the child answers nothing, as a painter stuck in a native call would.
    process.kill(hung, "SIGSTOP");
    await expect(p.draw({ kind: "ranking", args: ["Top", "Sales", items(3)] })).rejects.toThrow(
      /longer than 3000 ms/,
    );
    await expect.poll(() => existsSync(`/proc/${hung}`), { timeout: 5_000 }).toBe(false);
    const png = await p.draw({ kind: "ranking", args: ["Top", "Sales", items(3)] });
    expect([...png.subarray(0, 4)]).toEqual(PNG);
    expect(p.started).toBe(2);
  });

  it("the idle painter's process exits, and closing leaves none behind", async () => {
    const p = painter({ drawsPerWorker: 100, idleMs: 50, timeoutMs: 20_000 });
    await p.draw({ kind: "ranking", args: ["Top", "Sales", items(3)] });
    const idle = p.pid as number;
    // A process of its own, alive while it waits for the next chart.
    expect(idle).toBeGreaterThan(0);
    expect(idle).not.toBe(process.pid);
    expect(existsSync(`/proc/${idle}`)).toBe(true);
    await expect.poll(() => existsSync(`/proc/${idle}`), { timeout: 5_000 }).toBe(false);
    const q = painter({ drawsPerWorker: 100, idleMs: 60_000, timeoutMs: 20_000 });
    await q.draw({ kind: "ranking", args: ["Top", "Sales", items(3)] });
    const open = q.pid as number;
    await q.close();
    expect(existsSync(`/proc/${open}`)).toBe(false);
  });

  it("charts beyond the bounded queue fail at once rather than wait", async () => {
    const p = painter({ drawsPerWorker: 100, idleMs: 60_000, timeoutMs: 20_000, maxWaiting: 2 });
    const drawn = [1, 2, 3].map((n) =>
      p.draw({ kind: "ranking", args: [`Top ${n}`, "Sales", items(3)] }),
    );
    await expect(drawn[2]).rejects.toThrow(/too many charts/);
    for (const png of await Promise.all(drawn.slice(0, 2)))
      expect([...png.subarray(0, 4)]).toEqual(PNG);
  });

  it("the painter's environment is an allow-list: none of the bot's variables, secret or not, reach it", async () => {
    // Secrets under names no deny-list knows: PostgreSQL's own variables, an RPC key named by the
    // operator, anything else; and the bot's known ones.
    const planted: Record<string, string> = {
      PGPASSWORD: "pg-password-planted",
      PGUSER: "pg-user-planted",
      MY_RPC_KEY: "rpc-key-planted",
      SECRET_X: "secret-x-planted",
      AWS_SECRET_ACCESS_KEY: "aws-planted",
      DATABASE_URL: "postgres://u:database-url-planted@127.0.0.1/db",
      DISCORD_TOKEN: "discord-token-planted",
      LANG: "de_DE.UTF-8",
    };
    const saved = Object.fromEntries(Object.keys(planted).map((name) => [name, process.env[name]]));
    Object.assign(process.env, planted);
    try {
      const p = painter({ drawsPerWorker: 100, idleMs: 60_000, timeoutMs: 20_000 });
      await p.draw({ kind: "ranking", args: ["Top", "Sales", items(3)] });
      // The child's real environment, as the kernel holds it: no hook in the child needed.
      const environ = readFileSync(`/proc/${p.pid}/environ`, "utf8");
      for (const [name, value] of Object.entries(planted)) {
        expect(environ, name).not.toContain(value);
        expect(environ, name).not.toMatch(new RegExp(`(^|\\0)${name}=`));
      }
      const names = environ
        .split("\0")
        .filter(Boolean)
        .map((entry) => entry.slice(0, entry.indexOf("=")));
      // Node's IPC channel (set by fork) and the painter's own allocator setting; nothing else.
      for (const name of names)
        expect([
          "NODE_CHANNEL_FD",
          "NODE_CHANNEL_SERIALIZATION_MODE",
          "MALLOC_ARENA_MAX",
        ]).toContain(name);
    } finally {
      for (const [name, value] of Object.entries(saved))
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
    }
  });

  it("the bot's stop ends the painter's child it started for a chart", async () => {
    const dir = mkdtempSync(join(tmpdir(), "bot-painter-"));
    const input = new PassThrough();
    const output = new PassThrough();
    let printed = "";
    output.on("data", (chunk) => {
      printed += String(chunk);
    });
    const bot = await createBot(parseConfig({ DATA_DIR: dir, SIMULATOR_MINT_INTERVAL_MS: "0" }), {
      logger: silentLogger(),
      input,
      output,
    });
    try {
      await bot.start();
      input.write("/top volume 1d\n");
      await expect.poll(() => /Picture: .+\.png/.test(printed), { timeout: 15_000 }).toBe(true);
      const pid = chartPainter.pid as number;
      expect(pid).toBeGreaterThan(0);
      await bot.stop();
      expect(chartPainter.pid).toBeUndefined();
      expect(existsSync(`/proc/${pid}`)).toBe(false);
    } finally {
      await bot.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
