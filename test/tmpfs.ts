import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
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
