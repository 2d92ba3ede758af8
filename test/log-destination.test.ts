import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createLogger } from "../src/log.ts";
import { LogDestination } from "../src/log-destination.ts";

/**
 * The logs' destination on a device that is always full (/dev/full answers every write with
 * ENOSPC): it drops and counts, says so once, never throws or blocks, and a fatal line (pino's
 * flushSync) returns at once. The recovery once there is room is in disk-full-process.test.ts.
 */

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

describe.runIf(existsSync("/dev/full"))("a log destination that cannot be written", () => {
  it("drops its lines, counts them, says why once, and a fatal line does not block", async () => {
    const fd = openSync("/dev/full", "w");
    const notices: string[] = [];
    const destination = new LogDestination(fd, {
      name: "log file /dev/full",
      flushMs: 10,
      retryMs: 50,
      notice: (line) => notices.push(line),
    });
    cleanups.push(() => {
      destination.close();
      closeSync(fd);
    });
    const logger = createLogger({ level: "info", destination });
    for (let i = 0; i < 100; i++) logger.info({ i }, "a line");
    await new Promise<void>((resolve) => logger.flush(() => resolve()));
    expect(destination.state().failing).toMatch(/cannot write the log file \/dev\/full \(ENOSPC\)/);
    // Tried again, and failing again, while the device is full; one notice only.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const state = destination.state();
    expect(state.failures).toBeGreaterThan(1);
    expect(state.dropped).toBe(100);
    expect(notices).toHaveLength(1);
    expect(notices[0]).toMatch(/^Cannot write the log file \/dev\/full \(ENOSPC\)/);
    // pino calls flushSync after a fatal line: nothing is retried, the line is counted.
    logger.fatal("a crash");
    expect(destination.state().dropped).toBe(101);
  });

  it("a fatal line on a healthy file is written at once, synchronously", () => {
    const dir = mkdtempSync(join(tmpdir(), "log-"));
    const path = join(dir, "bot.log");
    const fd = openSync(path, "a");
    const destination = new LogDestination(fd, { name: `log file ${path}` });
    cleanups.push(() => {
      destination.close();
      closeSync(fd);
      rmSync(dir, { recursive: true, force: true });
    });
    const logger = createLogger({ level: "info", destination });
    logger.info("before");
    logger.fatal("the crash");
    const lines = readFileSync(path, "utf8").trim().split("\n");
    expect(lines.map((line) => JSON.parse(line).msg)).toEqual(["before", "the crash"]);
  });
});
