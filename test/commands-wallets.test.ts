import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { behaviorLabel, collectionName, fullAddress, shortTokenId } from "../src/core/format.ts";
import { renderDiscord } from "../src/render/discord.ts";
import { addresses, replyHelpers } from "./command-helpers.ts";
import { type RuntimeSetup, startRuntime } from "./helpers.ts";

/** Wallet commands: /whois, /behaviors, /wallet. */

let t: RuntimeSetup;
const { rows, button, sent } = replyHelpers(() => t);

describe("each test on its own runtime", () => {
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

    it("a mention or a character no ENS name has: said plainly, no code points, never a ping", async () => {
      t = await startRuntime();
      const before = t.sim.countRequests();
      for (const [typed, shown] of [
        ["@everyone", "@everyone"],
        ["@here", "@here"],
        ["<@123456789012345678>", "@123456789012345678"],
        ["foo!.eth", "foo!.eth"],
      ]) {
        const reply = await t.say(`/whois ${typed}`);
        expect(reply.text, typed).toBe(
          `"${shown}" is not a wallet address or an ENS name: give 0x… or name.eth.`,
        );
        expect(reply.tone, typed).toBe("warning");
        // Discord shows it without pinging anyone.
        const discord = JSON.stringify(renderDiscord(reply));
        expect(discord, typed).not.toMatch(/@(everyone|here)/);
        expect(discord, typed).toMatch(/"allowedMentions":\{"parse":\[\]\}/);
      }
      // Other refusals of the ENS rules keep their reason, without the code points.
      const mixed = await t.say("/whois vit\u0430lik.eth");
      expect(mixed.text).toMatch(/is not a valid ENS name: .*illegal mixture: Latin \+ Cyrillic/);
      expect(mixed.text).not.toMatch(/\{[0-9A-F]+\}/i);
      expect(t.sim.countRequests()).toBe(before);
    });
  });
});

describe("against the simulator", () => {
  beforeAll(async () => {
    t = await startRuntime();
  });
  afterAll(async () => {
    await t.close();
  });

  describe("/behaviors", () => {
    it("breaks down wallets given by address and ENS name, on spaces, commas and new lines", async () => {
      const f = t.sim.fixtures;
      const { result: reply, requests } = await sent(() =>
        t.say(`/behaviors ${f.wallet}, ${f.multiNameWallet}\n${f.walletEns}`),
      );
      expect(requests[0]?.body).toEqual({
        walletAddresses: [fullAddress(f.wallet), fullAddress(f.multiNameWallet), f.walletEns],
      });
      const expected = await t.api.audiences.behaviorsByWallets([f.wallet, f.multiNameWallet]);
      expect(reply.title).toBe("Behaviors of 3 wallets");
      expect(
        rows(reply)
          .map((row) => row[0])
          .sort(),
      ).toEqual(expected.aggregatedBehaviors.map((row) => behaviorLabel(row.behavior)).sort());
      expect(rows(reply).every((row) => /^\d+\.\d%$/.test(row[2] ?? ""))).toBe(true);
    });

    it("refuses bad input before any request", async () => {
      const { result, requests } = await sent(async () => [
        await t.say(`/behaviors ${addresses(501).join(" ")}`),
        await t.say(`/behaviors ${t.sim.fixtures.wallet} 0x1234`),
        await t.say("/behaviors"),
      ]);
      expect(result[0]?.text).toContain("at most 500");
      expect(result[1]?.text).toContain('"0x1234" is not a valid wallet address');
      expect(result[2]?.text).toContain("Missing wallets");
      expect(requests).toHaveLength(0);
    });
  });

  describe("/wallet", () => {
    it("pages a wallet's NFTs with their spam marks", async () => {
      const f = t.sim.fixtures;
      const { nfts } = await t.api.wallets.nfts(f.wallet);
      const first = await t.say(`/wallet ${f.wallet}`);
      expect(first.title).toBe(`NFTs of ${fullAddress(f.wallet)}`);
      const pages = Math.ceil(nfts.length / 10);
      const spam = nfts.filter((n) => n.spam).length;
      expect(first.footer).toBe(`Page 1 of ${pages} · ${nfts.length} NFTs · ${spam} flagged spam`);
      expect(rows(first).map((row) => row[5] === "SPAM")).toEqual(
        nfts.slice(0, 10).map((n) => n.spam),
      );
      const second = await t.press(button(first, "Next"));
      expect(second.footer).toMatch(/^Page 2 of /);
      expect(second.replaceOriginal).toBe(true);
      expect(rows(second)).not.toEqual(rows(first));
      expect(rows(second)[0]?.[2]).toBe(collectionName(nfts[10]?.nft.collection?.name));
    });

    it("excludes or isolates spam", async () => {
      const f = t.sim.fixtures;
      const { result: only, requests } = await sent(() => t.say(`/wallet ${f.wallet} only`));
      expect(requests[0]?.query.spam).toBe("SPAM_FILTER_ONLY");
      expect(rows(only).length).toBeGreaterThan(0);
      expect(rows(only).every((row) => row[5] === "SPAM")).toBe(true);
      const hidden = await t.say(`/wallet ${f.wallet} spam:exclude`);
      expect(rows(hidden).some((row) => row[5] === "SPAM")).toBe(false);
    });

    it("lists one collection's NFTs, with huge token ids shortened", async () => {
      const f = t.sim.fixtures;
      const { result: reply, requests } = await sent(() =>
        t.say(`/wallet ${f.walletEns} collection:${f.collection}`),
      );
      const { tokens } = await t.api.foundational.nftsByOwner(f.walletEns, {
        contractAddress: f.collection,
        limit: 500,
      });
      expect(requests[0]?.query.contractAddress?.toLowerCase()).toBe(f.collection);
      expect(rows(reply).map((row) => row[2])).toEqual(tokens.slice(0, 10).map((x) => x.tokenId));

      const { owners } = await t.api.foundational.tokenOwners(
        f.hugeTokenId.contract,
        f.hugeTokenId.tokenId,
      );
      const holder = owners[0]?.address ?? "";
      const huge = await t.say(`/wallet ${holder} collection:${f.hugeTokenId.contract}`);
      const ids = rows(huge).map((row) => row[2]);
      expect(ids).toContain(shortTokenId(f.hugeTokenId.tokenId));
      expect(t.text(huge)).not.toContain(f.hugeTokenId.tokenId);
    });

    it("passes a markup collection name through as plain text", async () => {
      const f = t.sim.fixtures;
      const { owner } = await t.api.collections.ownersList(f.markupCollection, { limit: 1 });
      await t.say(`/wallet ${owner[0]?.address} exclude`);
      const reply = await t.say(`/owners ${f.markupCollection}`);
      expect(reply.title).toBe(
        "Owners of @everyone <b>x</b> **bold** [link](https://evil.example) 🚨",
      );
    });

    it("says so when there is nothing, and refuses bad input", async () => {
      const f = t.sim.fixtures;
      expect((await t.say(`/wallet ${f.unknownAddress}`)).text).toBe("This wallet holds no NFTs.");
      expect((await t.say("/wallet no-such-name-xyz.eth")).text).toContain(
        "No data for wallet no-such-name-xyz.eth",
      );
      expect((await t.say(`/wallet ${f.wallet} maybe`)).text).toContain(
        "use one of all, exclude, only",
      );
      expect((await t.say("/wallet 0xnothex")).text).toContain("not a valid wallet address");
      expect((await t.say(`/wallet ${f.wallet} only ${f.collection}`)).text).toContain(
        "leave it out when you name a collection",
      );
    });
  });
});
