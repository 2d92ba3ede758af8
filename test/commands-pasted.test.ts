/**
 * Issue 26, item 3: what people paste works wherever a wallet, a collection or an NFT is taken:
 * explorer links of each chain, marketplace profile, collection and item links, and 40 hex digits
 * without 0x. A link on another chain than the one asked, or of an unknown site, is answered
 * with what to do, and nothing is read.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fullAddress } from "../src/core/format.ts";
import { watchStoreOf } from "../src/watches/store.ts";
import { replyHelpers } from "./command-helpers.ts";
import { type RuntimeSetup, startRuntime } from "./helpers.ts";

const VITALIK = "0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045";
const BAYC = "0xBC4CA0EdA7647A8aB7C2061c2E118A18a936f13D";

let t: RuntimeSetup;
const { sent } = replyHelpers(() => t);

/** A step that must be refused before any request leaves, with its message. */
async function refused(line: string): Promise<string> {
  const { result, requests } = await sent(() => t.say(line));
  expect(requests, line).toEqual([]);
  expect(result.tone, `${line}: ${t.text(result)}`).toBe("warning");
  return t.text(result);
}

describe("one chain (ethereum)", () => {
  beforeAll(async () => {
    t = await startRuntime();
  });
  afterAll(async () => {
    await t.close();
  });

  it("the issue's inputs: an Etherscan link and bare hex for /wallet, bare hex for /audience", async () => {
    const title = `NFTs of ${fullAddress(VITALIK)}`;
    expect((await t.say(`/wallet https://etherscan.io/address/${VITALIK}`)).title).toBe(title);
    expect((await t.say(`/wallet ${VITALIK.slice(2)}`)).title).toBe(title);
    expect((await t.say(`/audience ${BAYC.slice(2)}`)).title).toBe(
      (await t.say(`/audience ${BAYC}`)).title,
    );
  });

  it("wallet links: marketplace profiles, ENS app, and in lists and /whois, /watch", async () => {
    const title = `NFTs of ${fullAddress(VITALIK)}`;
    for (const link of [
      `https://opensea.io/${VITALIK}`,
      `<https://opensea.io/${VITALIK.toLowerCase()}/collected>`,
      `https://blur.io/${VITALIK}`,
      `https://magiceden.io/u/${VITALIK}`,
      `https://rarible.com/user/${VITALIK}`,
      `https://looksrare.org/accounts/${VITALIK}`,
    ])
      expect((await t.say(`/wallet ${link}`)).title, link).toBe(title);
    expect((await t.say("/wallet https://app.ens.domains/vitalik.eth")).title).toBe(
      "NFTs of vitalik.eth",
    );
    const { result: behaviors, requests } = await sent(() =>
      t.say(`/behaviors https://etherscan.io/address/${VITALIK} ${t.sim.fixtures.wallet.slice(2)}`),
    );
    expect(behaviors.title).toBe("Behaviors of 2 wallets");
    expect(requests[0]?.body).toEqual({
      walletAddresses: [fullAddress(VITALIK), fullAddress(t.sim.fixtures.wallet)],
    });
    expect((await t.say(`/whois ${VITALIK.slice(2)}`)).table?.rows.map((row) => row[0])).toContain(
      "vitalik.eth",
    );
    const chat = { id: "pasted-wallet", kind: "group" as const };
    expect((await t.say(`/watch wallet https://opensea.io/${VITALIK}`, { chat })).tone).toBe(
      "success",
    );
    expect(await watchStoreOf(t.store).forChat("telegram", chat.id)).toMatchObject([
      { kind: "wallet", target: VITALIK.toLowerCase() },
    ]);
  });

  it("collection and item links: explorers' token and nft pages, marketplaces, bare hex", async () => {
    const audience = (await t.say(`/audience ${BAYC}`)).title;
    expect(audience).toMatch(/^Audience of /);
    for (const link of [
      `https://etherscan.io/token/${BAYC}`,
      `https://etherscan.io/address/${BAYC}#code`,
      `https://opensea.io/assets/ethereum/${BAYC}`,
      `https://opensea.io/item/ethereum/${BAYC}/1`,
      `https://magiceden.io/collections/ethereum/${BAYC}`,
      `https://looksrare.org/collections/${BAYC}`,
      `https://rarible.com/collection/${BAYC}`,
      `<${BAYC.slice(2).toLowerCase()}>`,
    ])
      expect((await t.say(`/audience ${link}`)).title, link).toBe(audience);
    // Bare hex is one word, never part of a name: the period after it is read as the period.
    expect(t.text(await t.say(`/owners ${BAYC.slice(2)} 7d`))).toBe(
      t.text(await t.say(`/owners ${BAYC} 7d`)),
    );
    const chat = { id: "pasted-collection", kind: "group" as const };
    expect((await t.say(`/watch collection ${BAYC.slice(2)} owners 5`, { chat })).tone).toBe(
      "success",
    );
    expect(await watchStoreOf(t.store).forChat("telegram", chat.id)).toMatchObject([
      { kind: "collection", target: BAYC.toLowerCase(), ownersPercent: 5 },
    ]);
  });

  it("an NFT: the token id of each item link shape", async () => {
    const { contract, tokenId } = t.sim.fixtures.token;
    const expected = (await t.say(`/nft ${contract} ${tokenId}`)).title;
    expect(expected).toBeTruthy();
    for (const link of [
      `https://etherscan.io/nft/${contract}/${tokenId}`,
      `https://etherscan.io/token/${contract}?a=${tokenId}`,
      `https://opensea.io/item/ethereum/${contract}/${tokenId}`,
      `https://blur.io/eth/asset/${contract}/${tokenId}`,
      `https://magiceden.io/item-details/ethereum/${contract}/${tokenId}`,
      `https://looksrare.org/collections/${contract}/${tokenId}`,
      `https://rarible.com/token/${contract}:${tokenId}`,
    ])
      expect((await t.say(`/nft ${link}`)).title, link).toBe(expected);
    expect((await t.say(`/nft ${contract.slice(2)} ${tokenId}`)).title).toBe(expected);
  });

  it("a collection link by name: looked up by that name, or a clear message", async () => {
    expect((await t.say("/audience https://opensea.io/collection/boredapeyachtclub")).title).toBe(
      "Audience of Bored Ape Yacht Club",
    );
    expect((await t.say("/stats https://blur.io/collection/azuki")).title).toMatch(/Azuki/);
    const unknown = await t.say("/audience https://opensea.io/collection/no-such-thing-zzqx");
    expect(t.text(unknown)).toMatch(
      /OpenSea collection link names "no-such-thing-zzqx", and I know no collection by that name/,
    );
    expect(t.text(unknown)).toMatch(/contract address/);
  });

  it("refuses clearly: a link on a chain not served, an unknown site, the wrong kind of page", async () => {
    expect(await refused(`/wallet https://basescan.org/address/${VITALIK}`)).toMatch(
      /That link is on Base, which this bot does not serve \(it serves ethereum\)/,
    );
    expect(await refused(`/audience https://arbiscan.io/token/${BAYC}`)).toMatch(
      /on Arbitrum One, which this bot does not serve/,
    );
    expect(await refused(`/wallet https://example.com/address/${VITALIK}`)).toMatch(
      /I cannot read links of "example\.com"/,
    );
    expect(await refused(`/wallet https://opensea.io/assets/ethereum/${BAYC}/1`)).toMatch(
      /That link is to an NFT, not a wallet/,
    );
    expect(await refused(`/audience https://opensea.io/${VITALIK}`)).toMatch(
      /a wallet's profile, not a collection/,
    );
    expect(await refused("/wallet https://opensea.io/vitalik")).toMatch(/holds a user name/);
    expect(await refused(`/nft https://opensea.io/assets/ethereum/${BAYC}/5 6`)).toMatch(
      /The link names token 5 but you also gave 6/,
    );
  });

  it("refuses NUL bytes, markup and huge input without echoing them", async () => {
    for (const line of [
      `/wallet https://etherscan.io/address/${VITALIK}\u0000`,
      `/audience <https://etherscan.io/token/${BAYC}<b>x</b>>`,
      `/wallet https://etherscan.io/address/${VITALIK}?x=${"a".repeat(3000)}`,
      `/wallet ${"ab".repeat(3000)}`,
    ]) {
      const text = await refused(line);
      expect(text).not.toMatch(/\u0000|<b>|a{200}|(ab){100}/);
    }
  });
});

