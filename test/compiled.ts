import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** The project's root: children run from here, where dist/ and node_modules are. */
export const ROOT = fileURLToPath(new URL("..", import.meta.url));

/**
 * Node's flags for the bot wherever it runs (the Dockerfile, deploy/nft-audience-bot.service,
 * `npm start`; test/docs.test.ts checks that they agree), for a 256 MB host (issue 28): a young
 * generation of at most 2 × 4 MB, where V8 would grow it to 2 × 16 MB after a burst and keep it,
 * and the old generation's limit V8 picks itself on a host of 1 GB or less (docs/operations.md).
 * No `--enable-source-maps`: src/stacks.ts reads a map only when a stack is logged.
 */
export const NODE_FLAGS = ["--max-semi-space-size=4", "--max-old-space-size=256"];

/**
 * Node's arguments to run the compiled bot as production does (`node …NODE_FLAGS dist/main.js`); test/build-setup.ts builds dist/ once before the suites.
 */
export const COMPILED_BOT = [...NODE_FLAGS, "dist/main.js"];

/**
 * The packages among the modules resolved so far: those loaded from node_modules, and those
 * bundled into the files of dist/ that were loaded (dist/packages.json, written by the build).
 * `record`: the file test/fixtures/record-imports.mjs wrote.
 */
export function loadedPackages(record: string): string[] {
  const bundled = JSON.parse(readFileSync(join(ROOT, "dist", "packages.json"), "utf8")) as Record<
    string,
    string[]
  >;
  const urls = readFileSync(record, "utf8").split("\n");
  const packages = new Set<string>();
  for (const url of urls) {
    const match = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
    if (match?.[1]) packages.add(match[1]);
    const file = /\/dist\/(.+\.js)$/.exec(url)?.[1];
    for (const name of (file && bundled[file]) || []) packages.add(name);
  }
  return [...packages];
}
