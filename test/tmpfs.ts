import { execFileSync } from "node:child_process";
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * Whether this machine lets a test mount a small tmpfs (root, and mount allowed): a real file
 * system that fills up, for the tests of a full disk.
 */
export function canMountTmpfs(): boolean {
  const dir = mkdtempSync(join(tmpdir(), "bot-tmpfs-"));
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", dir], { stdio: "ignore" });
    execFileSync("umount", [dir]);
    return true;
  } catch {
    return false;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Mounts a tmpfs of `mib` MiB in a fresh directory; `cleanups` gets its unmount. */
export function mountSmallDisk(mib: number, cleanups: (() => unknown)[]): string {
  const dir = mkdtempSync(join(tmpdir(), "bot-tmpfs-"));
  execFileSync("mount", ["-t", "tmpfs", "-o", `size=${mib}m`, "tmpfs", dir]);
  cleanups.push(() => {
    execFileSync("umount", ["-l", dir]);
    rmSync(dir, { recursive: true, force: true });
  });
  return dir;
}

/** Fills the file system under `dir` with one file; removing the file frees the room. */
export function fillDisk(dir: string): () => void {
  const path = join(dir, "filler");
  const fd = openSync(path, "w");
  const chunk = Buffer.alloc(64 * 1024, 1);
  try {
    for (let size = chunk.length; size >= 1; ) {
      try {
        writeSync(fd, chunk, 0, size);
      } catch {
        size = Math.floor(size / 2);
      }
    }
  } finally {
    closeSync(fd);
  }
  return () => rmSync(path, { force: true });
}
