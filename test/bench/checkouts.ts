import { execFileSync } from "node:child_process";
import { resolve } from "node:path";
import { ROOT } from "../compiled.ts";

/** A checkout of the bot whose dist/ a bench runs: this one, or BENCH_COMPARE_DIR's. */
export interface Checkout {
  label: string;
  dir: string;
}

function revisionOf(dir: string): string {
  try {
    return execFileSync("git", ["-C", dir, "rev-parse", "--short", "HEAD"], {
      encoding: "utf8",
    }).trim();
  } catch {
    return "no git";
  }
}

/**
 * This checkout and, with BENCH_COMPARE_DIR (another checkout with its own node_modules, e.g. a
 * `git worktree` of the main branch before a change), that one, each labelled with its revision.
 */
export function checkoutsToCompare(): Checkout[] {
  const checkouts: Checkout[] = [{ label: `this checkout (${revisionOf(ROOT)})`, dir: ROOT }];
  const other = process.env.BENCH_COMPARE_DIR;
  if (other) {
    const dir = resolve(other);
    checkouts.push({ label: `BENCH_COMPARE_DIR (${revisionOf(dir)})`, dir });
  }
  return checkouts;
}

/** dist/ of a checkout, built in a child (as `npm run build`), so that it runs as built. */
export function buildCheckout(dir: string): void {
  execFileSync(process.execPath, ["scripts/build.mjs"], { cwd: dir, stdio: "inherit" });
}

/** A figure of each checkout, side by side in one cell. */
export function sideBySide(checkouts: readonly Checkout[], figure: (checkout: Checkout) => string) {
  return checkouts.map((checkout) => `${checkout.label}: ${figure(checkout)}`).join(" · ");
}
