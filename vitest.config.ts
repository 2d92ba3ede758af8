import { mkdirSync } from "node:fs";
import { defineConfig } from "vitest/config";

/**
 * The tests' temporary files (a DATA_DIR, its SQLite database and write-ahead log, per test) go to
 * memory where the system has a tmpfs: on disk, opening, checkpointing and closing a database
 * waits for fsync (10 ms against 3 on tmpfs, some 500 times a run). Nothing a test checks depends
 * on the disk: a killed process leaves its writes in the page cache either way.
 */
function memoryTmpdir(): Record<string, string> {
  try {
    const dir = "/dev/shm/nft-bot-tests";
    mkdirSync(dir, { recursive: true });
    return { TMPDIR: dir };
  } catch {
    return {};
  }
}

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    exclude: ["test/bench/**", "node_modules/**"],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    // Builds dist/ once: the tests that start the bot as a child run the compiled output.
    globalSetup: ["test/build-setup.ts"],
    setupFiles: ["test/close-painter.ts"],
    env: memoryTmpdir(),
    pool: "forks",
    // vitest defaults to cores - 1 workers: one on the 2-core CI machine. The suites wait on
    // loopback I/O and child processes far more than on CPU, so more than the cores share the
    // machine well; the third keeps both cores busy while the full-disk test waits out its three
    // minutes (with two, the suite went from 328 s to 488 s when it came).
    maxWorkers: 3,
  },
});
