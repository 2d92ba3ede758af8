/**
 * The gate service and its re-check job on a real store (SQLite in a temp dir; PostgreSQL for two
 * instances) and the simulator over HTTP, with a fake clock. The platforms are a recording fake
 * GateMembership here: Discord's and Telegram's are tested by their own suites.
 */

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough, Writable } from "node:stream";
import { privateKeyToAccount } from "viem/accounts";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import type { ApiClient } from "../src/api/client.ts";
import { createBot } from "../src/bot.ts";
import { parseConfig } from "../src/config.ts";
import { counted, walletsOn } from "../src/core/person-wallets.ts";
import { GateRecheck } from "../src/gates/recheck.ts";
import { GateService, JOIN_REQUEST_WAIT_MS } from "../src/gates/service.ts";
import { gateStoreOf } from "../src/gates/store.ts";
import type {
  CriterionResult,
  Gate,
  GateCriterion,
  GateEvaluator,
  GateMembership,
  GateTarget,
  GateTell,
  GateVerdict,
  HoldsCriterion,
  MembershipResult,
} from "../src/gates/types.ts";
import { silentLogger } from "../src/log.ts";
import { DEMO_WALLET } from "../src/simulator/index.ts";
import { openPostgresStore } from "../src/store/postgres/index.ts";
import { openSqliteStore } from "../src/store/sqlite/index.ts";
import type { Store } from "../src/store/types.ts";
import { type ClientSetup, startClient, testInvocation } from "./helpers.ts";
import { POSTGRES_URL, postgresAvailable } from "./services.ts";
import { dropSchema, freshSchemaName } from "./store/backends.ts";
import { startTestSimulator } from "./test-simulator.ts";

const HOUR = 3_600_000;
/** The invite link the fake platform makes for a group's gate; join requests come through it. */
const JOIN_LINK = "https://t.me/+join";
const DEMO = DEMO_WALLET.address.toLowerCase();

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/**
 * Holdings read from the simulator (endpoint 13): enough to decide the service's transitions.
 * A failed read is "unknown", as the real evaluator's contract says.
 */
function simulatorEvaluator(api: ApiClient): GateEvaluator {
  return {
    async evaluate(criteria, wallets) {
      const results: CriterionResult[] = [];
      for (const criterion of criteria as HoldsCriterion[]) {
        try {
          let held = 0;
          for (const wallet of walletsOn(counted(wallets), criterion.chain, criterion.contract)) {
            const { nfts } = await api.wallets.nfts(wallet, {}, { fresh: true, background: true });
            held += nfts.filter(
              (item) => item.nft.contractAddress.toLowerCase() === criterion.contract.toLowerCase(),
            ).length;
          }
          results.push({
            criterion,
            outcome: held >= criterion.min ? "pass" : "fail",
            why: `holds ${held} of ${criterion.name} (needs ${criterion.min})`,
          });
        } catch {
          results.push({ criterion, outcome: "unknown", why: "the data service did not answer" });
        }
      }
      const outcome = results.some((r) => r.outcome === "fail")
        ? "fail"
        : results.some((r) => r.outcome === "unknown")
          ? "unknown"
          : "pass";
      return { outcome, results } satisfies GateVerdict;
    },
  };
}

/** A platform that does what it is asked and records it; answers can be set per call kind. */
function fakeMembership(platform: "discord" | "telegram") {
  const calls: string[] = [];
  const told: { userId: string; text: string; userChatId?: string | undefined }[] = [];
  const answers: { check?: string; grant?: MembershipResult; revoke?: MembershipResult } = {};
  const membership: GateMembership = {
    platform,
    async check(target) {
      calls.push("check");
      if (answers.check) return { ok: false, reason: answers.check };
      return {
        ok: true,
        target: target.platform === "telegram" ? { ...target, inviteLink: JOIN_LINK } : target,
      };
    },
    async grant(_target, userId) {
      calls.push(`grant ${userId}`);
      return answers.grant ?? { ok: true };
    },
    async revoke(_target, userId) {
      calls.push(`revoke ${userId}`);
      return answers.revoke ?? { ok: true };
    },
    async decline(_target, userId) {
      calls.push(`decline ${userId}`);
      return { ok: true };
    },
    verifyLink: (chain) => `https://t.me/gatebot?start=verify_${chain}`,
  };
  /** What the gate service tells people on this platform (GateServiceDeps.tell). */
  const tell = async (note: Parameters<GateTell>[0]) => {
    told.push({ userId: note.userId, text: note.text, userChatId: note.userChatId });
    return true;
  };
  return { membership, calls, told, answers, tell };
}

