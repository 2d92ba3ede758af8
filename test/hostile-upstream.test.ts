/**
 * Issue 12, "hostile upstream data": what an indexer really sends. Bodies that never end or
 * stall, NUL-padded names, thousands of unknown enum values, image links into the bot's own
 * network. Real HTTP on loopback throughout.
 */
import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { type ApiClient, createApiClient } from "../src/api/client.ts";
import { ApiError } from "../src/api/errors.ts";
import { apiClientSettings } from "../src/bot.ts";
import { parseConfig } from "../src/config.ts";
import type { RenderableReply } from "../src/core/reply.ts";
import {
  type ClientSetup,
  capturingLogger,
  failure,
  type RuntimeSetup,
  startClient,
  startRuntime,
} from "./helpers.ts";

/** C0 (but tab, line feed, carriage return), DEL and C1: what must never come out of the client. */
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/;

describe("response bodies", () => {
  let server: Server | undefined;
  let api: ApiClient | undefined;
  afterEach(async () => {
    await api?.close();
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
    server = undefined;
    api = undefined;
  });

  /** A loopback server answering every request with `respond`; the client points at it. */
  async function serve(
    respond: (res: ServerResponse) => void,
    env: Record<string, string>,
  ): Promise<ApiClient> {
    server = createServer((_req, res) => respond(res));
    await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    const config = parseConfig({ API_RETRIES: "0", ...env });
    api = createApiClient(
      apiClientSettings(config, `http://127.0.0.1:${port}`, "key-123456"),
      capturingLogger().logger,
    );
    return api;
  }

  it("a 200 that streams for ever is cut at API_MAX_BODY_BYTES with invalid_response", async () => {
    let sent = 0;
    let closed: () => void = () => {};
    const clientGone = new Promise<void>((resolve) => {
      closed = resolve;
    });
    const chunk = Buffer.alloc(64 * 1024, "a");
    const client = await serve(
      (res) => {
        res.writeHead(200, { "content-type": "application/json" });
        res.write('{"collections": ["');
        // Paced, so the unfixed client (which reads until its timeout) holds tens of MB, not GBs.
        const timer = setInterval(() => {
          if (res.writableNeedDrain) return;
          res.write(chunk);
          sent += chunk.length;
        }, 2);
        res.on("close", () => {
          clearInterval(timer);
          closed();
        });
      },
      { API_MAX_BODY_BYTES: "1048576", API_TIMEOUT_MS: "3000" },
    );
    const error = await failure(client.collections.top("METRIC_SALES_VOLUME", "DURATION_1_DAY"));
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).kind).toBe("invalid_response");
    expect(error.message).toMatch(/larger than 1048576 bytes/);
    // The client hung up: the server stops streaming, and no more than the cap was taken in
    // (plus what the loopback socket buffers held).
    await clientGone;
    expect(sent).toBeLessThan(16 * 1024 * 1024);
  });

  it("a declared Content-Length over the cap is refused before the body is read", async () => {
    const client = await serve(
      (res) => {
        res.writeHead(200, { "content-type": "application/json", "content-length": "50000000" });
        res.write("{");
      },
      { API_MAX_BODY_BYTES: "1048576", API_TIMEOUT_MS: "3000" },
    );
    const error = (await failure(
      client.collections.top("METRIC_SALES_VOLUME", "DURATION_1_DAY"),
    )) as ApiError;
    expect(error.kind).toBe("invalid_response");
  });

  it("headers then a stalled body times out", async () => {
    const client = await serve(
      (res) => {
        res.writeHead(200, { "content-type": "application/json" });
        res.write('{"collections": [');
      },
      { API_TIMEOUT_MS: "300" },
    );
    const error = (await failure(
      client.collections.top("METRIC_SALES_VOLUME", "DURATION_1_DAY"),
    )) as ApiError;
    expect(error.kind).toBe("timeout");
  });
});

/** Every string in a reply (the picture aside), for "no control character anywhere" checks. */
function replyStrings(reply: RenderableReply): string {
  return JSON.stringify({ ...reply, image: undefined });
}

