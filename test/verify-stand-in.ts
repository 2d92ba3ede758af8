/**
 * A stand-in of VerifyService for the verification page's tests (test/verify-page.test.ts,
 * test/verify-phone.test.ts), behind the page's real routes on a real HttpHost: just enough of
 * the service to drive the page, a SIWE message checked with viem on return. test/verify-bot.test.ts
 * runs the real bot.
 */
import { randomBytes } from "node:crypto";
import { verifyMessage } from "viem";
import { createSiweMessage, generateSiweNonce, parseSiweMessage } from "viem/siwe";
import { HttpHost } from "../src/http/host.ts";
import { silentLogger } from "../src/log.ts";
import { verifyRoutes } from "../src/verify/routes.ts";
import type {
  VerifyPageState,
  VerifyRefusal,
  VerifyResult,
  VerifyService,
} from "../src/verify/types.ts";
import { freePort } from "./helpers.ts";

export interface StandInLink {
  expiresAt: number;
  usedAt?: number;
  nonce?: string;
  rateLimited?: boolean;
  /** What the page is told of where /verify was asked, and by which bot. */
  botName?: string;
  place?: VerifyPageState["place"];
  chainsServed?: string[];
}

/** Where the stand-in's links were asked unless a link says otherwise. */
export const STAND_IN_PLACE: VerifyPageState["place"] = {
  platform: "discord",
  name: "Bored Apes Club",
};
export const STAND_IN_BOT = "Audience Bot";
export const STAND_IN_CHAINS = ["Ethereum", "Base", "Polygon"];

export function standInService(origin: () => string) {
  const links = new Map<string, StandInLink>();
  const proved: { address: string; token: string }[] = [];
  const calls: string[] = [];
  const refusal = (code: VerifyRefusal["code"], message: string) => ({
    ok: false as const,
    refusal: { code, message },
  });
  const check = (token: string): VerifyResult<{ link: StandInLink }> => {
    const link = links.get(token);
    if (!link) return refusal("unknown_link", "This link is not one the bot made.");
    if (link.usedAt !== undefined)
      return refusal("used", "This link was used already. Ask the bot for a new one with /verify.");
    if (link.expiresAt <= Date.now())
      return refusal(
        "expired",
        "This link has expired: links work for 10 minutes. Ask the bot for a new one with /verify.",
      );
    return { ok: true, link };
  };
  const service: VerifyService = {
    async createLink() {
      throw new Error("not used here");
    },
    async prune() {
      throw new Error("not used here");
    },
    async holdings() {
      throw new Error("not used here");
    },
    async open(token) {
      calls.push("open");
      const found = check(token);
      if (!found.ok) return found;
      return {
        ok: true,
        state: {
          chain: "ethereum",
          chainName: "Ethereum",
          chainId: 1,
          expiresAt: found.link.expiresAt,
          botName: found.link.botName ?? STAND_IN_BOT,
          place: found.link.place ?? STAND_IN_PLACE,
          chainsServed: found.link.chainsServed ?? STAND_IN_CHAINS,
        },
      };
    },
    async challenge(token, address) {
      calls.push("challenge");
      const found = check(token);
      if (!found.ok) return found;
      if (found.link.rateLimited)
        return refusal(
          "rate_limited",
          "Too many tries with this link: wait a minute, then press Connect wallet again.",
        );
      found.link.nonce = generateSiweNonce();
      const url = new URL(origin());
      const message = createSiweMessage({
        domain: url.host,
        uri: url.origin,
        address: address as `0x${string}`,
        version: "1",
        chainId: 1,
        nonce: found.link.nonce,
        statement: "Prove to the bot that this wallet is yours. This costs nothing.",
        issuedAt: new Date(),
        expirationTime: new Date(found.link.expiresAt),
      });
      return { ok: true, challenge: { message } };
    },
    async prove(token, message, signature) {
      calls.push("prove");
      const found = check(token);
      if (!found.ok) return found;
      const fields = parseSiweMessage(message);
      if (!fields.address || fields.nonce !== found.link.nonce)
        return refusal("stale_nonce", "This message is not the one the bot asked you to sign.");
      const valid = await verifyMessage({
        address: fields.address,
        message,
        signature: signature as `0x${string}`,
      });
      if (!valid)
        return refusal(
          "bad_signature",
          "The signature was not made by this wallet's key, so nothing was proved.",
        );
      found.link.usedAt = Date.now();
      proved.push({ address: fields.address, token });
      return { ok: true, address: fields.address, chain: "ethereum" };
    },
  };
  const link = (options: Partial<StandInLink> = {}) => {
    const token = randomBytes(32).toString("base64url");
    links.set(token, { expiresAt: Date.now() + 600_000, ...options });
    return token;
  };
  return { service, link, links, proved, calls };
}

export type StandIn = ReturnType<typeof standInService>;

/** The page's routes over a stand-in, on a free loopback port: `base` is http://127.0.0.1:<port>. */
export async function startStandInHost(): Promise<{
  host: HttpHost;
  base: string;
  standIn: StandIn;
}> {
  let base = "";
  const standIn = standInService(() => base);
  const host = new HttpHost(silentLogger());
  for (const route of verifyRoutes({ service: standIn.service, logger: silentLogger() }))
    host.mount(route);
  const port = await freePort();
  await host.listen(port, "127.0.0.1");
  base = `http://127.0.0.1:${port}`;
  return { host, base, standIn };
}
