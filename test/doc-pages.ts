import { readdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** The repository's root. */
export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");

/** The documentation a clone holds: README.md, then docs/*.md by name. */
export const DOC_PAGES: readonly string[] = [
  join(ROOT, "README.md"),
  ...readdirSync(join(ROOT, "docs"))
    .filter((name) => name.endsWith(".md"))
    .sort()
    .map((name) => join(ROOT, "docs", name)),
];