let client: ClientSetup;
let holdsDemo: HoldsCriterion;

beforeAll(async () => {
  client = await startClient();
  // The collection of the demo wallet's first NFT (BAYC #7495 on the simulator).
  const { nfts } = await client.api.wallets.nfts(DEMO);
  const first = nfts[0]?.nft;
  if (!first) throw new Error("the demo wallet holds nothing");
  holdsDemo = {
    kind: "holds",
    chain: "ethereum",
    contract: first.contractAddress,
    name: "Bored Ape Yacht Club",
    min: 1,
  };
  return () => client.close();
});

function sqliteStore(): Store {
  const dir = mkdtempSync(join(tmpdir(), "gates-service-"));
  const store = openSqliteStore(dir);
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  cleanups.push(() => store.close());
  return store;
}

/** The service and its job on `store`, a fake clock and a fake Discord (and Telegram). */
function setup(
  store: Store,
  options: { perMinute?: number; holder?: string; evaluator?: GateEvaluator } = {},
) {
  const clock = { now: Date.parse("2026-03-01T12:00:00Z") };
  const discord = fakeMembership("discord");
  const telegram = fakeMembership("telegram");
  const service = new GateService({
    gates: gateStoreOf(store),
    wallets: store.wallets,
    evaluator: options.evaluator ?? simulatorEvaluator(client.api),
    memberships: [discord.membership, telegram.membership],
    tell: (note) => (note.platform === "discord" ? discord : telegram).tell(note),
    logger: silentLogger(),
    settings: { graceHours: 24 },
    now: () => clock.now,
  });
  const job = new GateRecheck({
    service,
    leases: store.leases,
    holder: options.holder ?? "instance-a",
    logger: silentLogger(),
    settings: { checksPerMinute: options.perMinute ?? 30, tickMs: 1_000 },
    now: () => clock.now,
  });
  cleanups.push(() => job.stop());
  const prove = (userId: string, address = DEMO, platform = "discord") =>
    store.wallets.addProved({
      platform,
      userId,
      address,
      chain: "ethereum",
      label: address,
      message: "signed",
      signature: "0x",
      provedAt: clock.now,
    });
  return { clock, discord, telegram, service, job, prove };
}

const roleTarget: GateTarget = {
  platform: "discord",
  guildId: "g1",
  roleId: "r1",
  roleName: "Holders",
};

async function addGate(
  service: GateService,
  target: GateTarget = roleTarget,
  criteria: GateCriterion[] = [holdsDemo],
): Promise<Gate> {
  const chatId = target.platform === "discord" ? target.guildId : target.chatId;
  const added = await service.add({
    platform: target.platform,
    chatId,
    target,
    criteria,
    createdBy: "m1",
  });
  if (!added.ok) throw new Error(added.reason);
  return added.gate;
}

/** The simulator's next wallet reads answer that the wallet holds nothing (it sold). */
const sold = (reads = 1) =>
  client.sim.script(
    Array.from({ length: reads }, () => ({ status: 200, body: JSON.stringify({ nfts: [] }) })),
  );

