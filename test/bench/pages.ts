import { closeSync, openSync, readFileSync, readSync } from "node:fs";

/**
 * The physical pages a set of processes maps, each counted once, from /proc/<pid>/pagemap (page
 * frame numbers are readable by root only; without them this answers undefined). It is what those
 * processes cost a host on which nothing else maps their pages: RSS summed counts a page they share
 * (the node binary's) once per process, and PSS divides it with every other process of the machine
 * that maps it too (on a shared machine, every other node process), so it is lower than on a host
 * of their own. File pages count as the processes map them (the page cache keeps them anyway).
 */
export function uniquePages(pids: readonly number[]): number | undefined {
  const frames = new Set<number>();
  for (const pid of pids) {
    let smaps: string;
    let fd: number;
    try {
      smaps = readFileSync(`/proc/${pid}/smaps`, "utf8");
      fd = openSync(`/proc/${pid}/pagemap`, "r");
    } catch {
      continue; // gone
    }
    try {
      // Only the mappings with resident pages: V8's reservations are gigabytes of nothing.
      for (const [, start, end, rss] of smaps.matchAll(
        /^([0-9a-f]+)-([0-9a-f]+) [^\n]*\n(?:(?![0-9a-f]+-)[^\n]*\n)*?Rss:\s+(\d+) kB/gm,
      )) {
        if (rss === "0") continue;
        const from = Number.parseInt(start as string, 16) / 4096;
        const to = Number.parseInt(end as string, 16) / 4096;
        const buffer = Buffer.alloc((to - from) * 8);
        const read = readSync(fd, buffer, 0, buffer.length, from * 8);
        for (let offset = 0; offset + 8 <= read; offset += 8) {
          const high = buffer.readUInt32LE(offset + 4);
          if (!(high & 0x80000000)) continue; // not present
          const frame = (high & 0x7fffff) * 2 ** 32 + buffer.readUInt32LE(offset);
          if (frame === 0) return undefined; // frame numbers hidden: not root
          frames.add(frame);
        }
      }
    } catch {
      // Gone half-way: what was read counts.
    } finally {
      closeSync(fd);
    }
  }
  return frames.size * 4096;
}