describe("several chains", () => {
  beforeAll(async () => {
    t = await startRuntime({ CHAINS: "ethereum,base,polygon" });
  });
  afterAll(async () => {
    await t.close();
  });

  it("a link on another chain than the one asked is refused, saying both", async () => {
    const base = t.sim.fixturesOf("base");
    expect(
      await refused(`/audience chain:ethereum https://basescan.org/token/${base.collection}`),
    ).toMatch(/That link is on Base, and you asked about Ethereum: .*chain:base/);
    expect(
      await refused(`/wallet polygon https://opensea.io/item/base/${base.collection}/1`),
    ).toMatch(/not a wallet/);
  });

  it("a link names its chain when none is asked: it is read there", async () => {
    const base = t.sim.fixturesOf("base");
    const { result, requests } = await sent(() =>
      t.say(`/audience https://basescan.org/token/${base.collection}`),
    );
    expect(result.title, t.text(result)).toMatch(/^Audience of/);
    expect([...new Set(requests.map((request) => request.chain))]).toEqual(["base"]);
    const chat = { id: "pasted-chains", kind: "group" as const };
    const watched = await t.say(`/watch wallet https://basescan.org/address/${base.wallet}`, {
      chat,
    });
    expect(watched.tone, t.text(watched)).toBe("success");
    expect(await watchStoreOf(t.store).forChat("telegram", chat.id)).toMatchObject([
      { kind: "wallet", chain: "base", target: base.wallet.toLowerCase() },
    ]);
    const polygon = t.sim.fixturesOf("polygon");
    const { requests: walletRequests } = await sent(() =>
      t.say(`/wallet https://polygonscan.com/address/${polygon.wallet}`),
    );
    expect([...new Set(walletRequests.map((request) => request.chain))]).toEqual(["polygon"]);
  });
});