describe("gate service", () => {
  it("grants the role when a person proves a wallet that passes, in the server they verified in", async () => {
    const store = sqliteStore();
    const { service, discord, prove } = setup(store);
    const gate = await addGate(service);
    await prove("u1");
    await service.onProved("discord", "u1", { guildId: "g1" });
    expect(discord.calls).toEqual(["check", "grant u1"]);
    expect((await gateStoreOf(store).member(gate.id, "u1"))?.status).toBe("granted");
    const [entry] = await gateStoreOf(store).logOf(gate.id, 10);
    expect(entry).toMatchObject({ action: "granted", userId: "u1" });
    expect(entry?.reason).toContain("holds 1 of");
    expect((await service.stats()).grants).toBe(1);
  });

  it("finds the server of the channel where /verify was run through the platform", async () => {
    const store = sqliteStore();
    const { service, discord, prove } = setup(store);
    discord.membership.guildOf = async (channel) => (channel === "c9" ? "g1" : undefined);
    const gate = await addGate(service);
    await prove("u1");
    await service.onProved("discord", "u1", { chatId: "c9" });
    expect((await gateStoreOf(store).member(gate.id, "u1"))?.status).toBe("granted");
  });

  it("refuses an 11th gate and a target the platform refuses, in the platform's words", async () => {
    const store = sqliteStore();
    const { service, discord } = setup(store);
    for (let i = 0; i < 10; i++)
      await addGate(service, { ...roleTarget, roleId: `r${i}`, roleName: `R${i}` });
    const full = await service.add({
      platform: "discord",
      chatId: "g1",
      target: { ...roleTarget, roleId: "r11" },
      criteria: [holdsDemo],
      createdBy: "m1",
    });
    expect(full).toMatchObject({ ok: false });
    discord.answers.check = "Give the bot Manage Roles, then try again.";
    const refused = await service.add({
      platform: "discord",
      chatId: "g2",
      target: { ...roleTarget, guildId: "g2" },
      criteria: [holdsDemo],
      createdBy: "m1",
    });
    expect(refused).toEqual({ ok: false, reason: "Give the bot Manage Roles, then try again." });
    expect(await service.list("discord", "g2")).toEqual([]);
  });

  it("gives a new gate to the people the chat's other gates know", async () => {
    const store = sqliteStore();
    const { service, prove } = setup(store);
    await addGate(service);
    await prove("u1");
    await service.onProved("discord", "u1", { guildId: "g1" });
    const second = await addGate(service, { ...roleTarget, roleId: "r2", roleName: "Apes" });
    await service.settled();
    expect((await gateStoreOf(store).member(second.id, "u1"))?.status).toBe("granted");
  });

  it("tells once and keeps the role through the grace, then removes it after GATE_GRACE_H", async () => {
    const store = sqliteStore();
    const { service, discord, job, clock, prove } = setup(store);
    const gate = await addGate(service);
    await prove("u1");
    await service.onProved("discord", "u1", { guildId: "g1" });

    // A day later the daily re-check finds the wallet sold.
    clock.now += 24 * HOUR + 1;
    sold();
    expect(await job.tick()).toBe(1);
    const inGrace = await gateStoreOf(store).member(gate.id, "u1");
    expect(inGrace).toMatchObject({ status: "grace", graceUntil: clock.now + 24 * HOUR });
    expect(discord.told).toHaveLength(1);
    expect(discord.told[0]?.text).toContain("/verify");

    // Checked again during the grace: still failing, still kept, not told again.
    clock.now += 2 * HOUR;
    sold();
    expect(await job.tick()).toBe(1);
    expect((await gateStoreOf(store).member(gate.id, "u1"))?.status).toBe("grace");
    expect(discord.told).toHaveLength(1);
    expect(discord.calls).not.toContain("revoke u1");

    // Past the grace and still failing: removed.
    clock.now = (inGrace?.graceUntil ?? 0) + 1;
    sold();
    await job.tick();
    expect(discord.calls).toContain("revoke u1");
    expect(await gateStoreOf(store).member(gate.id, "u1")).toBeUndefined();
    const actions = (await gateStoreOf(store).logOf(gate.id, 10)).map((e) => e.action);
    expect(actions).toEqual(["removed", "grace", "granted"]);
    expect((await service.stats()).removals).toBe(1);

    const csv = await service.logCsv("discord", "g1", 1);
    const lines = csv.trimEnd().split("\r\n");
    expect(lines[0]).toBe("time,user id,action,reason");
    expect(lines[1]).toMatch(/^2026-03-0\dT[\d:.]+Z,u1,removed,holds 0 of /);
  });

  it("keeps the role through an upstream outage: an unknown verdict changes nothing", async () => {
    const store = sqliteStore();
    const { service, discord, job, clock, prove } = setup(store);
    const gate = await addGate(service);
    await prove("u1");
    await service.onProved("discord", "u1", { guildId: "g1" });
    client.sim.setFaults({ errorRates: { 503: 1 } });
    cleanups.push(() => client.sim.clearFaults());
    for (let day = 1; day <= 3; day++) {
      clock.now += 24 * HOUR + 1;
      await job.tick();
    }
    expect((await gateStoreOf(store).member(gate.id, "u1"))?.status).toBe("granted");
    expect(discord.calls.filter((c) => c.startsWith("revoke"))).toEqual([]);
    expect(discord.told).toEqual([]);
    expect((await service.stats()).failures).toBeGreaterThanOrEqual(3);
  });

  it("gives the role back when the person passes again during the grace", async () => {
    const store = sqliteStore();
    const { service, discord, job, clock, prove } = setup(store);
    const gate = await addGate(service);
    await prove("u1");
    await service.onProved("discord", "u1", { guildId: "g1" });
    clock.now += 24 * HOUR + 1;
    sold();
    await job.tick();
    expect((await gateStoreOf(store).member(gate.id, "u1"))?.status).toBe("grace");
    // An hour later the wallet holds the collection again.
    clock.now += HOUR + 1;
    await job.tick();
    expect(await gateStoreOf(store).member(gate.id, "u1")).toMatchObject({ status: "granted" });
    expect((await gateStoreOf(store).logOf(gate.id, 1))[0]?.action).toBe("kept");
    expect(discord.calls.filter((c) => c.startsWith("revoke"))).toEqual([]);
  });

  it("pauses the gate with the platform's reason when a removal is refused", async () => {
    const store = sqliteStore();
    const { service, discord, job, clock, prove } = setup(store);
    const gate = await addGate(service);
    await prove("u1");
    await service.onProved("discord", "u1", { guildId: "g1" });
    await store.wallets.remove("discord", "u1", "all");
    await service.onUnlinked("discord", "u1");
    clock.now += 25 * HOUR;
    discord.answers.revoke = {
      ok: false,
      kind: "refused",
      reason: "The Holders role is above the bot's highest role.",
    };
    await job.tick();
    const paused = await gateStoreOf(store).get(gate.id);
    expect(paused?.pauseReason).toBe("The Holders role is above the bot's highest role.");
    expect((await gateStoreOf(store).logOf(gate.id, 1))[0]).toMatchObject({ action: "paused" });
    expect((await service.stats()).paused).toBe(1);
    // A paused gate decides nothing: the member stays until the platform allows it again.
    expect((await gateStoreOf(store).member(gate.id, "u1"))?.status).toBe("grace");
  });

  it("re-checks at most GATE_CHECKS_PER_MINUTE members a minute and counts the rest deferred", async () => {
    const store = sqliteStore();
    // Five people, five wallets (a wallet is one person's: issue 34), each passing.
    const evaluator: GateEvaluator = {
      evaluate: async (criteria) => ({
        outcome: "pass",
        results: criteria.map((criterion) => ({ criterion, outcome: "pass", why: "passes" })),
      }),
    };
    const { service, job, clock, prove } = setup(store, { perMinute: 2, evaluator });
    const gate = await addGate(service);
    for (const [i, user] of ["u1", "u2", "u3", "u4", "u5"].entries()) {
      await prove(user, `0x${String(i + 1).padStart(40, "0")}`);
      await service.onProved("discord", user, { guildId: "g1" });
    }
    clock.now += 24 * HOUR + 1;
    expect(await job.tick()).toBe(2);
    expect((await service.stats()).deferred).toBe(3);
    // The same minute: nothing more.
    clock.now += 10_000;
    expect(await job.tick()).toBe(0);
    // The next minute: two more, the oldest checks first.
    clock.now += 60_000;
    expect(await job.tick()).toBe(2);
    const checked = (await gateStoreOf(store).members(gate.id)).filter(
      (m) => (m.lastCheckedAt ?? 0) > clock.now - HOUR,
    );
    expect(checked).toHaveLength(4);
  });

  it("approves a join request that passes, keeps one pending with a /verify link, declines it after 10 minutes", async () => {
    const store = sqliteStore();
    const { service, telegram, job, clock, prove } = setup(store);
    const gate = await addGate(service, { platform: "telegram", chatId: "-100", title: "Apes" });
    expect(gate.target).toMatchObject({ inviteLink: "https://t.me/+join" });

    await prove("t1", DEMO, "telegram");
    await service.onJoinRequest("telegram", "-100", "t1", "p1", JOIN_LINK);
    expect(telegram.calls).toContain("grant t1");
    expect((await gateStoreOf(store).member(gate.id, "t1"))?.status).toBe("granted");
    expect((await gateStoreOf(store).logOf(gate.id, 1))[0]?.action).toBe("approved");

    // No wallet yet: pending, told through the request's private chat.
    await service.onJoinRequest("telegram", "-100", "t2", "p2", JOIN_LINK);
    expect(await gateStoreOf(store).member(gate.id, "t2")).toMatchObject({
      status: "pending",
      userChatId: "p2",
      decideBy: clock.now + JOIN_REQUEST_WAIT_MS,
    });
    expect(telegram.told.at(-1)).toMatchObject({ userId: "t2", userChatId: "p2" });
    expect(telegram.told.at(-1)?.text).toContain("https://t.me/gatebot?start=verify_ethereum");

    // Proves within the 10 minutes: approved.
    clock.now += 5 * 60_000;
    await prove("t2", DEMO, "telegram");
    await service.onProved("telegram", "t2", { chatId: "p2" });
    expect(telegram.calls).toContain("grant t2");
    expect((await gateStoreOf(store).member(gate.id, "t2"))?.status).toBe("granted");

    // Never proves: declined by the job once the 10 minutes are over.
    await service.onJoinRequest("telegram", "-100", "t3", "p3", JOIN_LINK);
    clock.now += JOIN_REQUEST_WAIT_MS - 1;
    await job.tick();
    expect(telegram.calls).not.toContain("decline t3");
    clock.now += 2;
    await job.tick();
    expect(telegram.calls).toContain("decline t3");
    expect(await gateStoreOf(store).member(gate.id, "t3")).toBeUndefined();
    expect((await gateStoreOf(store).logOf(gate.id, 1))[0]).toMatchObject({
      action: "declined",
      userId: "t3",
    });
  });

  it("reads a join request's verdict once for a group's gates with the same criteria", async () => {
    const store = sqliteStore();
    const inner = simulatorEvaluator(client.api);
    let evaluations = 0;
    const evaluator: GateEvaluator = {
      evaluate(criteria, wallets) {
        evaluations++;
        return inner.evaluate(criteria, wallets);
      },
    };
    const { service, telegram, prove } = setup(store, { evaluator });
    const target: GateTarget = { platform: "telegram", chatId: "-100", title: "Apes" };
    const needsMany = [{ ...holdsDemo, min: 1_000_000 }];
    await addGate(service, target, needsMany);
    await addGate(service, target, needsMany);
    await service.settled();
    await prove("t1", DEMO, "telegram");
    evaluations = 0;
    await service.onJoinRequest("telegram", "-100", "t1", "p1", JOIN_LINK);
    expect(telegram.calls).not.toContain("grant t1");
    expect(evaluations).toBe(1);
  });

  it("reads an expired join requests' gate once for all of them", async () => {
    const store = sqliteStore();
    const { service, telegram, job, clock } = setup(store);
    await addGate(service, { platform: "telegram", chatId: "-100", title: "Apes" });
    await service.onJoinRequest("telegram", "-100", "t1", "p1", JOIN_LINK);
    await service.onJoinRequest("telegram", "-100", "t2", "p2", JOIN_LINK);
    clock.now += JOIN_REQUEST_WAIT_MS + 1;
    const get = vi.spyOn(gateStoreOf(store), "get");
    await job.tick();
    expect(telegram.calls).toContain("decline t1");
    expect(telegram.calls).toContain("decline t2");
    expect(get).toHaveBeenCalledTimes(1);
  });

  it("decides the person's gates again at once after an unlink", async () => {
    const store = sqliteStore();
    const { service, discord, prove } = setup(store);
    const gate = await addGate(service);
    await prove("u1");
    await service.onProved("discord", "u1", { guildId: "g1" });
    await store.wallets.remove("discord", "u1", DEMO);
    await service.onUnlinked("discord", "u1");
    expect(await gateStoreOf(store).member(gate.id, "u1")).toMatchObject({ status: "grace" });
    expect(discord.told[0]?.text).toContain("/verify");
    const [entry] = await gateStoreOf(store).logOf(gate.id, 1);
    expect(entry).toMatchObject({ action: "grace", reason: "no proved wallet" });
  });
});

