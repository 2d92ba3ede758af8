import { randomFillSync } from "node:crypto";

/** Random bytes drawn 4 KiB at a time: a draw per button id or invocation id costs more than the id. */
const pool = Buffer.alloc(4096);
let used = pool.length;

/** `count` cryptographically random bytes (a copy: the pool is drawn again later). */
export function randomBytesPooled(count: number): Buffer {
  if (count > pool.length) return randomFillSync(Buffer.alloc(count));
  if (used + count > pool.length) {
    randomFillSync(pool);
    used = 0;
  }
  const bytes = Buffer.from(pool.subarray(used, used + count));
  used += count;
  return bytes;
}
