/**
 * The layering the design draws (arrows point down only): commands -> core -> api; the core and
 * the commands never import the renderers, the store's implementations, the adapters, a platform
 * library or the canvas; each platform library and the database driver has one home. Imports are
 * read with TypeScript's own pre-parser, so type-only, multi-line, re-exported and dynamic imports
 * all count.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, posix } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const ROOT = join(dirname(new URL(import.meta.url).pathname), "..");

/** A module an import names: a path from the project root for relative ones, else the package. */
function importsOf(file: string, text: string): string[] {
  const { importedFiles } = ts.preProcessFile(text, true, true);
  return importedFiles.map(({ fileName }) =>
    fileName.startsWith(".")
      ? posix.normalize(posix.join(posix.dirname(file), fileName))
      : fileName,
  );
}

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
    const path = posix.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...sourceFiles(path));
    else if (entry.name.endsWith(".ts")) out.push(path);
  }
  return out;
}

/** The package an import names ("@grammyjs/runner", "discord-api-types/v10" -> its package). */
function packageOf(target: string): string | undefined {
  if (target.startsWith("src/") || target.startsWith("commands/") || target.startsWith("node:"))
    return undefined;
  const parts = target.split("/");
  return target.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0];
}

/** Packages that draw or talk to a platform or a database: none belongs to the core. */
const PLATFORM_PACKAGES = [
  "discord.js",
  "discord-api-types",
  "@discordjs/builders",
  "@discordjs/formatters",
  "@discordjs/rest",
  "grammy",
  "@grammyjs/auto-retry",
  "@grammyjs/runner",
  "@grammyjs/transformer-throttler",
  "@napi-rs/canvas",
  "chart.js",
  "better-sqlite3",
];

/** Where the SQLite driver may be imported: its own folder once the store is split, else the store. */
const SQLITE_HOME = existsSync(join(ROOT, "src/store/sqlite")) ? "src/store/sqlite/" : "src/store/";

/** Each package that only one folder may import, with that folder. */
const HOMES: Record<string, string> = {
  "discord.js": "src/adapters/discord/",
  grammy: "src/adapters/telegram/",
  "@grammyjs/auto-retry": "src/adapters/telegram/",
  "@grammyjs/runner": "src/adapters/telegram/",
  "@grammyjs/transformer-throttler": "src/adapters/telegram/",
  "better-sqlite3": SQLITE_HOME,
  pg: "src/store/postgres/",
};

/** What a file of the core or a command must not import. */
function layerViolation(file: string, target: string): string | undefined {
  if (!file.startsWith("src/core/") && !file.startsWith("commands/")) return undefined;
  if (target.startsWith("src/render/")) return "the renderers";
  if (target.startsWith("src/adapters/")) return "an adapter";
  // The interfaces (src/store/types.ts) are the core's to use; implementations are not.
  if (target.startsWith("src/store/") && target !== "src/store/types.ts")
    return "a store implementation";
  const pkg = packageOf(target);
  if (pkg && PLATFORM_PACKAGES.includes(pkg)) return `a platform library (${pkg})`;
  return undefined;
}

/**
 * Commands stand alone: what two commands share lives in commands/shared/. Only the loader
 * (commands/index.ts) imports command files.
 */
function commandViolation(file: string, target: string): string | undefined {
  if (!file.startsWith("commands/") || file === "commands/index.ts") return undefined;
  if (target.startsWith("commands/") && !target.startsWith("commands/shared/"))
    return "another command (share through commands/shared/)";
  return undefined;
}

/**
 * Sending to a chat outside an answer is the outbound module's (src/outbound): no adapter and no
 * file of digests or watches reaches into the alerts feature for it (or for anything else).
 */
function outboundViolation(file: string, target: string): string | undefined {
  const sender =
    file.startsWith("src/adapters/") ||
    file.startsWith("src/digests/") ||
    file.startsWith("src/watches/");
  return sender && target.startsWith("src/alerts/")
    ? "the alerts feature (what they share is in src/outbound)"
    : undefined;
}

/** The features (src/features.ts lists them): each a folder on the kernel. */
const FEATURES = ["alerts", "digests", "watches", "gates", "verify", "reports", "insights"];

/**
 * The kernel's folders (issue 35): config, logs, clock, the data clients and cache, limits, the
 * HTTP host, the command runtime, leases and jobs, outbound, the adapters and the renderers. They
 * import no feature: a feature reaches the commands through CommandServices, which it declares
 * itself, and the platforms through the adapters' contract. The store holds the kernel's own
 * stores; a feature's store lives in the feature's folder, over the store's query layer.
 */
const KERNEL = [
  "src/kernel/",
  "src/store/",
  "src/core/",
  "src/jobs/",
  "src/outbound/",
  "src/http/",
  "src/ops/",
  "src/api/",
  "src/cache/",
  "src/adapters/",
  "src/render/",
];

