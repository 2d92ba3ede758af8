// `npm run build`: bundles the bot, the slash-command registration and the simulator CLI into
// dist/ as ESM. Packages stay external (node_modules is there at run time, and native addons
// cannot be bundled); dynamic imports become chunks of their own, so a platform's library or the
// chart renderer loads only when it is used. Run the output with `node --enable-source-maps`.
import { rmSync, writeFileSync } from "node:fs";
import { build, stop } from "esbuild";

export async function buildDist(root = process.cwd()) {
  // Chunk names carry a hash: without a clean slate, every build would leave the last one's behind.
  rmSync(`${root}/dist`, { recursive: true, force: true });
  try {
    await build({
      absWorkingDir: root,
      entryPoints: {
        main: "src/main.ts",
        register: "src/register.ts",
        "migrate-store": "src/migrate-store.ts",
        simulator: "src/simulator/cli.ts",
        // Charts are drawn in a worker thread (src/render/charts.ts), from its own entry.
        "chart-worker": "src/render/chart-worker.ts",
      },
      outdir: "dist",
      bundle: true,
      splitting: true,
      format: "esm",
      platform: "node",
      target: "node20",
      packages: "external",
      sourcemap: true,
      chunkNames: "chunks/[name]-[hash]",
      logLevel: "warning",
    });
  } finally {
    // esbuild keeps its service process for the next call until this process exits: under
    // `npm start` that was a second process of some 46 MB beside the bot for its whole run.
    await stop();
  }
  writeFileSync(`${root}/dist/.build-stamp`, `${new Date().toISOString()}\n`);
}

if (import.meta.url === `file://${process.argv[1]}`) await buildDist();
