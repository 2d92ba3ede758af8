import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

/** The verification page's script and style, by their hashed names (scripts/build.mjs). */
export interface PageAssets {
  script: string;
  style: string;
  files: Map<string, { body: Buffer; type: string }>;
}

/** The project's root: the nearest folder with a package.json (from src/verify or dist/…). */
function projectRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, "package.json"))) {
    const up = dirname(dir);
    if (up === dir) throw new Error("the verification page: no package.json above the code");
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

let loading: Promise<PageAssets> | undefined;

/**
 * The built page from dist/verify; run from the sources without a build (`npm run dev`, a test),
 * it is built once into a temporary folder with the project's own build script. A few kilobytes:
 * held in memory.
 */
export function pageAssets(): Promise<PageAssets> {
  loading ??= (async () => {
    const root = projectRoot();
    const built = join(root, "dist", "verify");
    if (existsSync(join(built, "manifest.json"))) return read(built);
    const out = mkdtempSync(join(tmpdir(), "verify-page-"));
    try {
      const { buildVerifyPageAlone } = (await import(
        pathToFileURL(join(root, "scripts", "build.mjs")).href
      )) as typeof import("../../scripts/build.mjs");
      await buildVerifyPageAlone(root, out);
      return read(out);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  })();
  // A failure is not kept: the next request tries again.
  loading.catch(() => {
    loading = undefined;
  });
  return loading;
}
