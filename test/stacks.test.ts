/**
 * Issue 28: the compiled bot runs without `--enable-source-maps`; a logged error's stack is still
 * pointed at the TypeScript sources, its map read only then (src/stacks.ts).
 */

import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { pathToFileURL } from "node:url";
import { build } from "esbuild";
import { afterAll, describe, expect, it } from "vitest";
import { createLogger } from "../src/log.ts";
import { mapStack } from "../src/stacks.ts";

const dir = mkdtempSync(join(tmpdir(), "stacks-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The stack of an error thrown on line 8 of a TypeScript module compiled as the bot is. */
async function compiledStack(withMap: boolean): Promise<string> {
  const name = withMap ? "thrower" : "bare";
  writeFileSync(
    join(dir, `${name}.ts`),
    [
      "// A module compiled as dist/ is: bundled, minified whitespace, a map beside it.",
      "interface Shape {",
      "  size: number;",
      "}",
      "const shapes: Shape[] = [];",
      "export function fail(): void {",
      "  const total = shapes.reduce((sum, shape) => sum + shape.size, 0);",
      '  throw new Error("no shapes (total " + total + ")");',
      "}",
      "",
    ].join("\n"),
  );
  await build({
    entryPoints: [join(dir, `${name}.ts`)],
    outfile: join(dir, "out", `${name}.js`),
    bundle: true,
    format: "esm",
    platform: "node",
    sourcemap: withMap,
    sourcesContent: false,
    minifyWhitespace: true,
    logLevel: "silent",
  });
  // Run by plain Node, as the compiled bot is (the test runner would map it itself).
  const script = `import { fail } from ${JSON.stringify(pathToFileURL(join(dir, "out", `${name}.js`)).href)};
try { fail(); } catch (error) { process.stdout.write(error.stack); }`;
  return execFileSync(process.execPath, ["--input-type=module", "-e", script], {
    encoding: "utf8",
  });
}

describe("stack traces of compiled code", () => {
  it("point at the source file, line and column when a map is beside the file", async () => {
    const stack = await compiledStack(true);
    // Unmapped, the frame is the compiled file's line 1.
    expect(stack).toMatch(/out\/thrower\.js:1:\d+/);
    const mapped = mapStack(stack);
    expect(mapped).toContain(`${join(dir, "thrower.ts")}:8:9`);
    expect(mapped).not.toMatch(/out\/thrower\.js/);
    // Node's own frames and the test's sources are left as they were.
    const others = stack.split("\n").filter((line) => !line.includes("out/thrower.js"));
    for (const line of others) expect(mapped).toContain(line);
  });

  it("leave a file without a map as it is", async () => {
    const stack = await compiledStack(false);
    expect(mapStack(stack)).toBe(stack);
  });

  it("are mapped in the logs", async () => {
    const error = Object.assign(new Error("no shapes (total 0)"), {
      stack: await compiledStack(true),
    });
    let written = "";
    const destination = new Writable({
      write(chunk, _encoding, done) {
        written += chunk;
        done();
      },
    });
    const logger = createLogger({ level: "info", destination });
    logger.error({ err: error }, "it failed");
    const line = JSON.parse(written.trim()) as { err: { stack: string; message: string } };
    expect(line.err.message).toBe("no shapes (total 0)");
    expect(line.err.stack).toContain(`${join(dir, "thrower.ts")}:8:9`);
  });
});
