/**
 * Issue 26, item 3: what people paste for a wallet, a collection or an NFT. One reader
 * (readPasted) for explorer links of each known chain, marketplace links, and 40 hex digits
 * without 0x; the option checks built on it.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { toChecksumAddress } from "../src/api/validate.ts";
import { checkCollectionArg, checkNftArg, checkWalletArg, readPasted } from "../src/core/links.ts";
import { opt } from "../src/core/options.ts";

const A = "0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045";
const BARE = A.slice(2);
const lower = A.toLowerCase();

const value = <T>(checked: { ok: true; value: T } | { ok: false; message: string } | undefined) => {
  if (!checked?.ok) throw new Error(`refused: ${checked ? checked.message : "not a reference"}`);
  return checked.value;
};
const refusal = (checked: { ok: boolean; message?: string } | undefined) => {
  if (!checked || checked.ok) throw new Error("accepted");
  return checked.message ?? "";
};

describe("readPasted", () => {
  it("reads each known chain's explorer: address, token and nft pages", () => {
    for (const [host, chain] of [
      ["etherscan.io", "ethereum"],
      ["www.etherscan.io", "ethereum"],
      ["basescan.org", "base"],
      ["polygonscan.com", "polygon"],
      ["arbiscan.io", "arbitrum"],
      ["optimistic.etherscan.io", "optimism"],
    ] as const) {
      expect(value(readPasted(`https://${host}/address/${lower}`))).toMatchObject({
        address: A,
        page: "address",
        chain,
        host: host.replace(/^www\./, ""),
      });
      expect(value(readPasted(`https://${host}/address/${A}#tokentxnsErc721`))).toMatchObject({
        address: A,
        chain,
      });
      expect(value(readPasted(`https://${host}/token/${A}`))).toMatchObject({
        page: "collection",
        chain,
      });
      expect(value(readPasted(`https://${host}/token/${A}?a=0042`))).toMatchObject({
        page: "item",
        tokenId: "42",
        chain,
      });
      expect(value(readPasted(`https://${host}/nft/${A}/7`))).toMatchObject({
        address: A,
        page: "item",
        tokenId: "7",
        chain,
      });
    }
  });

  it("reads marketplace links: profiles, collections and items, with the chain the path names", () => {
    const cases: [string, object][] = [
      [`https://opensea.io/${A}`, { page: "wallet" }],
      [`https://opensea.io/${lower}/created`, { page: "wallet" }],
      [`https://opensea.io/accounts/${A}`, { page: "wallet" }],
      [
        `https://opensea.io/assets/ethereum/${A}/1`,
        { page: "item", chain: "ethereum", tokenId: "1" },
      ],
      [`https://opensea.io/assets/matic/${A}/2`, { page: "item", chain: "polygon", tokenId: "2" }],
      [`https://opensea.io/item/base/${A}/3`, { page: "item", chain: "base", tokenId: "3" }],
      [`https://opensea.io/assets/${A}/4`, { page: "item", tokenId: "4" }],
      [`https://opensea.io/assets/base/${A}`, { page: "collection", chain: "base" }],
      [`https://blur.io/asset/${A}/5`, { page: "item", tokenId: "5" }],
      [`https://blur.io/eth/asset/${A}/5`, { page: "item", chain: "ethereum", tokenId: "5" }],
      [`https://blur.io/${A}`, { page: "wallet" }],
      [`https://blur.io/portfolio/${A}`, { page: "wallet" }],
      [`https://magiceden.io/u/${A}`, { page: "wallet" }],
      [
        `https://magiceden.io/item-details/polygon/${A}/6`,
        { page: "item", chain: "polygon", tokenId: "6" },
      ],
      [`https://magiceden.io/collections/ethereum/${A}`, { page: "collection", chain: "ethereum" }],
      [`https://looksrare.org/collections/${A}/8`, { page: "item", tokenId: "8" }],
      [`https://looksrare.org/accounts/${A}`, { page: "wallet" }],
      [`https://rarible.com/token/${A}:9`, { page: "item", tokenId: "9" }],
      [`https://rarible.com/token/base/${A}:9`, { page: "item", chain: "base", tokenId: "9" }],
      [`https://rarible.com/user/${A}`, { page: "wallet" }],
      [`https://rarible.com/collection/${A}`, { page: "collection" }],
    ];
    for (const [link, expected] of cases) {
      expect(value(readPasted(link)), link).toMatchObject({
        kind: "address",
        address: A,
        ...expected,
      });
      // Discord's no-embed form, and spaces around.
      expect(value(readPasted(` <${link}> `)), link).toMatchObject({ address: A });
    }
    // A profile is on every chain: the link names none.
    expect(value(readPasted(`https://opensea.io/${A}`))).not.toHaveProperty("chain");
  });

  it("reads 40 hex digits without 0x as an address, in any case", () => {
    expect(value(readPasted(BARE))).toMatchObject({ kind: "address", address: A, page: "address" });
    expect(value(readPasted(BARE.toUpperCase()))).toMatchObject({ address: A });
    expect(value(readPasted(`<${BARE}>`))).toMatchObject({ address: A });
  });

  it("a collection link by name is a slug to look up; an ENS app link is a name", () => {
    expect(value(readPasted("https://opensea.io/collection/boredapeyachtclub"))).toEqual({
      kind: "slug",
      slug: "boredapeyachtclub",
      site: "OpenSea",
      host: "opensea.io",
    });
    expect(value(readPasted("https://blur.io/collection/mutant-ape-yacht-club/"))).toMatchObject({
      kind: "slug",
      slug: "mutant-ape-yacht-club",
    });
    expect(value(readPasted("https://app.ens.domains/vitalik.eth"))).toEqual({
      kind: "name",
      name: "vitalik.eth",
      host: "app.ens.domains",
    });
  });

  it("is not a reference: names, ENS names, short forms, other hex lengths", () => {
    for (const text of ["azuki", "vitalik.eth", "bored ape yacht club", "0x1234…abcd", "12345"])
      expect(readPasted(text), text).toBeUndefined();
    // 40 decimal digits are a token id as much as an address: not read as an address.
    expect(readPasted("1".repeat(40))).toBeUndefined();
  });

  it("refuses clearly: unknown hosts, user-name profiles, links without an address", () => {
    expect(refusal(readPasted(`https://example.com/address/${A}`))).toMatch(
      /cannot read links of "example\.com"/,
    );
    expect(refusal(readPasted(`https://sepolia.etherscan.io/address/${A}`))).toMatch(
      /sepolia\.etherscan\.io/,
    );
    expect(refusal(readPasted("https://opensea.io/vitalik"))).toMatch(/user name|address/);
    expect(refusal(readPasted("https://etherscan.io/address/0x1234"))).toMatch(/4 hex digits/);
    expect(refusal(readPasted("https://etherscan.io/blocks"))).toMatch(/no address/i);
    expect(
      refusal(readPasted(`https://opensea.io/assets/ethereum/${A}/${"1".repeat(79)}`)),
    ).toMatch(/79 digits/);
    expect(refusal(readPasted("ftp://etherscan.io/address/x"))).toBeTruthy();
    expect(refusal(readPasted("https://app.ens.domains/%E0%A4%A"))).toMatch(/app\.ens\.domains/);
  });

  it("refuses NUL bytes, markup and huge links with a message that shows none of it", () => {
    for (const bad of [
      `https://etherscan.io/address/${A}\u0000`,
      `https://etherscan.io/address/${A}<b>x</b>`,
      `https://etherscan.io/address/${A}?q=${"x".repeat(5000)}`,
      `https://etherscan.io/address/${A} and more`,
    ]) {
      const message = refusal(readPasted(bad));
      expect(message).not.toMatch(/\u0000|<b>|x{100}/);
      expect(message.length).toBeLessThan(300);
    }
  });

  it("property: every known link shape round-trips any address and token id", () => {
    const hexAddress = fc.stringMatching(/^[0-9a-fA-F]{40}$/).map((h) => `0x${h}`);
    const tokenId = fc.bigInt({ min: 0n, max: 10n ** 77n }).map(String);
    const shapes = [
      (a: string, id: string) => `https://etherscan.io/nft/${a}/${id}`,
      (a: string, id: string) => `https://basescan.org/token/${a}?a=${id}`,
      (a: string, id: string) => `https://opensea.io/assets/ethereum/${a}/${id}`,
      (a: string, id: string) => `https://opensea.io/item/matic/${a}/${id}?tab=1`,
      (a: string, id: string) => `<https://blur.io/asset/${a}/${id}>`,
      (a: string, id: string) => `https://magiceden.io/item-details/base/${a}/${id}`,
      (a: string, id: string) => `https://rarible.com/token/${a}:${id}`,
    ];
    fc.assert(
      fc.property(hexAddress, tokenId, fc.constantFrom(...shapes), (a, id, shape) => {
        const read = value(readPasted(shape(a, id)));
        expect(read).toMatchObject({
          address: toChecksumAddress(a),
          tokenId: BigInt(id).toString(),
        });
      }),
    );
  });

  it("property: arbitrary text never throws, and a refusal is short and shows no control character", () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ maxLength: 300 }),
          fc.webUrl({ withQueryParameters: true, withFragments: true }),
          fc.string({ unit: "binary", maxLength: 300 }).map((s) => `https://opensea.io/${s}`),
          fc
            .string({ unit: "binary", maxLength: 60 })
            .map((s) => `https://app.ens.domains/${encodeURIComponent(s).slice(0, -1)}`),
        ),
        (text) => {
          const read = readPasted(text);
          if (read && !read.ok) {
            expect(read.message.length).toBeLessThan(400);
            expect(read.message).not.toMatch(/[\u0000-\u001f\u007f]/);
          }
        },
      ),
    );
  });
});

describe("the option checks on top of it", () => {
  it("a wallet: address pages and profiles; not a collection's or an NFT's page", () => {
    expect(value(checkWalletArg(`https://etherscan.io/address/${A}`))).toEqual({
      linked: A,
      chain: "ethereum",
      host: "etherscan.io",
    });
    expect(value(checkWalletArg(BARE))).toBe(A);
    expect(value(checkWalletArg("https://app.ens.domains/vitalik.eth"))).toBe("vitalik.eth");
    expect(refusal(checkWalletArg(`https://opensea.io/assets/ethereum/${A}/1`))).toMatch(
      /an NFT, not a wallet/,
    );
    expect(refusal(checkWalletArg(`https://etherscan.io/token/${A}`))).toMatch(
      /a collection, not a wallet/,
    );
  });

  it("a collection: address, token and item pages; a slug is looked up; not a profile", () => {
    expect(value(checkCollectionArg(BARE))).toBe(A);
    expect(value(checkCollectionArg(`https://opensea.io/item/base/${A}/1`))).toEqual({
      linked: A,
      chain: "base",
      host: "opensea.io",
    });
    expect(value(checkCollectionArg("https://opensea.io/collection/boredapeyachtclub"))).toEqual({
      lookup: "boredapeyachtclub",
      slug: "OpenSea",
    });
    expect(refusal(checkCollectionArg(`https://opensea.io/${A}`))).toMatch(
      /a wallet's profile, not a collection/,
    );
  });

  it("an NFT: the token id an item link names", () => {
    expect(value(checkNftArg(`https://etherscan.io/nft/${A}/12`))).toEqual({
      linked: { contract: A, tokenId: "12" },
      chain: "ethereum",
      host: "etherscan.io",
    });
    expect(value(checkNftArg(BARE))).toEqual({ contract: A });
  });

  it("a list of wallets: one address in any form counts once; the limit counts distinct wallets", () => {
    const schema = opt.walletList("wallets").schema;
    const same = [A, lower, BARE, `<https://etherscan.io/address/${A}>`].join(" ");
    expect(schema.parse(same)).toEqual([A]);
    expect(schema.parse(Array(600).fill(A).join(","))).toEqual([A]);
    const many = Array.from({ length: 501 }, (_, i) => `0x${i.toString(16).padStart(40, "0")}`);
    expect(schema.safeParse(many.join(" ")).success).toBe(false);
    expect(schema.safeParse(many.slice(0, 500).join(" ")).success).toBe(true);
    expect(schema.safeParse(`${A} https://opensea.io/collection/x`).success).toBe(false);
  });
});
