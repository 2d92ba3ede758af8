/**
 * Cold wallets by delegation (issue 37): delegate.xyz v2's registry read through a fake JSON-RPC
 * node on loopback (test/fakes/delegate-registry.ts, its own JSON ABI), the real verification
 * service and gate service on SQLite, and the simulator's holdings over HTTP. The cold wallet is
 * the simulator's demo wallet (it holds a Bored Ape); the hot wallets hold nothing.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Address } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { allCommands } from "../commands/index.ts";
import { parseChains } from "../src/chains.ts";
import { ApiGateEvaluator } from "../src/gates/evaluate.ts";
import { GateService } from "../src/gates/service.ts";
import { gateStoreOf } from "../src/gates/store.ts";
import type { GateMembership, GateTarget, HoldsCriterion } from "../src/gates/types.ts";
import { withDelegated } from "../src/insights/delegated.ts";
import { silentLogger } from "../src/log.ts";
import { renderConsole } from "../src/render/console.ts";
import { DEMO_WALLET } from "../src/simulator/index.ts";
import { openSqliteStore } from "../src/store/sqlite/index.ts";
import type { Store } from "../src/store/types.ts";
import { DELEGATE_REGISTRY, registryOn } from "../src/verify/delegation.ts";
import { DELEGATIONS_FRESH_MS } from "../src/verify/holdings.ts";
import { createVerifyService } from "../src/verify/service.ts";
import type { VerifiedNotice } from "../src/verify/types.ts";
import { DelegationType, FakeRegistryNode } from "./fakes/delegate-registry.ts";
import { type ClientSetup, runtimeWith, startClient, testInvocation } from "./helpers.ts";

const HOUR = 3_600_000;
const COLD = DEMO_WALLET.address as Address;
const OTHER_CONTRACT = "0x1111111111111111111111111111111111111111" as Address;
const target: GateTarget = { platform: "discord", guildId: "g1", roleId: "r1", roleName: "Apes" };

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

let client: ClientSetup;
let apes: HoldsCriterion;

beforeAll(async () => {
  client = await startClient();
  const { nfts } = await client.api.wallets.nfts(COLD.toLowerCase());
  const first = nfts[0]?.nft;
  if (!first) throw new Error("the demo wallet holds nothing");
  apes = {
    kind: "holds",
    chain: "ethereum",
    contract: first.contractAddress.toLowerCase(),
    name: "Bored Ape Yacht Club",
    min: 1,
  };
  return () => client.close();
});

async function world() {
  const dir = mkdtempSync(join(tmpdir(), "delegation-"));
  const store: Store = openSqliteStore(dir);
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  cleanups.push(() => store.close());
  const node = await new FakeRegistryNode(1, DELEGATE_REGISTRY).start();
  cleanups.push(() => node.close());
  const clock = { now: Date.parse("2026-11-28T12:00:00Z") };
  const notices: VerifiedNotice[] = [];
  let told: () => void = () => {};
  const verify = createVerifyService({
    store,
    chains: parseChains(JSON.stringify([{ id: "ethereum", rpcUrl: node.url }]), undefined),
    baseUrl: () => "https://bot.example",
    now: () => clock.now,
    logger: silentLogger(),
    notify: async (notice) => {
      notices.push(notice);
      told();
    },
  });
  const calls: string[] = [];
  const membership: GateMembership = {
    platform: "discord",
    check: async (t) => ({ ok: true, target: t }),
    grant: async (_t, userId) => {
      calls.push(`grant ${userId}`);
      return { ok: true };
    },
    revoke: async (_t, userId) => {
      calls.push(`revoke ${userId}`);
      return { ok: true };
    },
    decline: async () => ({ ok: true }),
    verifyLink: () => "https://example.invalid",
  };
  const gates = new GateService({
    gates: gateStoreOf(store),
    wallets: store.wallets,
    holdings: (platform, userId, signal) =>
      verify.holdings(platform, userId, { refresh: true, signal }),
    evaluator: new ApiGateEvaluator({ apis: new Map([["ethereum", client.api]]) }),
    memberships: [membership],
    logger: silentLogger(),
    settings: { graceHours: 24 },
    now: () => clock.now,
  });
  const added = await gates.add({
    platform: "discord",
    chatId: "g1",
    target,
    criteria: [apes],
    createdBy: "m1",
  });
  if (!added.ok) throw new Error(added.reason);
  const gate = added.gate;
  /** A new hot wallet (it holds nothing) kept as proved by `userId`'s signature. */
  const hot = async (userId: string) => {
    const account = privateKeyToAccount(generatePrivateKey());
    await store.wallets.addProved({
      platform: "discord",
      userId,
      address: account.address.toLowerCase(),
      chain: "ethereum",
      label: account.address,
      message: "m",
      signature: "0x",
      provedAt: clock.now,
      kind: "eoa",
    });
    return account.address;
  };
  const status = async (userId: string) =>
    (await gateStoreOf(store).member(gate.id, userId))?.status;
  const decide = async (userId: string) => {
    clock.now += DELEGATIONS_FRESH_MS;
    await gates.onProved("discord", userId, { guildId: "g1" });
  };
  const waitForNotice = () =>
    new Promise<void>((resolve) => {
      told = resolve;
    });
  return {
    store,
    node,
    clock,
    verify,
    gates,
    gate,
    calls,
    hot,
    status,
    decide,
    notices,
    waitForNotice,
  };
}

