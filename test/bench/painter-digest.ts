import { fork } from "node:child_process";
import { createHash } from "node:crypto";
import { join } from "node:path";

/**
 * The same 240 chart requests (owner counts of 30 and 365 days, audience shares, rankings, over
 * values from 0.37 to a billion) sent to a checkout's compiled painter (dist/chart-process.js),
 * their PNGs hashed into one digest: equal digests are byte-identical pictures. The bot's own
 * pictures in the chart-load run are not compared for this, as what it is asked for follows its
 * clock and its caches; these requests are the same for every checkout.
 */
export async function painterDigest(dir: string): Promise<string> {
  const child = fork(join(dir, "dist", "chart-process.js"), [], {
    serialization: "advanced",
    env: {},
    stdio: ["ignore", "ignore", "inherit", "ipc"],
  });
  let id = 0;
  const draw = (kind: string, args: unknown[]) =>
    new Promise<Uint8Array>((resolve, reject) => {
      const mine = ++id;
      child.once("message", (response: { id: number; png?: Uint8Array; error?: string }) =>
        response.png && response.id === mine
          ? resolve(response.png)
          : reject(new Error(response.error ?? "out of order")),
      );
      child.send({ kind, args, id: mine });
    });
  const all = createHash("sha256");
  try {
    for (let k = 0; k < 80; k++) {
      const scale = [1, 7, 130, 2500, 0.37, 1e6][k % 6] ?? 1;
      const points = Array.from({ length: k % 2 ? 365 : 30 }, (_, d) => ({
        timestamp: new Date(Date.UTC(2025, 0, 1) + d * 86_400_000).toISOString(),
        count: String(Math.round(scale * (1000 + ((d * 7919 + k * 31) % 500)))),
      }));
      const pictures = [
        await draw("owners", [`Collection ${k}, owners`, points]),
        await draw("audience", [
          `Collection ${k}, audience`,
          [
            { label: "Whale", share: (k * 3.7) % 100, change: "+3" },
            { label: "Newbie", share: 40.25, change: "-1" },
          ],
        ]),
        await draw("ranking", [
          `Top ${k}`,
          "Volume (ETH)",
          [
            { label: "A", value: scale * 12.345 },
            { label: "B", value: scale * 0.5 },
          ],
        ]),
      ];
      for (const png of pictures) all.update(createHash("sha256").update(png).digest());
    }
  } finally {
    child.kill();
  }
  return all.digest("hex").slice(0, 16);
}
