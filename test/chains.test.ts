import { afterEach, describe, expect, it } from "vitest";
import { KNOWN_CHAINS, parseChains } from "../src/chains.ts";
import { ConfigError, parseConfig, secretsOf } from "../src/config.ts";
import type { Simulator } from "../src/simulator/index.ts";
import { startTestSimulator } from "./test-simulator.ts";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

const configError = (variables: Record<string, string>) => {
  try {
    parseConfig(variables);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error("parseConfig accepted it");
};

describe("CHAINS", () => {
  it("unset with API_BASE_URL: one chain, ethereum, on it, with API_KEY and EXPLORER_URL, as before chains", () => {
    const config = parseConfig({
      API_BASE_URL: "https://api.example.com/v1/",
      API_KEY: "secret-key",
      EXPLORER_URL: "https://eth.blockscout.com",
    });
    expect(config.simulated).toBe(false);
    expect(config.chains).toEqual([
      {
        id: "ethereum",
        name: "Ethereum",
        baseUrl: "https://api.example.com/v1",
        apiKey: "secret-key",
        symbol: "ETH",
        explorer: "https://eth.blockscout.com",
        marketplace: KNOWN_CHAINS.ethereum?.marketplace,
        spam: true,
        chainId: 1,
      },
    ]);
  });

  it("unset without API_BASE_URL: every chain of the embedded simulator, ethereum first", () => {
    const config = parseConfig({});
    expect(config.simulated).toBe(true);
    expect(config.chains.map((chain) => [chain.id, chain.baseUrl, chain.spam])).toEqual([
      ["ethereum", undefined, true],
      ["base", undefined, false],
      ["polygon", undefined, true],
    ]);
  });

  it("compact form: known chains get their name, symbol, explorer and marketplace; API_KEY where none is given", () => {
    const config = parseConfig({
      CHAINS: " Base=https://base.example.com/ , polygon=https://poly.example.com",
      API_KEY: "shared-key",
    });
    expect(config.chains.map((chain) => chain.id)).toEqual(["base", "polygon"]);
    expect(config.chains[0]).toMatchObject({
      name: "Base",
      baseUrl: "https://base.example.com",
      apiKey: "shared-key",
      explorer: "https://basescan.org",
      spam: false,
    });
    expect(config.chains[1]).toMatchObject({ symbol: "POL", spam: true });
  });

  it("JSON form: full control, a key per chain, and every key redacted", () => {
    const config = parseConfig({
      API_KEY: "default-key",
      CHAINS: JSON.stringify([
        {
          id: "zora",
          name: "Zora",
          baseUrl: "https://zora.example.com",
          apiKey: "zora-key",
          symbol: "ETH",
          explorer: "https://explorer.zora.energy/",
          spam: false,
        },
        { id: "ethereum", baseUrl: "https://eth.example.com", spam: false },
      ]),
    });
    expect(config.chains[0]).toMatchObject({
      id: "zora",
      apiKey: "zora-key",
      explorer: "https://explorer.zora.energy",
    });
    expect(config.chains[1]).toMatchObject({ apiKey: "default-key", spam: false });
    expect(secretsOf(config)).toEqual(expect.arrayContaining(["zora-key", "default-key"]));
  });

  it.each([
    ["base=https://b.example.com,base=https://c.example.com", /names chain "base" twice/],
    ["base=ftp://b.example.com", /URL of chain "base" must be an http\(s\) URL/],
    ["Not A Chain=https://x.example.com", /entry 1 must be id=https:/],
    ["zora=https://z.example.com", /chain "zora" is not one the bot knows .*JSON form/],
    ["[{", /not valid JSON/],
    ['[{"id":"base","colour":"blue"}]', /chain 1/],
    ['[{"id":"base","baseUrl":"https://b.example.com","apiKey":""}]', /chain 1, field apiKey/],
    [
      "ethereum=https://e.example.com,base",
      /chain "base" has no data-service URL .*or none to use the embedded simulator/,
    ],
  ])("refuses %s with a clear message", (value, message) => {
    const error = configError({ CHAINS: value });
    expect(error).toMatch(/^Invalid setting CHAINS: /);
    expect(error).toMatch(message);
  });

  it("never quotes an API key it refuses", () => {
    const error = configError({
      CHAINS: '[{"id":"base","baseUrl":"https://b.example.com","apiKey":12345678}]',
    });
    expect(error).not.toContain("12345678");
  });

  it("an RPC URL per chain for contract wallets' proofs (/verify): optional, redacted, never quoted", () => {
    const config = parseConfig({
      CHAINS:
        '[{"id":"ethereum","baseUrl":"https://e.example.com","rpcUrl":"https://rpc.example.com/v2/rpc-key-123/"},{"id":"zora","name":"Zora","symbol":"ETH","explorer":"https://explorer.zora.energy","baseUrl":"https://z.example.com","chainId":7777777}]',
    });
    expect(config.chains.map((c) => [c.id, c.chainId, c.rpcUrl])).toEqual([
      ["ethereum", 1, "https://rpc.example.com/v2/rpc-key-123"],
      ["zora", 7777777, undefined],
    ]);
    expect(secretsOf(config)).toContain("https://rpc.example.com/v2/rpc-key-123");
    // An unknown chain without its chain id serves everything but /verify.
    expect(
      parseChains(
        '[{"id":"zora","name":"Zora","symbol":"ETH","explorer":"https://z.example"}]',
        undefined,
      )[0]?.chainId,
    ).toBeUndefined();
    const error = configError({
      CHAINS: '[{"id":"base","baseUrl":"https://b.example.com","rpcUrl":"wss://rpc-key-456"}]',
    });
    expect(error).toMatch(/chain 1, field rpcUrl: must be an http\(s\) URL/);
    expect(error).not.toContain("rpc-key-456");
    expect(configError({ CHAINS: '[{"id":"base","chainId":-1}]' })).toMatch(
      /chain 1, field chainId/,
    );
  });

  it("parseChains keeps the order given: the first is the default", () => {
    expect(
      parseChains("polygon=https://p.example.com,ethereum=https://e.example.com", undefined).map(
        (chain) => chain.id,
      ),
    ).toEqual(["polygon", "ethereum"]);
  });
});

describe("the simulator's chains", () => {
  async function simulator(): Promise<Simulator> {
    const sim = await startTestSimulator({ chains: ["ethereum", "base", "polygon"] });
    cleanups.push(() => sim.close());
    return sim;
  }
  const get = async (sim: Simulator, url: string) => {
    const response = await fetch(url, { headers: { "x-api-key": sim.apiKey } });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };

  it("serves each chain under its prefix, a distinct world each, the first also without one", async () => {
    const sim = await simulator();
    const top = async (base: string) =>
      JSON.stringify(
        (await get(sim, `${base}/foundational/v1beta2/contracts?limit=5&offset=0`)).body,
      );
    const [plain, ethereum, base, polygon] = await Promise.all([
      top(sim.url),
      top(sim.urlOf("ethereum")),
      top(sim.urlOf("base")),
      top(sim.urlOf("polygon")),
    ]);
    expect(ethereum).toBe(plain);
    expect(base).not.toBe(ethereum);
    expect(polygon).not.toBe(base);
    expect(sim.requests.map((request) => request.chain)).toEqual(
      expect.arrayContaining(["ethereum", "base", "polygon"]),
    );
    expect(() => sim.urlOf("solana")).toThrow(/not solana/);
  });

  it("has spam data on ethereum and polygon only; reports elsewhere answer 404", async () => {
    const sim = await simulator();
    const spamCount = async (chain: string) => {
      const fixtures = sim.fixturesOf(chain);
      const { body } = await get(
        sim,
        `${sim.urlOf(chain)}/wallets/v1beta2/${fixtures.wallet}/nfts?spam=SPAM_FILTER_ONLY&limit=100`,
      );
      return ((body.nfts as unknown[] | undefined) ?? []).length;
    };
    expect(await spamCount("ethereum")).toBeGreaterThan(0);
    expect(await spamCount("base")).toBe(0);
    const report = (chain: string) =>
      fetch(
        `${sim.urlOf(chain)}/wallets/v1beta2/0x0000000000000000000000000000000000000001/report_spam/0x0000000000000000000000000000000000000002`,
        { method: "POST", headers: { "x-api-key": sim.apiKey } },
      ).then((response) => response.status);
    expect(await report("base")).toBe(404);
    expect(await report("ethereum")).not.toBe(404);
  });

  it("mints on the chain asked, each chain with its own contract list", async () => {
    const sim = await simulator();
    const [minted] = sim.mint(1, "base");
    expect(minted).toBeDefined();
    const newest = async (base: string) =>
      (
        (
          await get(
            sim,
            `${base}/foundational/v1beta2/contracts?limit=1&offset=0&sortDirection=SORT_DIRECTION_DESC`,
          )
        ).body.contracts as { address: string }[]
      )[0]?.address;
    expect(await newest(sim.urlOf("base"))).toBe(minted?.address);
    expect(await newest(sim.urlOf("ethereum"))).not.toBe(minted?.address);
  });
});
