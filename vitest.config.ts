import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    exclude: ["test/bench/**", "node_modules/**"],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    // Builds dist/ once: the tests that start the bot as a child run the compiled output.
    globalSetup: ["test/build-setup.ts"],
    pool: "forks",
    // vitest defaults to cores - 1 workers: one on the 2-core CI machine. The suites wait on
    // loopback I/O and child processes far more than on CPU, so two share the machine well.
    maxWorkers: 2,
  },
});
