import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import type { ServerResponse } from "node:http";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { PageName } from "../../scripts/build.mjs";

export type { PageName };

/** A page's script and style, by their hashed names (scripts/build.mjs). */
export interface PageAssets {
  script: string;
  style: string;
  files: Map<string, { body: Buffer; type: string }>;
}

/** The project's root: the nearest folder with a package.json (from src/http or dist/…). */
function projectRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, "package.json"))) {
    const up = dirname(dir);
    if (up === dir) throw new Error("the pages' assets: no package.json above the code");
    dir = up;
  }
  return dir;
}

function read(dir: string): PageAssets {
  const manifest = JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8")) as {
    script: string;
    style: string;
  };
  const files = new Map<string, { body: Buffer; type: string }>();
  files.set(manifest.script, {
    body: readFileSync(join(dir, manifest.script)),
    type: "text/javascript; charset=utf-8",
  });
  files.set(manifest.style, {
    body: readFileSync(join(dir, manifest.style)),
    type: "text/css; charset=utf-8",
  });
  return { script: manifest.script, style: manifest.style, files };
}

/** The builds on the fly, one at a time: each stops esbuild's service when it is done. */
let building: Promise<unknown> = Promise.resolve();

function inTurn<T>(build: () => Promise<T>): Promise<T> {
  const turn = building.then(build, build);
  building = turn.catch(() => undefined);
  return turn;
}

/**
 * A loader of one page's built script and style (scripts/build.mjs's PAGES): from dist/<page>;
 * run from the sources without a build (`npm run dev`, a test), the page is built once into a
 * temporary folder with the project's own build script. A few kilobytes: held in memory. A
 * failure is not kept: the next call tries again.
 */
export function pageAssetsLoader(page: PageName): () => Promise<PageAssets> {
  let loading: Promise<PageAssets> | undefined;
  return () => {
    if (loading) return loading;
    const started = (async () => {
      const root = projectRoot();
      const built = join(root, "dist", page);
      if (existsSync(join(built, "manifest.json"))) return read(built);
      return inTurn(async () => {
        const out = mkdtempSync(join(tmpdir(), `${page}-page-`));
        try {
          const { buildPageAlone } = (await import(
            pathToFileURL(join(root, "scripts", "build.mjs")).href
          )) as typeof import("../../scripts/build.mjs");
          await buildPageAlone(root, page, out);
          return read(out);
        } finally {
          rmSync(out, { recursive: true, force: true });
        }
      });
    })();
    loading = started;
    started.catch(() => {
      if (loading === started) loading = undefined;
    });
    return started;
  };
}

/**
 * Sends one of a page's built files: named by their content's hash, so a browser keeps it for
 * good (a new build has new names).
 */
export function sendAsset(
  res: ServerResponse,
  file: { body: Buffer; type: string },
  headers: Readonly<Record<string, string>>,
): void {
  res
    .writeHead(200, {
      ...headers,
      "content-type": file.type,
      "cache-control": "public, max-age=31536000, immutable",
    })
    .end(file.body);
}