const featureOf = (path: string) => FEATURES.find((name) => path.startsWith(`src/${name}/`));

function jobsViolation(file: string, target: string): string | undefined {
  if (!KERNEL.some((folder) => file.startsWith(folder))) return undefined;
  const feature = featureOf(target);
  return feature ? `a feature (${feature}) from the kernel` : undefined;
}

/**
 * What one feature may import of another: its declared interfaces, each with why. Everything
 * else of another feature is out of reach (services go through CommandServices and KernelServices).
 */
const DECLARED_INTERFACES: Record<string, string> = {
  "src/reports/buttons.ts": "the Spam / Not spam buttons any message may carry (alerts' posts)",
};

function featureViolation(file: string, target: string): string | undefined {
  const own = featureOf(file);
  const other = featureOf(target);
  if (!own || !other || own === other || target in DECLARED_INTERFACES) return undefined;
  return `another feature (${other}) from ${own}: only its declared interfaces`;
}

function homeViolation(file: string, target: string): string | undefined {
  const pkg = packageOf(target);
  const home = pkg === undefined ? undefined : HOMES[pkg];
  return home && !file.startsWith(home) ? `${pkg} outside ${home}` : undefined;
}

function violations(files: Record<string, string>): string[] {
  const found: string[] = [];
  for (const [file, text] of Object.entries(files)) {
    for (const target of importsOf(file, text)) {
      for (const why of [
        layerViolation(file, target),
        commandViolation(file, target),
        homeViolation(file, target),
        jobsViolation(file, target),
        featureViolation(file, target),
      ]) {
        if (why) found.push(`${file} imports ${target}: ${why}`);
      }
    }
  }
  return found;
}

const project = Object.fromEntries(
  [...sourceFiles("src"), ...sourceFiles("commands")].map((file) => [
    file,
    readFileSync(join(ROOT, file), "utf8"),
  ]),
);

