import { existsSync, readFileSync } from "node:fs";
import { SourceMap } from "node:module";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { LRUCache } from "lru-cache";

/**
 * Stack traces of the compiled bot, pointed back at the TypeScript sources when they are logged.
 *
 * Node's `--enable-source-maps` parses the map of every module as it loads, whether or not an
 * error ever needs it: some 25 MB of the bot's resident memory at start (issue 28). Here a map is
 * read only when a stack with a frame of its file is logged, and forgotten a minute after its last
 * use. Frames of files without a map (Node's own, the sources under tsx) are left as they are.
 */

/** A frame's location: `(file:///…/x.js:1:2345)`, `at /…/x.js:1:2345` and the like. */
const FRAME = /(file:\/\/\/[^\s()]+?|\/[^\s():]+?)\.(m?js):(\d+):(\d+)/g;

/** Parsed maps by the compiled file's path; `null`: the file has no map. */
const maps = new LRUCache<string, { map: SourceMap | null }>({
  // A map of a bundled chunk takes a few MB once parsed: a handful, briefly.
  max: 4,
  ttl: 60_000,
  updateAgeOnGet: true,
});

function mapOf(file: string): SourceMap | null {
  const cached = maps.get(file);
  if (cached) return cached.map;
  let map: SourceMap | null = null;
  const path = `${file}.map`;
  try {
    if (existsSync(path)) map = new SourceMap(JSON.parse(readFileSync(path, "utf8")));
  } catch {
    // An unreadable or broken map: the frame stays as it is.
  }
  maps.set(file, { map });
  return map;
}

/** One frame's location in the sources, or the location as it was. */
function mapFrame(location: string, url: string, ext: string, line: string, column: string) {
  const file = url.startsWith("file://") ? fileURLToPath(`${url}.${ext}`) : `${url}.${ext}`;
  const map = mapOf(file);
  if (!map) return location;
  // findEntry takes and gives zero-based lines and columns.
  const entry = map.findEntry(Number(line) - 1, Number(column) - 1) as {
    originalSource?: string;
    originalLine?: number;
    originalColumn?: number;
  };
  if (entry.originalSource === undefined || entry.originalLine === undefined) return location;
  const source = entry.originalSource.startsWith("file://")
    ? fileURLToPath(entry.originalSource)
    : resolve(dirname(file), entry.originalSource);
  return `${source}:${entry.originalLine + 1}:${(entry.originalColumn ?? 0) + 1}`;
}

/** A stack (or any text holding one) with its compiled frames pointed at the sources. */
export function mapStack(stack: string): string {
  try {
    return stack.replace(FRAME, mapFrame);
  } catch {
    return stack;
  }
}