describe("control characters in names", () => {
  let t: RuntimeSetup;
  afterEach(async () => {
    await t?.close();
  });

  it("NUL-padded names reach /top, /owners and /audience clean, with their charts", async () => {
    t = await startRuntime();
    const { fixtures: f } = t.sim;
    t.sim.script([
      {
        status: 200,
        body: JSON.stringify({
          collections: [
            {
              contractAddress: f.collection,
              contractName: "Bored\u0000\u0000\u0000",
              salesVolume: "12.5",
            },
            {
              contractAddress: f.erc1155Collection,
              contractName: "Ape\u0007 Club\u0085",
              salesVolume: "3",
            },
          ],
        }),
      },
    ]);
    const top = await t.say("/top volume 1d 2");
    expect(top.title).toMatch(/^Top collections/);
    expect(top.table?.rows.map((row) => row[1])).toEqual(["Bored", "Ape Club"]);
    expect(top.image?.kind).toBe("png");
    expect(replyStrings(top)).not.toMatch(/\\u00[01][0-9a-f]|[\u007f-\u009f]/);

    const owners = await t.say(`/owners ${f.collection} 30d`);
    expect(owners.title).toBe("Owners of Bored");
    expect(owners.image?.kind).toBe("png");

    t.sim.script([
      {
        status: 200,
        body: JSON.stringify({
          aggregatedBehaviors: [
            {
              behavior: "BEHAVIOR_WHALE\u0000\u0000",
              walletsCount: "5",
              walletsPercentage: 50,
              walletsCountChange30d: "1",
            },
            {
              behavior: "BEHAVIOR_COLLECTOR",
              walletsCount: "5",
              walletsPercentage: 50,
              walletsCountChange30d: "-1",
            },
          ],
        }),
      },
    ]);
    const audience = await t.say(`/audience ${f.collection}`);
    expect(audience.title).toBe("Audience of Bored");
    expect(audience.image?.kind).toBe("png");
    expect(replyStrings(audience)).not.toMatch(/\\u00[01][0-9a-f]|[\u007f-\u009f]/);
  });

  it("every string field is cleaned at the client; line breaks in free text stay", async () => {
    t = await startRuntime();
    const { fixtures: f } = t.sim;
    const nft = {
      contractAddress: f.token.contract,
      tokenId: f.token.tokenId,
      metadata: {
        name: "Ape\u0000 #1",
        description: "line one\nline\ttwo\u0000\u001b[31m",
        image: { uri: "https://img.example/1.png\u0000" },
      },
      collection: { name: "Bored\u0000" },
    };
    t.sim.script([{ status: 200, body: JSON.stringify({ nft, owners: [] }) }]);
    const details = await t.api.foundational.nftDetails(f.token.contract, "1");
    expect(details.nft.metadata?.name).toBe("Ape #1");
    expect(details.nft.metadata?.description).toBe("line one\nline\ttwo[31m");
    expect(details.nft.metadata?.image?.uri).toBe("https://img.example/1.png");
    expect(details.nft.collection?.name).toBe("Bored");
    t.sim.script([
      {
        status: 200,
        body: JSON.stringify({ "ratio\u0000": "1\u0000", nested: { a: ["x\u0085"] } }),
      },
    ]);
    const profile = await t.api.audiences.financialProfileByCollection(f.erc1155Collection);
    expect(JSON.stringify(profile)).toBe('{"ratio":"1","nested":{"a":["x"]}}');
    expect(CONTROL.test(JSON.stringify(profile))).toBe(false);
  });
});

describe("control characters in error messages", () => {
  let t: ClientSetup;
  afterEach(async () => {
    await t?.close();
  });

  it("a JSON error message is cleaned before anyone reads it", async () => {
    t = await startClient();
    t.sim.script([
      { status: 400, body: JSON.stringify({ message: "walletAddresses\u0000 is\u001b[2J bad" }) },
    ]);
    const error = await failure(t.api.audiences.behaviorsByWallets([t.sim.fixtures.wallet]));
    expect(error.message).toBe("walletAddresses is[2J bad");
  });
});

describe("unknown enum values", () => {
  let t: ClientSetup;
  afterEach(async () => {
    await t?.close();
  });

  const answer = (values: string[]) =>
    JSON.stringify({
      aggregatedBehaviors: values.map((behavior) => ({
        behavior,
        walletsCount: "1",
        walletsPercentage: 0.01,
      })),
    });

  it("5,000 in one answer: each logged once, at most 1,000, then one line saying so", async () => {
    t = await startClient();
    const { fixtures: f } = t.sim;
    const values = Array.from({ length: 5000 }, (_, i) => `BEHAVIOR_NEW_${i}`);
    t.sim.script([{ status: 200, body: answer(values) }]);
    const result = await t.api.audiences.behaviorsByWallets([f.wallet]);
    expect(result.aggregatedBehaviors).toHaveLength(5000);
    const unknown = () => t.lines.filter((line) => line.includes("BEHAVIOR_NEW_"));
    const notice = () => t.lines.filter((line) => line.includes("not logged one by one"));
    expect(unknown()).toHaveLength(1000);
    expect(notice()).toHaveLength(1);

    // The same values again, and new ones: nothing more is written.
    t.sim.script([{ status: 200, body: answer([...values.slice(0, 10), "BEHAVIOR_LATER"]) }]);
    await t.api.audiences.behaviorsByWallets([f.walletEns]);
    expect(unknown()).toHaveLength(1000);
    expect(t.lines.filter((line) => line.includes("BEHAVIOR_LATER"))).toHaveLength(0);
    expect(notice()).toHaveLength(1);
  });

  it("a huge unknown value is logged cut short", async () => {
    t = await startClient();
    t.sim.script([{ status: 200, body: answer([`BEHAVIOR_${"X".repeat(100_000)}`]) }]);
    await t.api.audiences.behaviorsByWallets([t.sim.fixtures.wallet]);
    const line = t.lines.find((l) => l.includes("BEHAVIOR_XXX"));
    expect(line).toBeDefined();
    expect(line?.length ?? 0).toBeLessThan(1000);
  });
});

