import { mkdir, rm, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import type { SavedFile } from "../../render/console.ts";

/** Longest name part kept before the time and extension: short enough for any file system. */
const MAX_STEM = 80;
/** A date at the end of a name, 2026-11-28 (digits alone may be a token id: they stay). */
const TRAILING_DATE = /-\d{4}-\d{2}-\d{2}$/;
/** Files of one name in one second before giving up (two a second is already a lot by hand). */
const MAX_SAME_SECOND = 1000;

/**
 * A file name safe to create in a folder, from a name that may come from upstream data: only
 * ASCII letters, digits, '.', '-' and '_' (no path separator, NUL, control or bidi character), no
 * "..", not hidden, bounded in length, its extension kept.
 */
export function safeFileName(name: string): string {
  const cleaned = name
    .replace(/[^A-Za-z0-9._-]+/g, "_")
    .replace(/\.{2,}/g, ".")
    .replace(/^[._-]+/, "");
  const dot = cleaned.lastIndexOf(".");
  const extension =
    dot > 0 && /^\.[A-Za-z0-9]{1,10}$/.test(cleaned.slice(dot)) ? cleaned.slice(dot) : "";
  const stem = (extension ? cleaned.slice(0, dot) : cleaned)
    .slice(0, MAX_STEM)
    .replace(/[._-]+$/, "");
  return `${stem || "file"}${extension}`;
}

const codeOf = (error: unknown): string | undefined => {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
};

/** Why a file could not be saved under `dir`, in one line a person can act on. */
export function saveProblem(error: unknown, dir: string): string {
  const code = codeOf(error);
  if (code === "ENOSPC" || code === "EDQUOT") return `the disk is full (no room under ${dir})`;
  if (code === "EACCES" || code === "EPERM" || code === "EROFS")
    return `${dir} is not writable (${code})`;
  if (code === "ENOTDIR" || code === "EEXIST")
    return `${dir} cannot be made a folder: something else has that name (${code})`;
  return `${dir}: ${code ?? (error instanceof Error ? error.message : String(error))}`;
}

/**
 * The folder where the console chat keeps the files and pictures it is sent (DATA_DIR/exports):
 * made when the first file comes, kept after the run, and never overwritten: each file gets the
 * time it was saved in its name (in place of a date the name ends with: one timestamp a name),
 * and a counter when that name is taken (exclusive create, so two saves at once cannot pick the
 * same name).
 */
export class ExportFolder {
  readonly dir: string;

  constructor(
    dir: string,
    private readonly now: () => Date = () => new Date(),
  ) {
    this.dir = resolve(dir);
  }

  async save(name: string, data: Uint8Array): Promise<SavedFile> {
    try {
      await mkdir(this.dir, { recursive: true });
    } catch (error) {
      return { problem: saveProblem(error, this.dir) };
    }
    const safe = safeFileName(name);
    const dot = safe.lastIndexOf(".");
    const [named, extension] = dot > 0 ? [safe.slice(0, dot), safe.slice(dot)] : [safe, ""];
    // One timestamp per name: a date the name ends with (segment-…-2026-11-28) gives way to ours.
    const stem = named.replace(TRAILING_DATE, "") || named;
    // 2026-11-25T14:30:12.345Z -> 20261125-143012 (UTC, like the bot's logs)
    const stamp = this.now().toISOString().slice(0, 19).replace(/[-:]/g, "").replace("T", "-");
    for (let n = 1; n <= MAX_SAME_SECOND; n++) {
      const path = join(this.dir, `${stem}-${stamp}${n > 1 ? `-${n}` : ""}${extension}`);
      try {
        await writeFile(path, data, { flag: "wx" });
        return { path };
      } catch (error) {
        if (codeOf(error) === "EEXIST") continue;
        // A write cut short (a full disk) leaves no half file to be mistaken for the export.
        await rm(path, { force: true }).catch(() => undefined);
        return { problem: saveProblem(error, this.dir) };
      }
    }
    return {
      problem: `${this.dir} already has ${MAX_SAME_SECOND} files named ${safe} this second`,
    };
  }
}
