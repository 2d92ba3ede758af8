import { describe, expect, it } from "vitest";
import {
  checkAddress,
  checkTokenId,
  checkWallet,
  InvalidInputError,
  parseAddress,
  parseEnsName,
  parseTokenId,
  parseWallet,
  parseWalletList,
  toChecksumAddress,
} from "../src/api/validate.ts";

describe("addresses", () => {
  it.each([
    // EIP-55 test vectors from the EIP itself
    ["0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed", "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"],
    ["0xFB6916095CA1DF60BB79CE92CE3EA74C37C5D359", "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359"],
    ["0xdbf03b407c01e7cd3cbea99509d93f8dddc8c6fb", "0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB"],
    [
      "  0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb  ",
      "0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb",
    ],
  ])("accepts %s in any case and checksums it", (input, expected) => {
    expect(parseAddress(input)).toBe(expected);
  });

  it.each([
    ["", /start with 0x/],
    ["0x1234", /4 hex digits/],
    ["0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaedff", /42 hex digits/],
    ["0xZZaeb6053f3e94c9b9a09f33669435e7ef1beaed", /only 0-9 and a-f/],
    ["5aaeb6053f3e94c9b9a09f33669435e7ef1beaed", /start with 0x/],
    ["vitalik.eth", /start with 0x/],
  ])("refuses %j with a reason", (input, reason) => {
    expect(() => parseAddress(input)).toThrow(InvalidInputError);
    expect(() => parseAddress(input)).toThrow(reason);
  });

  it("checksums are idempotent", () => {
    const once = toChecksumAddress("0x52908400098527886e0f7030069857d2e4169ee7");
    expect(toChecksumAddress(once)).toBe(once);
    expect(once).toBe("0x52908400098527886E0F7030069857D2E4169EE7");
  });
});

describe("ENS names", () => {
  it.each([
    ["Vitalik.ETH", "vitalik.eth"],
    ["  nick.eth ", "nick.eth"],
    ["💩.eth", "💩.eth"],
    ["é.eth", "é.eth"],
    ["pay.vitalik.eth", "pay.vitalik.eth"],
    ["example.xyz", "example.xyz"],
  ])("normalizes %j to %j", (input, expected) => {
    expect(parseEnsName(input)).toBe(expected);
  });

  it.each([
    ["", /cannot be empty/],
    ["a..eth", /empty label/],
    ["ab c.eth", /disallowed character/],
    ["bad_name.eth", /underscore/],
    ["ab\u0000.eth", /disallowed character/],
    ["vitalik", /not a full ENS name/],
    ["x".repeat(300), /too long/],
  ])("refuses %j with the normalizer's reason", (input, reason) => {
    expect(() => parseEnsName(input)).toThrow(InvalidInputError);
    expect(() => parseEnsName(input)).toThrow(reason);
  });

  it("does not echo control characters back in the message", () => {
    try {
      parseEnsName("ab\u0000\u202e.eth");
      expect.unreachable();
    } catch (error) {
      expect((error as Error).message).not.toMatch(/[\u0000\u202e]/);
    }
  });
});

describe("token ids", () => {
  const digits78 = "1".repeat(78);
  it.each([
    ["0", "0"],
    ["1", "1"],
    ["007", "7"],
    [digits78, digits78],
    [` ${digits78} `, digits78],
  ])("accepts %j as %j, kept as a string", (input, expected) => {
    const id = parseTokenId(input);
    expect(typeof id).toBe("string");
    expect(id).toBe(expected);
  });

  it.each([
    ["1".repeat(79), /79 digits/],
    ["-1", /sign/],
    ["+1", /sign/],
    ["0x1", /hex/],
    ["1.5", /whole number/],
    ["1e3", /whole number/],
    ["", /digits only/],
    ["abc", /digits only/],
  ])("refuses %j", (input, reason) => {
    expect(() => parseTokenId(input)).toThrow(InvalidInputError);
    expect(() => parseTokenId(input)).toThrow(reason);
  });
});

describe("wallet lists", () => {
  const address = (i: number) => `0x${i.toString(16).padStart(40, "0")}`;

  it("takes addresses and ENS names, and drops duplicates in any case", () => {
    const list = parseWalletList([
      address(1),
      address(1).toUpperCase().replace("0X", "0x"),
      "Nick.eth",
    ]);
    expect(list).toEqual([toChecksumAddress(address(1)), "nick.eth"]);
  });

  it("takes 500 and refuses 501 or none", () => {
    expect(parseWalletList(Array.from({ length: 500 }, (_, i) => address(i + 1)))).toHaveLength(
      500,
    );
    expect(() => parseWalletList(Array.from({ length: 501 }, (_, i) => address(i + 1)))).toThrow(
      /at most 500/,
    );
    expect(() => parseWalletList([])).toThrow(/at least one/);
  });

  it("says which entry is bad", () => {
    expect(() => parseWallet("0xnothex")).toThrow(/"0xnothex" is not a valid wallet address/);
  });
});

describe("checks without exceptions", () => {
  it("return the value, or the very message the parser throws, for a person's typo", () => {
    expect(checkTokenId("007")).toEqual({ ok: true, value: "7" });
    expect(checkTokenId("abc")).toEqual({
      ok: false,
      code: "invalid_token_id",
      message: '"abc" is not a valid token id: it must be digits only.',
    });
    expect(() => parseTokenId("abc")).toThrow(
      new InvalidInputError(
        "invalid_token_id",
        '"abc" is not a valid token id: it must be digits only.',
      ),
    );
    expect(checkAddress("0x12", "contract address")).toEqual({
      ok: false,
      code: "invalid_address",
      message: '"0x12" is not a valid contract address (it has 2 hex digits; an address has 40).',
    });
    const wallet = checkWallet("Vitalik.ETH");
    expect(wallet).toEqual({ ok: true, value: "vitalik.eth" });
    expect(checkWallet("nodot")).toEqual({
      ok: false,
      code: "invalid_ens_name",
      message: '"nodot" is not a full ENS name: add its top-level part, like name.eth.',
    });
  });
});
