// `npm start` (and `npm run register`, `npm run simulator`, `npm run migrate-store`): runs the
// compiled bot from dist/, building it first when it is missing or older than the sources, so
// `npm install && npm start` works from a fresh clone. A production install
// (`npm prune --omit=dev`) has no esbuild: it runs the dist/ it was built with.
import { existsSync, readdirSync, statSync } from "node:fs";
import module from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const root = join(import.meta.dirname, "..");
const entry = process.argv[2] ?? "main";
const stamp = join(root, "dist", ".build-stamp");

function newestMtime(path) {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs;
  for (const name of readdirSync(path)) newest = Math.max(newest, newestMtime(join(path, name)));
  return newest;
}

const built = existsSync(stamp) ? statSync(stamp).mtimeMs : undefined;
const stale =
  built === undefined ||
  ["src", "commands", "package.json", "tsconfig.json"].some(
    (path) => newestMtime(join(root, path)) > built,
  );
if (stale) {
  let buildDist;
  try {
    ({ buildDist } = await import("./build.mjs"));
  } catch (error) {
    // No esbuild: a production install. Run what was built, or say plainly why we cannot.
    if (error?.code !== "ERR_MODULE_NOT_FOUND") throw error;
  }
  if (buildDist) await buildDist(root);
  else if (built === undefined) {
    process.stderr.write(
      "dist/ is missing and esbuild is not installed: run `npm ci && npm run build` first.\n",
    );
    process.exit(1);
  } else {
    process.stderr.write(
      "dist/ is older than the sources and esbuild is not installed: running dist/ as built.\n",
    );
  }
}
// Node 22.1 and later keep V8's compiled code on disk, so the next start skips compiling dist/
// (Node 20, which the bot also supports, has no such cache: nothing changes there).
module.enableCompileCache?.();
process.argv.splice(2, 1);
await import(pathToFileURL(join(root, "dist", `${entry}.js`)).href);
