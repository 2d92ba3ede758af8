import { afterEach, describe, expect, it } from "vitest";
import type { ScriptedResponse } from "../src/simulator/index.ts";
import { type RuntimeSetup, startRuntime } from "./helpers.ts";

let t: RuntimeSetup;
afterEach(async () => {
  await t?.close();
});

describe("/whois", () => {
  it("forward: address, expiry, parent and behavior", async () => {
    t = await startRuntime();
    const { fixtures: f } = t.sim;
    const reply = await t.say(`/whois ${f.subdomain.toUpperCase()}`);
    expect(reply.title).toBe(f.subdomain);
    expect(reply.fields?.find((x) => x.name === "Parent")?.value).toBe(f.subdomainParent);
    expect(reply.fields?.find((x) => x.name === "Behavior")?.value).not.toMatch(/unavailable/);
  });

  it("a DNS name has no expiry", async () => {
    t = await startRuntime();
    const reply = await t.say(`/whois ${t.sim.fixtures.dnsName}`);
    expect(reply.fields?.find((x) => x.name === "Expires")?.value).toMatch(/^never/);
  });

  it("reverse: every name of an address, lowercase or checksummed", async () => {
    t = await startRuntime();
    const { fixtures: f } = t.sim;
    const reply = await t.say(`/whois ${f.multiNameWallet}`);
    expect(reply.table?.rows.map((row) => row[0]).sort()).toEqual(
      [...f.multiNameWalletNames].sort(),
    );
    expect(reply.title).toMatch(/^0x[0-9a-fA-F]{40}$/);
    expect(reply.title).not.toBe(f.multiNameWallet);
  });

  it("an address without names says so", async () => {
    t = await startRuntime();
    const reply = await t.say(`/whois ${t.sim.fixtures.unknownAddress}`);
    expect(reply.text).toBe("No ENS name points to this address.");
  });

  it("an unknown name is not found; a bad one is refused before any request", async () => {
    t = await startRuntime();
    expect((await t.say("/whois nobody-at-all-here.eth")).text).toBe(
      "No ENS name nobody-at-all-here.eth is registered.",
    );
    const before = t.sim.countRequests();
    expect((await t.say("/whois a..eth")).text).toMatch(/empty label/);
    expect((await t.say("/whois 0x1234")).text).toMatch(/4 hex digits/);
    expect(t.sim.countRequests()).toBe(before);
  });
});

describe("/audience", () => {
  it("shows every category with its share and signed 30-day change, unknown ones by their words", async () => {
    t = await startRuntime();
    const reply = await t.say(`/audience ${t.sim.fixtures.otherBehaviorCollection}`);
    const rows = reply.table?.rows ?? [];
    expect(rows.map((row) => row[0])).toContain("Other");
    const total = rows.reduce((sum, row) => sum + Number((row[2] ?? "0").replace("%", "")), 0);
    expect(total).toBeGreaterThan(99);
    expect(total).toBeLessThan(101);
    for (const row of rows) expect(row[3]).toMatch(/^([+-][\d,]+|0)$/);
  });

  it("accepts an Etherscan link and an address in <>", async () => {
    t = await startRuntime();
    const c = t.sim.fixtures.collection;
    expect((await t.say(`/audience https://etherscan.io/token/${c}`)).title).toMatch(
      /^Audience of/,
    );
    expect((await t.say(`/audience <${c.toUpperCase().replace("0X", "0x")}>`)).title).toMatch(
      /^Audience of/,
    );
  });

  it("an unknown collection is not found", async () => {
    t = await startRuntime();
    expect((await t.say(`/audience ${t.sim.fixtures.unknownAddress}`)).text).toMatch(
      /^No collection 0x[0-9a-fA-F]{4}…[0-9a-fA-F]{4} on this chain\.$/,
    );
  });
});

describe("/top", () => {
  it("ranks by each metric, descending, and pages on", async () => {
    t = await startRuntime();
    for (const metric of ["volume", "sales", "max_price"]) {
      const reply = await t.say(`/top ${metric} 30d 5`);
      expect(reply.table?.rows).toHaveLength(5);
    }
    const first = await t.say("/top sales 365d 3");
    const next = first.buttons?.find((b) => b.label.includes("Next"));
    const second = await t.press(next?.id ?? "");
    expect(second.table?.rows[0]?.[0]).toBe("4");
  });

  it("takes aliases (24h, 1w) and refuses what the spec does not name (1h, average price)", async () => {
    t = await startRuntime();
    expect((await t.say("/top volume 24h")).title).toMatch(/last 1 day/);
    expect((await t.say("/top sales 1w")).title).toMatch(/last 7 days/);
    expect((await t.say("/top volume 1h")).text).toMatch(/duration: use one of 1d, 7d, 30d, 365d/);
    expect((await t.say("/top avg_price")).text).toMatch(/metric: use one of/);
  });
});