describe("delegations (delegate.xyz v2) through the fake registry node", () => {
  it("uses the registry's address, and the ZKsync family's own", () => {
    expect(registryOn(1)).toBe("0x00000000000000447e69651d841bd8d104bed493");
    expect(registryOn(8453)).toBe("0x00000000000000447e69651d841bd8d104bed493");
    expect(registryOn(324)).toBe("0x0000000059A24EB229eED07Ac44229DB56C5d797");
  });

  it("a delegation of all rights counts the cold wallet: the gate passes", async () => {
    const w = await world();
    const hot = await w.hot("alice");
    w.node.delegate({ type: DelegationType.ALL, from: COLD, to: hot });
    await w.decide("alice");
    expect(w.calls).toEqual(["grant alice"]);
    expect(w.node.asked).toEqual([hot.toLowerCase()]);
    const held = await w.verify.holdings("discord", "alice");
    expect(held.wallets.map((x) => [x.address, x.how, x.via])).toContainEqual([
      COLD.toLowerCase(),
      "delegation",
      hot.toLowerCase(),
    ]);
  });

  it("a delegation for the gated contract counts; one for another contract does not", async () => {
    const w = await world();
    const forApes = await w.hot("alice");
    w.node.delegate({
      type: DelegationType.CONTRACT,
      from: COLD,
      to: forApes,
      contract: apes.contract as Address,
    });
    const forOther = await w.hot("bob");
    w.node.delegate({
      type: DelegationType.CONTRACT,
      from: COLD,
      to: forOther,
      contract: OTHER_CONTRACT,
    });
    await w.decide("alice");
    await w.decide("bob");
    expect(w.calls).toEqual(["grant alice"]);
    expect(await w.status("bob")).toBeUndefined();
  });

  it("token-level and sub-right delegations are not counted", async () => {
    const w = await world();
    const hot = await w.hot("alice");
    w.node.delegate({
      type: DelegationType.ERC721,
      from: COLD,
      to: hot,
      contract: apes.contract as Address,
      tokenId: 1n,
    });
    w.node.delegate({
      type: DelegationType.ALL,
      from: COLD,
      to: hot,
      rights: `0x${"ab".repeat(32)}`,
    });
    await w.decide("alice");
    expect(w.calls).toEqual([]);
    expect((await w.verify.holdings("discord", "alice")).delegations).toEqual([]);
  });

  it("a revoked delegation ends like a sale: grace first, then the role goes", async () => {
    const w = await world();
    const hot = await w.hot("alice");
    w.node.delegate({ type: DelegationType.ALL, from: COLD, to: hot });
    await w.decide("alice");
    expect(await w.status("alice")).toBe("granted");
    w.node.revoke(COLD, hot);
    await w.decide("alice");
    expect(await w.status("alice")).toBe("grace");
    expect(w.calls).toEqual(["grant alice"]);
    w.clock.now += 24 * HOUR + 1;
    await w.decide("alice");
    expect(w.calls).toEqual(["grant alice", "revoke alice"]);
  });

  it("a node that is down makes the verdict unknown, never a fail: nothing is taken", async () => {
    const w = await world();
    const hot = await w.hot("alice");
    w.node.delegate({ type: DelegationType.ALL, from: COLD, to: hot });
    await w.decide("alice");
    expect(await w.status("alice")).toBe("granted");
    // The delegation is revoked while the node is down: the bot cannot know, so it keeps the role.
    w.node.revoke(COLD, hot);
    w.node.down();
    await w.decide("alice");
    expect(await w.status("alice")).toBe("granted");
    const verdict = await w.gates.test(
      [apes],
      await w.verify.holdings("discord", "alice", { refresh: true }),
    );
    expect(verdict.outcome).toBe("pass");
    // A person whose only way to pass is a delegation, with the node down: unknown, not admitted.
    const bobHot = await w.hot("bob");
    w.node.delegate({ type: DelegationType.ALL, from: COLD, to: bobHot });
    await w.decide("bob");
    expect(await w.status("bob")).toBeUndefined();
    const bob = await w.verify.holdings("discord", "bob", { refresh: true });
    expect([...bob.unknownOn]).toEqual(["ethereum"]);
    const unknown = await w.gates.test([apes], bob);
    expect(unknown.outcome).toBe("unknown");
    expect(unknown.results[0]?.why).toMatch(/could not read delegations on Ethereum/);
    w.node.up();
    w.clock.now += DELEGATIONS_FRESH_MS;
    expect(
      (await w.gates.test([apes], await w.verify.holdings("discord", "bob", { refresh: true })))
        .outcome,
    ).toBe("fail");
  });

  it("a cold wallet counts for one account of a platform: the first to be delegated it", async () => {
    const w = await world();
    const first = await w.hot("alice");
    w.node.delegate({ type: DelegationType.ALL, from: COLD, to: first });
    await w.decide("alice");
    const second = await w.hot("mallory");
    w.node.delegate({ type: DelegationType.ALL, from: COLD, to: second });
    await w.decide("mallory");
    expect(w.calls).toEqual(["grant alice"]);
    const held = await w.verify.holdings("discord", "mallory");
    expect(held.delegations).toMatchObject([
      { cold: COLD.toLowerCase(), counts: false, heldElsewhere: "earlier" },
    ]);
  });

  it("after a proof the chat hears which cold wallets now count, and /wallets shows them", async () => {
    const w = await world();
    const account = privateKeyToAccount(generatePrivateKey());
    w.node.delegate({ type: DelegationType.ALL, from: COLD, to: account.address });
    const made = await w.verify.createLink(
      { platform: "discord", userId: "alice", chatId: "c1" },
      "ethereum",
    );
    if (!made.ok) throw new Error(made.refusal.message);
    const token = made.link.url.slice(made.link.url.lastIndexOf("/") + 1);
    const asked = await w.verify.challenge(token, account.address);
    if (!asked.ok) throw new Error(asked.refusal.message);
    const signature = await account.signMessage({ message: asked.challenge.message });
    const notice = w.waitForNotice();
    const proved = await w.verify.prove(token, asked.challenge.message, signature);
    expect(proved.ok).toBe(true);
    await notice;
    expect(w.notices[0]?.delegated).toEqual([
      { cold: COLD.toLowerCase(), chain: "ethereum", contract: "" },
    ]);
    const runtime = runtimeWith(client, allCommands(), {
      store: w.store,
      services: { verify: w.verify },
      now: () => new Date(w.clock.now),
    });
    const answer = await runtime.runText(
      testInvocation({ platform: "discord", user: { id: "alice", name: "Alice" } }),
      "wallets",
      "",
    );
    const reply = renderConsole(answer).text;
    expect(reply).toContain(`${COLD} via delegation to ${account.address.slice(0, 6)}`);
    expect(reply).toContain("proved by signature on Ethereum");
    expect(reply).toContain("holds on every chain the bot serves");
    // A spam report may be made for the cold wallet: it is the person's by delegation.
    const alice = testInvocation({ platform: "discord", user: { id: "alice", name: "Alice" } });
    const report = `spam 0xBC4CA0EdA7647A8aB7C2061c2E118A18a936f13D 1 ${COLD}`;
    const prompt = await runtime.runText(alice, "report", report);
    expect(prompt.text).toContain(`Reported as spam by Alice`);
    expect(prompt.text).toContain(`for wallet ${COLD}`);
    // Not for another account, whose wallets it is not.
    const bob = testInvocation({ platform: "discord", user: { id: "bob", name: "Bob" } });
    const refused = renderConsole(await runtime.runText(bob, "report", report)).text;
    expect(refused).toMatch(/is not one of yours/);
  });

  it("a wallet proved before its kind was kept is told from its signature, once", async () => {
    const w = await world();
    const account = privateKeyToAccount(generatePrivateKey());
    const message = "an old proof";
    await w.store.wallets.addProved({
      platform: "discord",
      userId: "old",
      address: account.address.toLowerCase(),
      chain: "ethereum",
      label: account.address,
      message,
      signature: await account.signMessage({ message }),
      provedAt: w.clock.now,
    });
    await w.store.wallets.addProved({
      platform: "discord",
      userId: "old",
      address: "0x2222222222222222222222222222222222222222",
      chain: "base",
      label: "safe",
      message,
      signature: `0x${"12".repeat(65)}`,
      provedAt: w.clock.now,
    });
    const held = await w.verify.holdings("discord", "old");
    const how = new Map(held.wallets.map((x) => [x.address, [x.how, x.chains]]));
    expect(how).toEqual(
      new Map<string, unknown>([
        ["0x2222222222222222222222222222222222222222", ["contract", ["base"]]],
        [account.address.toLowerCase(), ["signature", "all"]],
      ]),
    );
    expect((await w.store.wallets.list("discord", "old")).map((x) => x.kind).sort()).toEqual([
      "contract",
      "eoa",
    ]);
  });

  it("insights count a cold wallet delegated all rights on the chain asked, once", () => {
    const wallets = new Map([["alice", [{ address: "0xhot", provedAt: 5 }]]]);
    const delegation = {
      hot: "0xhot",
      cold: "0xcold",
      chain: "ethereum",
      firstSeen: 1,
      counts: true,
    };
    withDelegated(
      wallets,
      new Map([
        [
          "alice",
          [
            { ...delegation, contract: "" },
            { ...delegation, cold: "0xforone", contract: "0xapes" },
            { ...delegation, cold: "0xbase", chain: "base", contract: "" },
            { ...delegation, cold: "0xother", contract: "", counts: false },
          ],
        ],
      ]),
      "ethereum",
    );
    expect(wallets.get("alice")).toEqual([
      { address: "0xhot", provedAt: 5 },
      { address: "0xcold", provedAt: 5 },
    ]);
  });
});
