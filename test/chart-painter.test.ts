/**
 * Issue 14, memory: charts are drawn in a worker thread that is replaced after a number of charts
 * and stopped when idle, because Skia keeps memory for every text it rasterizes on a thread until
 * the thread ends (the figures are in `npm run bench`, "Charts"). These tests check the mechanics:
 * the pictures come out the same, the worker is replaced and stopped, and a failing or closed
 * worker fails its draws without breaking the next ones.
 */
import { afterEach, describe, expect, it } from "vitest";
import { ChartPainter } from "../src/render/charts.ts";

const PNG = [0x89, 0x50, 0x4e, 0x47];
const items = (n: number) =>
  Array.from({ length: n }, (_, i) => ({ label: `c${i}`, value: i + 1 }));
const painters: ChartPainter[] = [];
const painter = (options: { drawsPerWorker: number; idleMs: number; timeoutMs: number }) => {
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

  it("a worker that has drawn its share is replaced, and the pictures stay the same", async () => {
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

  it("an idle worker stops; the next chart starts a new one", async () => {
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

  it("a draw that fails in the worker rejects with its error; the worker draws on", async () => {
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

  it("a draw that outlasts its time limit fails, and its worker is replaced", async () => {
    const p = painter({ drawsPerWorker: 100, idleMs: 60_000, timeoutMs: 1 });
    await expect(p.draw({ kind: "ranking", args: ["Top", "Sales", items(25)] })).rejects.toThrow(
      /longer than 1 ms/,
    );
    await expect.poll(() => p.running, { timeout: 5_000 }).toBe(0);
  });
});
