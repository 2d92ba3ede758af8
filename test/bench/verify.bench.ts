import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { hashMessage } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { parseChains } from "../../src/chains.ts";
import { silentLogger } from "../../src/log.ts";
import { openPostgresStore } from "../../src/store/postgres/index.ts";
import { openSqliteStore } from "../../src/store/sqlite/index.ts";
import type { Store } from "../../src/store/types.ts";
import { createVerifyService } from "../../src/verify/service.ts";
import { FakeChainNode } from "../fakes/chain-rpc.ts";
import { POSTGRES_URL } from "../services.ts";
import { dropSchema, freshSchemaName } from "../store/backends.ts";
import type { BenchRow } from "./report.ts";

const ROUNDS = 200;

/** Median and 95th percentile of the samples, in ms. */
function spread(samples: number[]): string {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
  return `median ${at(0.5).toFixed(2)} ms, p95 ${at(0.95).toFixed(2)} ms`;
}

/**
 * One person's whole verification, link to proof, on each store: how long the server side takes
 * (the page and the wallet's own time aside), for an EOA (checked in process) and for a contract
 * wallet (one eth_call to a chain node on loopback answering at once).
 */
export async function benchVerify(): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  const owner = privateKeyToAccount(generatePrivateKey());
  const smart = "0x3333333333333333333333333333333333333333";
  const node = await new FakeChainNode(1, smart, owner.address).start();
  const stores: [string, () => Promise<{ store: Store; close: () => Promise<void> }>][] = [
    [
      "SQLite",
      async () => {
        const dir = mkdtempSync(join(tmpdir(), "bench-verify-"));
        const store = openSqliteStore(dir);
        return {
          store,
          close: async () => {
            await store.close();
            rmSync(dir, { recursive: true, force: true });
          },
        };
      },
    ],
    [
      "PostgreSQL",
      async () => {
        const schema = freshSchemaName();
        const store = await openPostgresStore({ url: POSTGRES_URL, schema, max: 4 });
        return {
          store,
          close: async () => {
            await store.close();
            await dropSchema(schema);
          },
        };
      },
    ],
  ];
  try {
    for (const [name, open] of stores) {
      const { store, close } = await open();
      try {
        const service = createVerifyService({
          store,
          chains: parseChains(JSON.stringify([{ id: "ethereum", rpcUrl: node.url }]), undefined),
          baseUrl: () => "https://bot.example",
          // No limits here: the bench measures the work, not the allowance.
          limiters: () => ({ take: () => ({ allowed: true }) }),
          logger: silentLogger(),
        });
        for (const kind of ["EOA", "contract wallet"] as const) {
          const samples: number[] = [];
          for (let i = 0; i < ROUNDS; i++) {
            const account = privateKeyToAccount(generatePrivateKey());
            const address = kind === "EOA" ? account.address : smart;
            const started = performance.now();
            const made = await service.createLink(
              { platform: "telegram", userId: `u${i}-${kind}`, chatId: "1" },
              "ethereum",
            );
            if (!made.ok) throw new Error(made.refusal.message);
            const token = made.link.url.slice(made.link.url.lastIndexOf("/") + 1);
            await service.open(token);
            const asked = await service.challenge(token, address);
            if (!asked.ok) throw new Error(asked.refusal.message);
            const { message } = asked.challenge;
            const paused = performance.now();
            // The signing is the wallet's time, not the bot's.
            const signature =
              kind === "EOA"
                ? await account.signMessage({ message })
                : await owner.sign({ hash: hashMessage(message) });
            const resumed = performance.now();
            const proved = await service.prove(token, message, signature);
            if (!proved.ok) throw new Error(proved.refusal.message);
            samples.push(performance.now() - resumed + (paused - started));
          }
          rows.push({
            name: `${name}, ${kind}: link, open, challenge and proof (${ROUNDS} people)`,
            value: spread(samples),
          });
        }
      } finally {
        await close();
      }
    }
  } finally {
    await node.close();
  }
  return rows;
}
