// `npm run build`: bundles the bot, the slash-command registration and the simulator CLI into
// dist/ as ESM. Packages stay external (node_modules is there at run time, and native addons
// cannot be bundled) but for the few in BUNDLED; dynamic imports become chunks of their own, so a
// platform's library or the chart renderer loads only when it is used. Run the output with
// `node --enable-source-maps`.
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { build, stop } from "esbuild";

/**
 * Packages bundled into dist/ rather than loaded from node_modules: zod's ESM build is some 230
 * files, which Node resolves, reads and compiles one by one at every start (about a fifth of the
 * start to the first answer); bundled, they are one file's parse. Pure JavaScript only.
 */
const BUNDLED = new Set(["zod"]);

/** Every other dependency stays external: node_modules is there at run time. */
function externalPackages(root) {
  const { dependencies } = JSON.parse(readFileSync(`${root}/package.json`, "utf8"));
  return Object.keys(dependencies)
    .filter((name) => !BUNDLED.has(name))
    .flatMap((name) => [name, `${name}/*`]);
}

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
        // Charts are drawn in a child process (src/render/charts.ts), from its own entry.
        "chart-process": "src/render/chart-process.ts",
      },
      outdir: "dist",
      bundle: true,
      splitting: true,
      format: "esm",
      platform: "node",
      target: "node20",
      external: externalPackages(root),
      sourcemap: true,
      // Stack traces need the maps' mappings only: without the sources in them, Node reads and
      // parses far less at each start (it loads every module's map with --enable-source-maps).
      sourcesContent: false,
      // Less for V8 to scan at each start (zod's bundled build is most of it); names are kept,
      // so stack traces and error names read as in the sources.
      minifyWhitespace: true,
      minifySyntax: true,
      chunkNames: "chunks/[name]-[hash]",
      logLevel: "warning",
    });
    await buildVerifyPage(root);
  } finally {
    // esbuild keeps its service process for the next call until this process exits: under
    // `npm start` that was a second process of some 46 MB beside the bot for its whole run.
    await stop();
  }
  writeFileSync(`${root}/dist/.build-stamp`, `${new Date().toISOString()}\n`);
}

/** Where the verification page's files go, beside their manifest (read by src/verify/assets.ts). */
export const PAGE_DIR = "dist/verify";

/**
 * The verification page's script and style (issue 27), for browsers: one file each, minified,
 * named by their content's hash so a browser may keep them for good, and nothing loaded from
 * elsewhere (the page's Content-Security-Policy allows its own origin only). The manifest maps
 * each to its hashed name.
 */
export async function buildVerifyPage(root = process.cwd(), outdir = `${root}/${PAGE_DIR}`) {
  const result = await build({
    absWorkingDir: root,
    entryPoints: { page: "src/verify/page/page.ts", style: "src/verify/page/page.css" },
    outdir,
    bundle: true,
    format: "iife",
    platform: "browser",
    // Wallets' in-app browsers lag behind: what phones from some five years ago run.
    target: ["es2020", "safari14", "chrome87", "firefox78"],
    minify: true,
    entryNames: "[name]-[hash]",
    metafile: true,
    logLevel: "warning",
  });
  const manifest = {};
  for (const [file, output] of Object.entries(result.metafile.outputs)) {
    const name = file.slice(file.lastIndexOf("/") + 1);
    if (output.entryPoint?.endsWith(".ts")) manifest.script = name;
    else if (name.endsWith(".css")) manifest.style = name;
  }
  writeFileSync(`${outdir}/manifest.json`, `${JSON.stringify(manifest)}\n`);
}

/** The page alone (running from the sources without dist/), leaving no esbuild process behind. */
export async function buildVerifyPageAlone(root, outdir) {
  try {
    await buildVerifyPage(root, outdir);
  } finally {
    await stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await buildDist();
