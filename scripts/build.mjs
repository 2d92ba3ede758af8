// `npm run build`: bundles the bot, the slash-command registration and the simulator CLI into
// dist/ as ESM. Dependencies are bundled but for those in EXTERNAL (native addons, and the few
// loaded by path or rarely); dynamic imports become chunks of their own, so a platform's library
// or the chart renderer loads only when it is used. Run the output with
// `node --max-semi-space-size=4` (test/compiled.ts says why).
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { build, stop } from "esbuild";

/**
 * Dependencies that stay in node_modules, each for a reason; every other one is bundled into
 * dist/. Bundled, a package is one minified file's parse instead of the hundreds of files Node
 * would resolve, read and compile one by one (discord.js alone is some 380, zod's ESM build 230),
 * and its source held by V8 shrinks with it: together some 10 MB less resident memory and a
 * quicker start (issue 28).
 */
const EXTERNAL = new Map([
  ["better-sqlite3", "a native addon"],
  ["@napi-rs/canvas", "a native addon (in the chart painter's process only)"],
  ["chart.js", "loaded by the chart painter's process only"],
  ["dejavu-fonts-ttf", "font files, read by path"],
  ["twemoji-colr-font", "a font file, read by path"],
  ["pino", "starts its transports' workers from files by path"],
  ["pg", "loaded only with DATABASE_URL"],
  ["ioredis", "loaded only with REDIS_URL"],
  ["viem", "loaded only for a wallet's proof; 4,000 files, most never used"],
]);

/**
 * Optional peers that bundled packages `require` inside a try (ws, discord.js): absent here, and
 * left to Node's require at run time should an operator install them.
 */
const OPTIONAL_PEERS = ["bufferutil", "utf-8-validate", "zlib-sync", "erlpack", "encoding"];

/** The external dependencies, checked against package.json so that a stale entry fails the build. */
function externalPackages(root) {
  const { dependencies } = JSON.parse(readFileSync(`${root}/package.json`, "utf8"));
  for (const name of EXTERNAL.keys())
    if (!(name in dependencies)) throw new Error(`build.mjs: ${name} is not a dependency`);
  return [...EXTERNAL.keys(), ...OPTIONAL_PEERS].flatMap((name) => [name, `${name}/*`]);
}

/**
 * Bundled CommonJS packages `require` Node's own modules; in an ES module there is no `require`,
 * so each output file makes one (esbuild's shim uses it when it exists).
 */
const REQUIRE_BANNER =
  'import{createRequire as __createRequire}from"node:module";const require=__createRequire(import.meta.url);';

export async function buildDist(root = process.cwd()) {
  // Chunk names carry a hash: without a clean slate, every build would leave the last one's behind.
  rmSync(`${root}/dist`, { recursive: true, force: true });
  try {
    const result = await build({
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
      banner: { js: REQUIRE_BANNER },
      // Read only when an error's stack is logged (src/stacks.ts), never at start: Node's
      // --enable-source-maps would parse every map at load, some 25 MB of resident memory.
      sourcemap: true,
      sourcesContent: false,
      // Less for V8 to scan at each start (zod's bundled build is most of it); names are kept,
      // so stack traces and error names read as in the sources.
      minifyWhitespace: true,
      minifySyntax: true,
      // Which output holds which package (test/lazy-load.test.ts reads it).
      metafile: true,
      chunkNames: "chunks/[name]-[hash]",
      logLevel: "warning",
    });
    writePackagesOf(root, result.metafile);
    for (const name of Object.keys(PAGES)) await buildPage(root, name);
  } finally {
    // esbuild keeps its service process for the next call until this process exits: under
    // `npm start` that was a second process of some 46 MB beside the bot for its whole run.
    await stop();
  }
  writeFileSync(`${root}/dist/.build-stamp`, `${new Date().toISOString()}\n`);
}

/**
 * dist/packages.json: for each output file, the packages bundled into it, so that a test can tell
 * which packages a run has loaded from which files it read.
 */
function writePackagesOf(root, metafile) {
  const packagesOf = {};
  for (const [file, output] of Object.entries(metafile.outputs)) {
    if (!file.endsWith(".js")) continue;
    const packages = new Set();
    for (const input of Object.keys(output.inputs)) {
      const match = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(input);
      if (match) packages.add(match[1]);
    }
    packagesOf[file.replace(/^dist\//, "")] = [...packages].sort();
  }
  writeFileSync(`${root}/dist/packages.json`, `${JSON.stringify(packagesOf)}\n`);
}

/**
 * The pages the HTTP host serves to browsers, each bundled from its own folder into dist/<name>
 * beside a manifest (read by src/http/page-assets.ts): the verification page (issue 27) and the
 * managers' insights page (issue 36).
 */
export const PAGES = {
  verify: {
    script: "src/verify/page/page.ts",
    style: "src/verify/page/page.css",
    // Wallets' in-app browsers lag behind: what phones from some five years ago run.
    target: ["es2020", "safari14", "chrome87", "firefox78"],
  },
  dashboard: {
    script: "src/insights/dashboard/page/page.ts",
    style: "src/insights/dashboard/page/page.css",
    // Managers' own browsers, desktop or phone, of the last few years.
    target: ["es2020", "safari15", "chrome96", "firefox91"],
  },
};

/** Where a page's files go, beside their manifest. */
export function pageDir(name) {
  return `dist/${name}`;
}

/**
 * A page's script and style, for browsers: one file each, minified, named by their content's hash
 * so a browser may keep them for good, and nothing loaded from elsewhere (the pages'
 * Content-Security-Policy allows their own origin only). The manifest maps each to its hashed name.
 */
export async function buildPage(root, name, outdir = `${root}/${pageDir(name)}`) {
  const page = Object.hasOwn(PAGES, name) ? PAGES[name] : undefined;
  if (!page) throw new Error(`build.mjs: no page named ${name}`);
  const result = await build({
    absWorkingDir: root,
    entryPoints: { page: page.script, style: page.style },
    outdir,
    bundle: true,
    format: "iife",
    platform: "browser",
    target: page.target,
    minify: true,
    entryNames: "[name]-[hash]",
    metafile: true,
    logLevel: "warning",
  });
  const manifest = {};
  for (const [file, output] of Object.entries(result.metafile.outputs)) {
    const base = file.slice(file.lastIndexOf("/") + 1);
    if (output.entryPoint?.endsWith(".ts")) manifest.script = base;
    else if (base.endsWith(".css")) manifest.style = base;
  }
  writeFileSync(`${outdir}/manifest.json`, `${JSON.stringify(manifest)}\n`);
}

/** A page alone (running from the sources without dist/), leaving no esbuild process behind. */
export async function buildPageAlone(root, name, outdir) {
  try {
    await buildPage(root, name, outdir);
  } finally {
    await stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await buildDist();