describe.runIf(await postgresAvailable())("gate re-checks on two instances (PostgreSQL)", () => {
  it("only the lease holder re-checks", async () => {
    const schema = freshSchemaName();
    cleanups.push(() => dropSchema(schema));
    const a = await openPostgresStore({ url: POSTGRES_URL, schema, max: 4 });
    cleanups.push(() => a.close());
    const b = await openPostgresStore({ url: POSTGRES_URL, schema, max: 4 });
    cleanups.push(() => b.close());
    const one = setup(a, { holder: "instance-a" });
    const two = setup(b, { holder: "instance-b" });
    await addGate(one.service);
    await one.prove("u1");
    await one.service.onProved("discord", "u1", { guildId: "g1" });
    one.clock.now += 24 * HOUR + 1;
    two.clock.now = one.clock.now;
    expect(await one.job.tick()).toBe(1);
    expect(await two.job.tick()).toBe(false);
    const twoChecked = (await two.service.stats()).passes;
    expect(twoChecked).toBe(0);
    expect((await one.service.stats()).passes).toBe(2);
  });
});

describe("the bot's gates", () => {
  it("a proof through the bot's verify service approves a pending request, and /unlink puts the member in grace", async () => {
    const sim = await startTestSimulator({ apiKey: "gates-key" });
    cleanups.push(() => sim.close());
    const dataDir = mkdtempSync(join(tmpdir(), "gates-bot-"));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const output = new Writable({ write: (_chunk, _encoding, callback) => callback() });
    const bot = await createBot(
      parseConfig({
        API_BASE_URL: sim.url,
        API_KEY: sim.apiKey,
        DATA_DIR: dataDir,
        COLLECTION_INDEX_REFRESH_S: "0",
      }),
      { logger: silentLogger(), input: new PassThrough(), output },
    );
    await bot.start();
    cleanups.push(() => bot.stop());
    // The console stands in for a group platform: its membership records what it is asked.
    const platform = fakeMembership("telegram");
    bot.gates.register({ ...platform.membership, platform: "console" });
    const added = await bot.gates.add({
      platform: "console",
      chatId: "group",
      target: { platform: "telegram", chatId: "group", title: "Apes" },
      criteria: [holdsDemo],
      createdBy: "m1",
    });
    if (!added.ok) throw new Error(added.reason);
    await bot.gates.onJoinRequest("console", "group", "me", "me", JOIN_LINK);
    expect(await gateStoreOf(bot.store).member(added.gate.id, "me")).toMatchObject({
      status: "pending",
    });

    const made = await bot.verify.createLink(
      { platform: "console", userId: "me", chatId: "console" },
      "ethereum",
    );
    if (!made.ok) throw new Error(made.refusal.message);
    const token = made.link.url.slice(made.link.url.lastIndexOf("/") + 1);
    const asked = await bot.verify.challenge(token, DEMO_WALLET.address);
    if (!asked.ok) throw new Error(asked.refusal.message);
    const demo = privateKeyToAccount(DEMO_WALLET.privateKey);
    const { message } = asked.challenge;
    expect((await bot.verify.prove(token, message, await demo.signMessage({ message }))).ok).toBe(
      true,
    );
    await bot.gates.settled();
    expect(platform.calls).toContain("grant me");
    expect(await gateStoreOf(bot.store).member(added.gate.id, "me")).toMatchObject({
      status: "granted",
    });
    expect(await bot.metrics.registry.metrics()).toMatch(/^bot_gate_grants_total 1$/m);
    expect((await bot.health()).gates).toMatchObject({ gates: 1, granted: 1, grants: 1 });

    await bot.runtime.runText(
      testInvocation({ platform: "console", user: { id: "me", name: "Me" } }),
      "unlink",
      "all",
    );
    await bot.gates.settled();
    expect(await gateStoreOf(bot.store).member(added.gate.id, "me")).toMatchObject({
      status: "grace",
    });
  });
});
