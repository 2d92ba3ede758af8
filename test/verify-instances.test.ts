/**
 * Two instances of the bot on one PostgreSQL and one Redis (issue 27): any instance serves the
 * page and checks any nonce. A link made on one is opened, challenged and proved on the other,
 * and the limits are one allowance between them.
 */
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterEach, describe, expect, it } from "vitest";
import { sharedLimiters } from "../src/cache/limits.ts";
import { RedisLink } from "../src/cache/redis.ts";
import { parseChains } from "../src/chains.ts";
import { silentLogger } from "../src/log.ts";
import { openPostgresStore } from "../src/store/postgres/index.ts";
import { createVerifyService } from "../src/verify/service.ts";
import type { VerifiedNotice } from "../src/verify/types.ts";
import { deleteKeys, testPrefix } from "./redis-helpers.ts";
import { POSTGRES_URL, postgresAvailable, REDIS_URL, redisAvailable } from "./services.ts";
import { dropSchema, freshSchemaName } from "./store/backends.ts";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const ALICE = { platform: "telegram", userId: "alice", chatId: "7" } as const;

describe.runIf((await postgresAvailable()) && (await redisAvailable()))(
  "verify: two instances on one PostgreSQL and one Redis",
  () => {
    async function instances() {
      const schema = freshSchemaName();
      const prefix = testPrefix("verify");
      cleanups.push(
        () => dropSchema(schema),
        () => deleteKeys(prefix),
      );
      const notices: [string, VerifiedNotice][] = [];
      const one = async (name: string) => {
        const store = await openPostgresStore({ url: POSTGRES_URL, schema, max: 2 });
        const link = new RedisLink({ url: REDIS_URL, prefix, logger: silentLogger() });
        cleanups.push(
          () => store.close(),
          () => link.close(),
        );
        expect(await link.ready(2_000)).toBe(true);
        const service = createVerifyService({
          store,
          chains: parseChains("ethereum", undefined),
          baseUrl: () => "https://bot.example",
          limiters: sharedLimiters(link),
          logger: silentLogger(),
          notify: async (notice) => {
            notices.push([name, notice]);
          },
        });
        return { store, service };
      };
      // One after the other: both migrate the same schema.
      const a = await one("a");
      const b = await one("b");
      return { a, b, notices };
    }

    it("a link made on one instance is opened, challenged and proved on the other", async () => {
      const { a, b, notices } = await instances();
      const account = privateKeyToAccount(generatePrivateKey());
      const made = await a.service.createLink(ALICE, "ethereum");
      if (!made.ok) throw new Error(made.refusal.message);
      const token = made.link.url.slice(made.link.url.lastIndexOf("/") + 1);
      expect((await b.service.open(token)).ok).toBe(true);
      const asked = await b.service.challenge(token, account.address);
      if (!asked.ok) throw new Error(asked.refusal.message);
      const { message } = asked.challenge;
      const signature = await account.signMessage({ message });
      expect(await a.service.prove(token, message, signature)).toEqual({
        ok: true,
        address: account.address,
        chain: "ethereum",
      });
      // Used on one, used for both.
      const again = await b.service.prove(token, message, signature);
      expect(again.ok ? "ok" : again.refusal.code).toBe("used");
      expect((await b.store.wallets.reportWallet("telegram", "alice"))?.address).toBe(
        account.address.toLowerCase(),
      );
      await expect.poll(() => notices.map(([name]) => name)).toEqual(["a"]);
    });

    it("a person's links are one allowance across the instances", async () => {
      const { a, b } = await instances();
      const codes: string[] = [];
      for (const service of [a, a, a, b, b, b, a].map((one) => one.service)) {
        const made = await service.createLink(ALICE, "ethereum");
        codes.push(made.ok ? "ok" : made.refusal.code);
      }
      expect(codes).toEqual(["ok", "ok", "ok", "ok", "ok", "rate_limited", "rate_limited"]);
    });
  },
);