describe("/nft", () => {
  it("details, owners, last sale with fungible totals, and the raw metadata button", async () => {
    t = await startRuntime();
    const { contract, tokenId } = t.sim.fixtures.token;
    const reply = await t.say(`/nft https://opensea.io/assets/ethereum/${contract}/${tokenId}`);
    expect(reply.fields?.find((x) => x.name === "Last sale")?.value).toMatch(
      /^1\.2346 ETH · \$[\d,]+\.\d{2}$/,
    );
    expect(reply.fields?.find((x) => x.name === "Sale details")?.value).toMatch(/of token 0x/);
    expect(reply.table?.columns).toEqual(["Owner", "Quantity"]);
    const raw = await t.press(reply.buttons?.find((b) => b.label === "Raw metadata")?.id ?? "");
    expect(() =>
      JSON.parse(raw.text ?? new TextDecoder().decode(raw.files?.[0]?.data)),
    ).not.toThrow();
  });

  it("plain-text metadata is shown as it is", async () => {
    t = await startRuntime();
    const { contract, tokenId } = t.sim.fixtures.tokenWithTextMetadata;
    const reply = await t.say(`/nft ${contract} ${tokenId}`);
    const raw = await t.press(reply.buttons?.[0]?.id ?? "");
    expect(raw.text ?? "").not.toBe("");
  });

  it("a token that never sold says so; a 78-digit id works", async () => {
    t = await startRuntime();
    const { fixtures: f } = t.sim;
    const unsold = await t.say(`/nft ${f.tokenWithoutSale.contract} ${f.tokenWithoutSale.tokenId}`);
    expect(unsold.fields?.find((x) => x.name === "Last sale")?.value).toBe("never sold");
    const huge = await t.say(`/nft ${f.hugeTokenId.contract} ${f.hugeTokenId.tokenId}`);
    expect(huge.fields?.find((x) => x.name === "Token id")?.value).toBe(f.hugeTokenId.tokenId);
  });

  it("not found, missing token, conflicting link and bad ids", async () => {
    t = await startRuntime();
    const c = t.sim.fixtures.collection;
    expect((await t.say(`/nft ${c} 999999999`)).text).toMatch(
      /^No token 999999999 in collection 0x/,
    );
    expect((await t.say(`/nft ${c}`)).text).toMatch(/Which token\?/);
    expect((await t.say(`/nft https://opensea.io/assets/ethereum/${c}/5 6`)).text).toMatch(
      /names token 5 but you also gave 6/,
    );
    expect((await t.say(`/nft ${c} ${"1".repeat(79)}`)).text).toMatch(/79 digits/);
    expect((await t.say(`/nft ${c} 0x1`)).text).toMatch(/decimal, not hex/);
    expect((await t.say(`/nft ${c} 1.5`)).text).toMatch(/whole number/);
  });
});

describe("/help", () => {
  it("lists every command, and explains one", async () => {
    t = await startRuntime();
    const index = await t.say("/help");
    for (const command of t.runtime.commands) expect(index.text).toContain(`/${command.name}`);
    const one = await t.say("/help /top");
    expect(one.fields?.find((x) => x.name === "Usage")?.value).toBe(
      "/top [volume|sales|max_price] [1d|7d|30d|365d] [limit]",
    );
    expect((await t.say("/help nope")).text).toMatch(/There is no \/nope command/);
  });
});

describe("upstream failures, per command", () => {
  const lines = (f: RuntimeSetup["sim"]["fixtures"]) => [
    `/whois ${f.walletEns}`,
    `/audience ${f.collection}`,
    "/top volume 1d",
    `/nft ${f.token.contract} ${f.token.tokenId}`,
  ];
  const cases: [string, ScriptedResponse, RegExp][] = [
    ["503", { status: 503 }, /unavailable right now/],
    ["429 past the budget", { status: 429, retryAfterSeconds: 120 }, /busy, try again in 120 s/],
    ["malformed JSON", { status: 200, body: "{oops" }, /could not read/],
    ["401", { status: 401 }, /API key was refused/],
  ];
  it.each(cases)("%s gets its sentence from every command", async (_label, scripted, message) => {
    t = await startRuntime({ API_RETRIES: "0", API_RETRY_MAX_TOTAL_MS: "1000" });
    for (const line of lines(t.sim.fixtures)) {
      t.sim.script([scripted, scripted]);
      const reply = await t.say(line);
      expect(reply.text, line).toMatch(message);
    }
  });
});
