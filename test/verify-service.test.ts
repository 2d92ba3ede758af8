import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { parseSiweMessage } from "viem/siwe";
import { describe, expect, it } from "vitest";
import { parseChains } from "../src/chains.ts";
import { silentLogger } from "../src/log.ts";
import { createVerifyService, LINK_TTL_MS, tokenHash } from "../src/verify/service.ts";
import type { VerifiedNotice, VerifyOrigin } from "../src/verify/types.ts";
import { postgresAvailable } from "./services.ts";
import { backends } from "./store/backends.ts";
import { useStore } from "./store/use-store.ts";

const BASE = "https://bot.example";
const ALICE: VerifyOrigin = {
  platform: "discord",
  userId: "alice",
  chatId: "c1",
  confirm: "app:tok",
};
const _BOB: VerifyOrigin = { platform: "telegram", userId: "bob", chatId: "42" };

/** The token at the end of a link's URL. */
const tokenOf = (url: string) => url.slice(url.lastIndexOf("/") + 1);

for (const backend of backends) {
  describe.runIf(backend.name === "sqlite" || (await postgresAvailable()))(
    `verify service: ${backend.name}`,
    () => {
      const fresh = useStore(backend.open);

      async function setup(chainsSetting = "ethereum,base") {
        const store = await fresh();
        let clock = Date.UTC(2026, 10, 26, 1, 0, 0);
        const notices: VerifiedNotice[] = [];
        const service = createVerifyService({
          store,
          chains: parseChains(chainsSetting, undefined),
          baseUrl: () => BASE,
          now: () => clock,
          logger: silentLogger(),
          notify: async (notice) => {
            notices.push(notice);
          },
        });
        return {
          store,
          service,
          notices,
          advance: (ms: number) => {
            clock += ms;
          },
          now: () => clock,
        };
      }

      async function linkFor(
        service: Awaited<ReturnType<typeof setup>>["service"],
        origin = ALICE,
        chain = "ethereum",
      ) {
        const made = await service.createLink(origin, chain);
        if (!made.ok) throw new Error(made.refusal.message);
        return { token: tokenOf(made.link.url), link: made.link };
      }

      async function messageFor(
        service: Awaited<ReturnType<typeof setup>>["service"],
        token: string,
        address: string,
      ) {
        const asked = await service.challenge(token, address);
        if (!asked.ok) throw new Error(asked.refusal.message);
        return asked.challenge.message;
      }

      const refusalOf = (result: { ok: boolean; refusal?: { code: string } }) =>
        result.ok ? "ok" : result.refusal?.code;

      it("proves an EOA's wallet: the link, the SIWE message, the proof kept, the chat told", async () => {
        const { store, service, notices, now } = await setup();
        const account = privateKeyToAccount(generatePrivateKey());
        const { token, link } = await linkFor(service);
        expect(link.url).toBe(`${BASE}/verify/${token}`);
        expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
        expect(link.expiresAt).toBe(now() + LINK_TTL_MS);
        const opened = await service.open(token);
        expect(opened).toEqual({
          ok: true,
          state: {
            chain: "ethereum",
            chainName: "Ethereum",
            chainId: 1,
            expiresAt: link.expiresAt,
          },
        });
        const message = await messageFor(service, token, account.address.toLowerCase());
        const parsed = parseSiweMessage(message);
        expect(parsed).toMatchObject({
          domain: "bot.example",
          uri: `${BASE}/verify`,
          chainId: 1,
          address: account.address,
          version: "1",
        });
        expect(parsed.expirationTime?.getTime()).toBe(link.expiresAt);
        expect(parsed.nonce).toMatch(/^[a-f0-9]{32}$/);
        expect(message).not.toContain(token);
        const signature = await account.signMessage({ message });
        const proved = await service.prove(token, message, signature);
        expect(proved).toEqual({ ok: true, address: account.address, chain: "ethereum" });
        const wallets = await store.wallets.list("discord", "alice");
        expect(wallets).toEqual([
          {
            address: account.address.toLowerCase(),
            chain: "ethereum",
            label: account.address,
            provedAt: now(),
            linkedAt: now(),
          },
        ]);
        expect((await store.wallets.reportWallet("discord", "alice"))?.address).toBe(
          account.address.toLowerCase(),
        );
        await expect.poll(() => notices.length).toBe(1);
        expect(notices[0]).toEqual({
          origin: ALICE,
          address: account.address,
          chain: "ethereum",
          kind: "eoa",
        });
        // Only the token's hash is stored, and the confirmation is dropped once used.
        const row = await store.verifyLinks.find(tokenHash(token));
        expect(row?.usedAt).toBe(now());
        expect(row?.confirm).toBeUndefined();
        expect(await store.verifyLinks.find(token)).toBeUndefined();
        // The same proof again: the link is used up.
        expect(refusalOf(await service.prove(token, message, signature))).toBe("used");
        expect(refusalOf(await service.open(token))).toBe("used");
      });

      it("refuses a link nobody made and an expired one, changing nothing", async () => {
        const { store, service, advance } = await setup();
        const account = privateKeyToAccount(generatePrivateKey());
        expect(refusalOf(await service.open("A".repeat(43)))).toBe("unknown_link");
        expect(refusalOf(await service.open("../../etc"))).toBe("unknown_link");
        const { token } = await linkFor(service);
        const message = await messageFor(service, token, account.address);
        const signature = await account.signMessage({ message });
        advance(LINK_TTL_MS);
        const expired = await service.prove(token, message, signature);
        expect(refusalOf(expired)).toBe("expired");
        expect(expired.ok ? "" : expired.refusal.message).toMatch(/expired.*\/verify/);
        expect(refusalOf(await service.open(token))).toBe("expired");
        expect(refusalOf(await service.challenge(token, account.address))).toBe("expired");
        expect(await store.wallets.list("discord", "alice")).toEqual([]);
      });
    },
  );
}