describe("untrusted image links", () => {
  let t: RuntimeSetup;
  afterEach(async () => {
    await t?.close();
  });

  const BAD = [
    "http://169.254.169.254/latest/meta-data/iam/security-credentials/",
    "http://127.0.0.1/a.png",
    "http://127.1/a.png",
    "http://2130706433/a.png",
    "http://0x7f000001/a.png",
    "http://0177.0.0.1/a.png",
    "http://2852039166/latest/meta-data/",
    "https://10.0.0.5/a.png",
    "https://172.16.3.4/a.png",
    "https://192.168.1.1/a.png",
    "https://100.64.0.1/a.png",
    "https://224.0.0.1/a.png",
    "https://0.0.0.0/a.png",
    "https://255.255.255.255/a.png",
    "http://[::1]/a.png",
    "http://[::]/a.png",
    "http://[fe80::1]/a.png",
    "http://[fd00::1]/a.png",
    "http://[ff02::1]/a.png",
    "http://[::ffff:127.0.0.1]/a.png",
    "http://[::ffff:a9fe:a9fe]/latest/meta-data/",
    "http://localhost/a.png",
    "http://LOCALHOST./a.png",
    "http://img.localhost/a.png",
    "http://printer.local/a.png",
    "http://metadata.google.internal/computeMetadata/v1/",
    "ftp://img.example/a.png",
    "data:image/svg+xml;base64,AAAA",
    "javascript:alert(1)",
    "not a url",
  ];

  const details = (contract: string, tokenId: string, image: Record<string, string>) =>
    JSON.stringify({
      nft: {
        contractAddress: contract,
        tokenId,
        metadata: { name: "Probe", image },
        collection: { name: "Probe collection" },
      },
      owners: [],
    });

  it("a private, loopback, link-local or local-name image never leaves the bot; the NFT still answers", async () => {
    t = await startRuntime({ CACHE_TTL_NFT_S: "0", CACHE_TTL_OWNERSHIP_S: "0" });
    const { contract } = t.sim.fixtures.token;
    for (const [i, uri] of BAD.entries()) {
      for (const image of [{ uri }, { uriOriginal: uri }]) {
        const body = details(contract, String(i + 1), image);
        t.sim.script([
          { status: 200, body },
          { status: 200, body },
        ]);
        const reply = await t.say(`/nft ${contract} ${i + 1}`);
        expect(reply.title, uri).toBe(`Probe #${i + 1}`);
        expect(reply.image, uri).toBeUndefined();
      }
    }
  });

  it("public http(s) images and ipfs:// through the gateway still pass", async () => {
    t = await startRuntime({
      CACHE_TTL_NFT_S: "0",
      CACHE_TTL_OWNERSHIP_S: "0",
      IPFS_GATEWAY: "https://gw.example/ipfs/",
    });
    const { contract } = t.sim.fixtures.token;
    const cases: [Record<string, string>, string][] = [
      [{ uri: "https://img.example/1.png" }, "https://img.example/1.png"],
      [{ uri: "http://8.8.8.8/1.png" }, "http://8.8.8.8/1.png"],
      [{ uri: "https://[2606:4700:4700::1111]/1.png" }, "https://[2606:4700:4700::1111]/1.png"],
      [{ uriOriginal: "ipfs://QmHash/1.png" }, "https://gw.example/ipfs/QmHash/1.png"],
      [
        { uri: "http://10.0.0.1/a.png", uriOriginal: "ipfs://ipfs/QmHash" },
        "https://gw.example/ipfs/QmHash",
      ],
    ];
    for (const [i, [image, expected]] of cases.entries()) {
      const body = details(contract, String(i + 1), image);
      t.sim.script([
        { status: 200, body },
        { status: 200, body },
      ]);
      const reply = await t.say(`/nft ${contract} ${i + 1}`);
      expect(reply.image, JSON.stringify(image)).toEqual({
        kind: "url",
        url: expected,
        alt: "Probe",
      });
    }
  });
});