describe("layers", () => {
  it("no adapter and no file of digests or watches imports the alerts feature: sending is the outbound module's", () => {
    const senders = Object.keys(project).filter((file) =>
      /^src\/(adapters|digests|watches)\//.test(file),
    );
    expect(senders.length).toBeGreaterThan(10);
    expect(
      senders.flatMap((file) =>
        importsOf(file, project[file] as string)
          .filter((target) => outboundViolation(file, target))
          .map((target) => `${file} imports ${target}`),
      ),
    ).toEqual([]);
  });

  it("the core and the commands import no renderer, store implementation, adapter or platform library; no command imports another; each platform library stays home; the job kit imports no feature", () => {
    expect(
      Object.keys(project).filter((file) => file.startsWith("src/core/")).length,
    ).toBeGreaterThan(10);
    expect(
      Object.keys(project).filter((file) => file.startsWith("commands/")).length,
    ).toBeGreaterThan(10);
    expect(
      Object.keys(project).filter((file) => file.startsWith("src/jobs/")).length,
    ).toBeGreaterThan(3);
    expect(violations(project)).toEqual([]);
  });

  it("catches every form of import: type-only, multi-line, re-export, dynamic, side effect", () => {
    const found = violations({
      "src/core/a.ts": 'import type { ChartCache } from "../render/charts.ts";',
      "src/core/b.ts": 'import {\n  x,\n  y,\n} from "../store/db.ts";',
      "src/core/c.ts": 'export { z } from "../adapters/discord/index.ts";',
      "src/core/d.ts": 'async function f() { return import("@napi-rs/canvas"); }',
      "commands/e.ts": 'import "discord-api-types/v10";',
      "src/alerts/f.ts": 'import { Bot } from "grammy";',
      "src/render/g.ts": 'import { Client } from "discord.js";',
      "src/api/h.ts": 'import Database from "better-sqlite3";',
      "commands/i.ts": 'import { TOP_OPTIONS } from "./top.ts";',
      "commands/shared/j.ts": 'import { opt } from "../k.ts";',
      "src/jobs/l.ts": 'import type { Alert } from "../alerts/types.ts";',
      "src/jobs/m.ts": 'export { x } from "../verify/service.ts";',
      "src/jobs/fine.ts":
        'import type { Logger } from "../log.ts";\nimport { z } from "./loop.ts";',
      "src/core/fine.ts": 'import type { Reply } from "./reply.ts";\nimport { z } from "zod";',
      "commands/fine.ts": 'import { METRICS } from "./shared/choices.ts";',
      "commands/index.ts": 'import top from "./top.ts";',
      "src/adapters/discord/fine.ts": 'import { Client } from "discord.js";',
      "src/adapters/telegram/l.ts": 'import type { SendFailure } from "../../alerts/delivery.ts";',
      "src/digests/m.ts": 'import { sendKey } from "../alerts/delivery.ts";',
      "src/watches/n.ts": 'export type { AlertSender } from "../alerts/delivery.ts";',
      "src/adapters/fine.ts": 'import type { ChatSender } from "../outbound/types.ts";',
      "src/digests/fine.ts": 'import { sendKey } from "../outbound/key.ts";',
      "src/gates/o.ts": 'import { behaviorNamed } from "../alerts/rules.ts";',
      "src/gates/fine.ts": 'import { reportButton } from "../reports/buttons.ts";',
      "src/kernel/p.ts": 'import type { GateService } from "../gates/service.ts";',
      "src/http/q.ts": 'import type { PollerHealth } from "../alerts/poller.ts";',
    });
    expect(found.map((line) => line.split(" imports ")[0])).toEqual([
      "src/core/a.ts",
      "src/core/b.ts",
      "src/core/c.ts",
      "src/core/d.ts",
      "commands/e.ts",
      "src/alerts/f.ts",
      "src/render/g.ts",
      "src/api/h.ts",
      "commands/i.ts",
      "commands/shared/j.ts",
      "src/jobs/l.ts",
      "src/jobs/m.ts",
      "src/adapters/telegram/l.ts",
      "src/digests/m.ts",
      "src/watches/n.ts",
      "src/gates/o.ts",
      "src/kernel/p.ts",
      "src/http/q.ts",
    ]);
  });

  it("a feature is imported, outside its folder, commands/ and the tests, by at most 2 files (issue 35)", () => {
    const importers = (feature: string) =>
      Object.keys(project).filter(
        (file) =>
          file.startsWith("src/") &&
          !file.startsWith(`src/${feature}/`) &&
          importsOf(file, project[file] as string).some((target) =>
            target.startsWith(`src/${feature}/`),
          ),
      );
    const counted = Object.fromEntries(FEATURES.map((feature) => [feature, importers(feature)]));
    // The list of features names each; what else imports one is said here.
    expect(counted.alerts).toContain("src/features.ts");
    expect(
      Object.entries(counted).filter(([, files]) => files.length > 2),
      JSON.stringify(counted),
    ).toEqual([]);
  });

  it("no import cycles, type imports included", () => {
    expect(cycles(project)).toEqual([]);
    // The finder finds one: a circle through three files, one import of it type-only.
    expect(
      cycles({
        "src/a.ts": 'import { b } from "./b.ts";',
        "src/b.ts": 'import type { C } from "./c/c.ts";',
        "src/c/c.ts": 'export { a } from "../a.ts";',
        "src/d.ts": 'import { a } from "./a.ts";',
      }),
    ).toEqual([["src/a.ts", "src/b.ts", "src/c/c.ts"]]);
  });

  it("no source file over 500 lines, but those listed, each no longer than it is now", () => {
    const over = Object.entries(project)
      .map(([file, text]) => [file, text.split("\n").length - 1] as const)
      .filter(([, lines]) => lines > MAX_LINES);
    expect(
      over.filter(([file, lines]) => lines > (STILL_LONG[file] ?? MAX_LINES)).map(([f]) => f),
    ).toEqual([]);
    // A listed file that is now short enough leaves the list.
    expect(Object.keys(STILL_LONG).filter((file) => !over.some(([f]) => f === file))).toEqual([]);
  });
});

/** Every circle of imports (a strongly connected component of two files or more), sorted. */
function cycles(files: Record<string, string>): string[][] {
  const graph = new Map<string, string[]>();
  for (const [file, text] of Object.entries(files))
    graph.set(
      file,
      importsOf(file, text).filter((target) => target in files),
    );
  // Tarjan's algorithm.
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (file: string) => {
    index.set(file, next);
    low.set(file, next);
    next++;
    stack.push(file);
    onStack.add(file);
    for (const target of graph.get(file) ?? []) {
      if (!index.has(target)) {
        visit(target);
        low.set(file, Math.min(low.get(file) as number, low.get(target) as number));
      } else if (onStack.has(target))
        low.set(file, Math.min(low.get(file) as number, index.get(target) as number));
    }
    if (low.get(file) !== index.get(file)) return;
    const component: string[] = [];
    let member: string | undefined;
    do {
      member = stack.pop() as string;
      onStack.delete(member);
      component.push(member);
    } while (member !== file);
    if (component.length > 1) found.push(component.sort());
  };
  for (const file of graph.keys()) if (!index.has(file)) visit(file);
  return found;
}

const MAX_LINES = 500;

/**
 * Source files still over MAX_LINES (issue 35), each at most as long as it is now: the list only
 * shrinks. Tests are not counted.
 */
const STILL_LONG: Record<string, number> = {};
