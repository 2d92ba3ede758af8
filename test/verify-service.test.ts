import { getAddress, hashMessage, serializeErc6492Signature } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { createSiweMessage, parseSiweMessage } from "viem/siwe";
import { afterEach, describe, expect, it } from "vitest";
import { parseChains } from "../src/chains.ts";
import { silentLogger } from "../src/log.ts";
import type { Store } from "../src/store/types.ts";
import { createVerifyService, LINK_TTL_MS, tokenHash } from "../src/verify/service.ts";
import type { VerifiedNotice, VerifyOrigin, WalletMovedNotice } from "../src/verify/types.ts";
import { FakeChainNode } from "./fakes/chain-rpc.ts";
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
const BOB: VerifyOrigin = { platform: "telegram", userId: "bob", chatId: "42" };

const refusalOf = (result: { ok: boolean; refusal?: { code: string } }) =>
  result.ok ? "ok" : result.refusal?.code;

/** The token at the end of a link's URL. */
const tokenOf = (url: string) => url.slice(url.lastIndexOf("/") + 1);

for (const backend of backends) {
  describe.runIf(backend.name === "sqlite" || (await postgresAvailable()))(
    `verify service: ${backend.name}`,
    () => {
      const fresh = useStore(backend.open);

      async function setup(chainsSetting = "ethereum,base", store?: Store) {
        store ??= await fresh();
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
            botName: "the bot",
            place: { platform: "discord" },
            chainsServed: ["Ethereum", "Base"],
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
            kind: "eoa",
            chains: ["ethereum"],
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

      it("a hostile bot or server name cannot add a line to the signed message", async () => {
        const { service } = await setup();
        const account = privateKeyToAccount(generatePrivateKey());
        const hostile = `Evil\nURI: https://evil.example/verify\u0000<b>${"x".repeat(200)}`;
        const made = await service.createLink(
          { ...ALICE, botName: hostile, placeName: "<script>\u0000" },
          "ethereum",
        );
        if (!made.ok) throw new Error(made.refusal.message);
        const token = tokenOf(made.link.url);
        const message = await messageFor(service, token, account.address);
        const parsed = parseSiweMessage(message);
        // The site and its URI are the bot's own; the name is one line of plain words, cut.
        expect(parsed.uri).toBe(`${BASE}/verify`);
        expect(parsed.domain).toBe("bot.example");
        expect(parsed.statement).toMatch(
          /^Prove to Evil URI httpsevil.exampleverifybx+ that you own/,
        );
        expect(parsed.statement).not.toMatch(/[\n\u0000<>:/]/);
        expect(parsed.statement?.length).toBeLessThan(200);
        // Cut at 40 characters, never inside a character written with two UTF-16 units.
        const astral = await service.createLink(
          { ...ALICE, botName: `${"a".repeat(39)}𝐀𝐁` },
          "ethereum",
        );
        if (!astral.ok) throw new Error(astral.refusal.message);
        const signed = await messageFor(service, tokenOf(astral.link.url), account.address);
        expect(signed).toContain(`Prove to ${"a".repeat(39)}𝐀 that`);
        expect(signed).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/);
        // The page gets the names without control characters (PostgreSQL refuses a NUL in text)
        // and cut; it shows them as text (verify-page.test.ts).
        const opened = await service.open(token);
        const shown = opened.ok ? opened.state : undefined;
        expect(shown?.botName).toMatch(/^Evil ?URI: https:\/\/evil\.example\/verify<b>x+$/);
        expect(shown?.botName.length).toBeLessThanOrEqual(200);
        expect(shown?.place.name).toBe("<script>");
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

      /** A message for the link's pending nonce with one field changed, as a forger would. */
      function forged(message: string, change: Partial<Parameters<typeof createSiweMessage>[0]>) {
        const fields = parseSiweMessage(message) as Parameters<typeof createSiweMessage>[0];
        return createSiweMessage({ ...fields, ...change });
      }

      it("refuses a message for another site or chain, a forged address, a key that is not the address, and garbage: none of them uses the link", async () => {
        const { store, service } = await setup();
        const account = privateKeyToAccount(generatePrivateKey());
        const stranger = privateKeyToAccount(generatePrivateKey());
        const { token } = await linkFor(service);
        const message = await messageFor(service, token, account.address);
        const signed = async (text: string) => account.signMessage({ message: text });

        const otherSite = forged(message, { domain: "evil.example" });
        expect(refusalOf(await service.prove(token, otherSite, await signed(otherSite)))).toBe(
          "wrong_domain",
        );
        const otherUri = forged(message, { uri: "https://evil.example/verify" });
        expect(refusalOf(await service.prove(token, otherUri, await signed(otherUri)))).toBe(
          "wrong_domain",
        );
        const otherChain = forged(message, { chainId: 8453 });
        const wrongChain = await service.prove(token, otherChain, await signed(otherChain));
        expect(refusalOf(wrongChain)).toBe("wrong_chain");
        expect(wrongChain.ok ? "" : wrongChain.refusal.message).toContain("Ethereum");
        // The stranger signs the message made for the account: not the address's key.
        const byStranger = await service.prove(
          token,
          message,
          await stranger.signMessage({ message }),
        );
        expect(refusalOf(byStranger)).toBe("bad_signature");
        // The stranger puts their own address in the account's challenge.
        const theirs = forged(message, { address: stranger.address });
        expect(
          refusalOf(
            await service.prove(token, theirs, await stranger.signMessage({ message: theirs })),
          ),
        ).toBe("bad_message");
        expect(refusalOf(await service.prove(token, "hello", await signed("hello")))).toBe(
          "bad_message",
        );
        expect(refusalOf(await service.prove(token, message, "0xzz"))).toBe("bad_signature");
        expect(refusalOf(await service.prove(token, "x".repeat(50_000), "0x00"))).toBe(
          "bad_message",
        );
        expect(await store.wallets.list("discord", "alice")).toEqual([]);
        // The pending nonce survived all that: the real proof still works.
        expect(refusalOf(await service.prove(token, message, await signed(message)))).toBe("ok");
      });

      /**
       * The message the bot issued, changed the way a page (or a script holding the link) could,
       * and signed by the wallet's own key: only the issued bytes prove anything.
       */
      const CHANGES: {
        name: string;
        change: (message: string, now: number) => string;
        code: string;
        words: RegExp;
      }[] = [
        {
          name: "an Issued At in the future",
          change: (message, now) => forged(message, { issuedAt: new Date(now + 3_600_000) }),
          code: "bad_message",
          words: /Issued At.*changed/,
        },
        {
          name: "no Expiration Time",
          change: (message) => {
            const { expirationTime: _dropped, ...fields } = parseSiweMessage(message) as Parameters<
              typeof createSiweMessage
            >[0];
            return createSiweMessage(fields);
          },
          code: "bad_message",
          words: /Expiration Time.*removed/,
        },
        {
          name: "another statement",
          change: (message) => forged(message, { statement: "I give the bot all my NFTs." }),
          code: "bad_message",
          words: /statement.*changed/,
        },
        {
          // "bot.example wants you to sign in…": the domain line without its scheme.
          name: "the domain line without its scheme",
          change: (message) => message.replace(/^https:\/\//, ""),
          code: "wrong_domain",
          words: /another site/,
        },
        {
          name: "another URI on the same site",
          change: (message) => forged(message, { uri: "https://bot.example/verify/elsewhere" }),
          code: "wrong_domain",
          words: /another site/,
        },
        {
          name: "a trailing line break",
          change: (message) => `${message}\n`,
          code: "bad_message",
          words: /not the message the bot asked.*spacing/,
        },
        {
          name: "a doubled space",
          change: (message) => message.replace("URI: ", "URI:  "),
          code: "bad_message",
          words: /not the message the bot asked.*spacing/,
        },
        {
          name: "Windows line breaks",
          change: (message) => message.replace(/\n/g, "\r\n"),
          code: "bad_message",
          words: /not the message the bot asked.*spacing/,
        },
      ];

      for (const { name, change, code, words } of CHANGES)
        it(`refuses the issued message with ${name}, in words, and keeps the link open`, async () => {
          const { store, service, now } = await setup();
          const account = privateKeyToAccount(generatePrivateKey());
          const { token } = await linkFor(service);
          const message = await messageFor(service, token, account.address);
          const changed = change(message, now());
          expect(changed).not.toBe(message);
          const answer = await service.prove(
            token,
            changed,
            await account.signMessage({ message: changed }),
          );
          expect(answer).toEqual({
            ok: false,
            refusal: { code, message: expect.stringMatching(words) },
          });
          expect(await store.wallets.list("discord", "alice")).toEqual([]);
          // The issued message itself still proves.
          expect(
            refusalOf(await service.prove(token, message, await account.signMessage({ message }))),
          ).toBe("ok");
        });

      it("refuses a replayed message: one replaced by a newer challenge, or one proved on another link", async () => {
        const { store, service } = await setup();
        const account = privateKeyToAccount(generatePrivateKey());
        const first = await linkFor(service);
        const older = await messageFor(service, first.token, account.address);
        const newer = await messageFor(service, first.token, account.address);
        expect(
          refusalOf(
            await service.prove(first.token, older, await account.signMessage({ message: older })),
          ),
        ).toBe("stale_nonce");
        const newerSignature = await account.signMessage({ message: newer });
        expect(refusalOf(await service.prove(first.token, newer, newerSignature))).toBe("ok");
        // A second link of the same person: the proved message and signature do not open it.
        const second = await linkFor(service);
        expect(refusalOf(await service.prove(second.token, newer, newerSignature))).toBe(
          "stale_nonce",
        );
        await messageFor(service, second.token, account.address);
        expect(refusalOf(await service.prove(second.token, newer, newerSignature))).toBe(
          "stale_nonce",
        );
        expect(await store.wallets.list("discord", "alice")).toHaveLength(1);
      });

      it("keeps a wallet for the link's person only: another person's link proves nothing for them", async () => {
        const { store, service, notices } = await setup();
        const account = privateKeyToAccount(generatePrivateKey());
        const alices = await linkFor(service, ALICE);
        await linkFor(service, BOB, "base");
        const message = await messageFor(service, alices.token, account.address);
        expect(message).toContain("Discord account");
        await service.prove(alices.token, message, await account.signMessage({ message }));
        expect(await store.wallets.list("telegram", "bob")).toEqual([]);
        expect(await store.wallets.list("discord", "alice")).toHaveLength(1);
        await expect.poll(() => notices.map((notice) => notice.origin.userId)).toEqual(["alice"]);
      });

      it("another account of the platform proving a wallet moves it: the former holder is named once, other platforms keep theirs", async () => {
        const store = await fresh();
        const moved: WalletMovedNotice[] = [];
        const service = createVerifyService({
          store,
          chains: parseChains("ethereum", undefined),
          baseUrl: () => BASE,
          logger: silentLogger(),
          moved: async (notice) => {
            moved.push(notice);
          },
        });
        const account = privateKeyToAccount(generatePrivateKey());
        const prove = async (origin: VerifyOrigin) => {
          const { token } = await linkFor(service, origin);
          const message = await messageFor(service, token, account.address);
          return refusalOf(
            await service.prove(token, message, await account.signMessage({ message })),
          );
        };
        expect(await prove(ALICE)).toBe("ok");
        expect(await prove({ ...BOB, userId: "alice-on-telegram" })).toBe("ok");
        expect(await prove(ALICE)).toBe("ok");
        expect(moved).toEqual([]);
        expect(await prove({ ...ALICE, userId: "mallory" })).toBe("ok");
        await expect
          .poll(() => moved)
          .toEqual([
            { platform: "discord", userId: "alice", address: account.address, chain: "ethereum" },
          ]);
        expect(await store.wallets.list("discord", "alice")).toEqual([]);
        expect(await store.wallets.list("discord", "mallory")).toHaveLength(1);
        expect(await store.wallets.list("telegram", "alice-on-telegram")).toHaveLength(1);
      });

      it("a store that fails is 'try again' in plain words, never a crash", async () => {
        const { store } = await setup();
        const failing = {
          ...store,
          verifyLinks: {
            ...store.verifyLinks,
            find: async () => {
              throw new Error("connection terminated");
            },
          },
        };
        const service = createVerifyService({
          store: failing,
          chains: parseChains("ethereum", undefined),
          baseUrl: () => BASE,
          logger: silentLogger(),
        });
        const answer = await service.open("A".repeat(43));
        expect(answer).toEqual({
          ok: false,
          refusal: {
            code: "unavailable",
            message: "The bot cannot check this right now. Try again in a minute.",
          },
        });
      });

      it("refuses a chain the bot does not serve", async () => {
        const { service } = await setup();
        expect(refusalOf(await service.createLink(ALICE, "solana"))).toBe("wrong_chain");
      });

      it("refuses an 11th wallet before anything is signed, and takes a wallet already kept again", async () => {
        const { store, service, now } = await setup();
        for (let i = 0; i < 10; i++)
          await store.wallets.addProved({
            platform: "discord",
            userId: "alice",
            address: `0x${String(i).padStart(40, "0")}`,
            chain: "ethereum",
            label: `w${i}`,
            message: "m",
            signature: "0x",
            provedAt: now() - 1000 + i,
          });
        const account = privateKeyToAccount(generatePrivateKey());
        const { token } = await linkFor(service);
        const refused = await service.challenge(token, account.address);
        expect(refusalOf(refused)).toBe("too_many_wallets");
        expect(refused.ok ? "" : refused.refusal.message).toContain("/unlink");
        // A wallet among the 10: proving it again replaces its proof.
        await store.wallets.remove("discord", "alice", `0x${"0".repeat(40)}`);
        await store.wallets.addProved({
          platform: "discord",
          userId: "alice",
          address: account.address.toLowerCase(),
          chain: "base",
          label: "old",
          message: "m",
          signature: "0x",
          provedAt: 1,
        });
        const message = await messageFor(service, token, account.address);
        expect(
          refusalOf(await service.prove(token, message, await account.signMessage({ message }))),
        ).toBe("ok");
        const wallets = await store.wallets.list("discord", "alice");
        expect(wallets).toHaveLength(10);
        expect(wallets[0]).toMatchObject({
          address: account.address.toLowerCase(),
          chain: "ethereum",
          provedAt: now(),
        });
      });

      it("limits links per person, challenges per link and per address, and proofs per link", async () => {
        const { service } = await setup();
        const made = [];
        for (let i = 0; i < 6; i++)
          made.push(refusalOf(await service.createLink(ALICE, "ethereum")));
        expect(made).toEqual(["ok", "ok", "ok", "ok", "ok", "rate_limited"]);
        // Another person is not held back by Alice's tries.
        expect(refusalOf(await service.createLink(BOB, "ethereum"))).toBe("ok");

        const account = privateKeyToAccount(generatePrivateKey());
        const { token } = await linkFor(service, BOB);
        const asked = [];
        for (let i = 0; i < 11; i++)
          asked.push(refusalOf(await service.challenge(token, account.address)));
        expect(asked.slice(0, 10).every((code) => code === "ok")).toBe(true);
        const over = await service.challenge(token, account.address);
        expect(refusalOf(over)).toBe("rate_limited");
        expect(over.ok ? "" : over.refusal.message).toMatch(/wait .*minute/);

        // The address's own limit holds across links (a script opening links for one address).
        const other = await linkFor(service, { ...BOB, userId: "carol" });
        expect(refusalOf(await service.challenge(other.token, account.address))).toBe(
          "rate_limited",
        );

        const proofs = [];
        for (let i = 0; i < 11; i++)
          proofs.push(refusalOf(await service.prove(other.token, "garbage", "0x00")));
        expect(proofs.at(-1)).toBe("rate_limited");
      });

      it("a contract wallet's signature without an RPC URL: says which setting it needs", async () => {
        const { service } = await setup();
        const owner = privateKeyToAccount(generatePrivateKey());
        const smart = "0x1111111111111111111111111111111111111111";
        const { token } = await linkFor(service);
        const message = await messageFor(service, token, smart);
        // Not deployed yet (ERC-6492): the signature is wrapped with its factory's call.
        const wrapped = serializeErc6492Signature({
          address: "0x2222222222222222222222222222222222222222",
          data: "0xdeadbeef",
          signature: await owner.sign({ hash: hashMessage(message) }),
        });
        const refused = await service.prove(token, message, wrapped);
        expect(refusalOf(refused)).toBe("contract_wallet_needs_rpc");
        expect(refused.ok ? "" : refused.refusal.message).toMatch(/rpcUrl for ethereum in CHAINS/);
        // A deployed one's plain signature (by its owner's key) cannot be told from a stranger's.
        const plain = await service.prove(
          token,
          message,
          await owner.sign({ hash: hashMessage(message) }),
        );
        expect(refusalOf(plain)).toBe("bad_signature");
        expect(plain.ok ? "" : plain.refusal.message).toContain("smart-contract wallet");
      });
    },
  );
}

describe("verify service: contract wallets, checked over the chain's RPC", () => {
  const fresh = useStore((backends[0] as (typeof backends)[0]).open);
  const nodes: FakeChainNode[] = [];
  afterEach(async () => {
    for (const node of nodes.splice(0)) await node.close();
  });

  async function withNode() {
    const owner = privateKeyToAccount(generatePrivateKey());
    const wallet = "0x3333333333333333333333333333333333333333";
    const node = await new FakeChainNode(1, wallet, owner.address).start();
    nodes.push(node);
    const store = await fresh();
    const notices: VerifiedNotice[] = [];
    const service = createVerifyService({
      store,
      chains: parseChains(JSON.stringify([{ id: "ethereum", rpcUrl: node.url }]), undefined),
      baseUrl: () => BASE,
      logger: silentLogger(),
      notify: async (notice) => {
        notices.push(notice);
      },
    });
    const made = await service.createLink(ALICE, "ethereum");
    if (!made.ok) throw new Error(made.refusal.message);
    const token = tokenOf(made.link.url);
    const asked = await service.challenge(token, wallet);
    if (!asked.ok) throw new Error(asked.refusal.message);
    return {
      owner,
      wallet,
      node,
      store,
      service,
      token,
      message: asked.challenge.message,
      notices,
    };
  }

  it("proves a deployed contract wallet (ERC-1271): the node's isValidSignature says yes", async () => {
    const { owner, wallet, node, store, service, token, message, notices } = await withNode();
    const signature = await owner.sign({ hash: hashMessage(message) });
    const proved = await service.prove(token, message, signature);
    expect(proved).toEqual({ ok: true, address: getAddress(wallet), chain: "ethereum" });
    expect(node.asked).toEqual([hashMessage(message)]);
    expect((await store.wallets.list("discord", "alice"))[0]?.address).toBe(wallet);
    await expect.poll(() => notices[0]?.kind).toBe("contract");
  });

  it("proves a contract wallet not deployed yet (ERC-6492)", async () => {
    const { owner, node, service, token, message } = await withNode();
    const signature = serializeErc6492Signature({
      address: "0x2222222222222222222222222222222222222222",
      data: "0xdeadbeef",
      signature: await owner.sign({ hash: hashMessage(message) }),
    });
    expect(refusalOf(await service.prove(token, message, signature))).toBe("ok");
    expect(node.asked).toEqual([hashMessage(message)]);
  });

  it("refuses what the wallet's isValidSignature refuses, and a node that is down is 'try again', using nothing up", async () => {
    const { owner, node, store, service, token, message } = await withNode();
    const stranger = privateKeyToAccount(generatePrivateKey());
    const byStranger = await service.prove(
      token,
      message,
      await stranger.sign({ hash: hashMessage(message) }),
    );
    expect(refusalOf(byStranger)).toBe("bad_signature");
    expect(node.asked).toHaveLength(1);
    node.down();
    const signature = await owner.sign({ hash: hashMessage(message) });
    const unavailable = await service.prove(token, message, signature);
    expect(refusalOf(unavailable)).toBe("unavailable");
    expect(unavailable.ok ? "" : unavailable.refusal.message).not.toContain("127.0.0.1");
    expect(await store.wallets.list("discord", "alice")).toEqual([]);
    expect((await store.verifyLinks.find(tokenHash(token)))?.usedAt).toBeUndefined();
  });

  it("a node over its quota (a JSON-RPC error that is no revert) is 'try again' too", async () => {
    const { owner, node, service, token, message } = await withNode();
    node.overQuota();
    const answer = await service.prove(
      token,
      message,
      await owner.sign({ hash: hashMessage(message) }),
    );
    expect(refusalOf(answer)).toBe("unavailable");
  });

  it("checks an EOA without asking the node", async () => {
    const { node, service, token } = await withNode();
    const account = privateKeyToAccount(generatePrivateKey());
    const asked = await service.challenge(token, account.address);
    if (!asked.ok) throw new Error(asked.refusal.message);
    const { message } = asked.challenge;
    expect(
      refusalOf(await service.prove(token, message, await account.signMessage({ message }))),
    ).toBe("ok");
    expect(node.methods).toEqual([]);
  });
});
