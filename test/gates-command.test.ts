import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { allCommands } from "../commands/index.ts";
import { slashCommands } from "../src/adapters/discord/commands.ts";
import type { Invocation } from "../src/core/command.ts";
import {
  type CriterionResult,
  type Gate,
  type GateControl,
  type GateCriterion,
  type GateTarget,
  type GateVerdict,
  MAX_GATES_PER_CHAT,
} from "../src/gates/types.ts";
import { type RuntimeSetup, startRuntime } from "./helpers.ts";

/**
 * /gate through the runtime, as a Telegram group and a Discord server use it, over a recording
 * gate service: what the command asks of the service (GateControl) and what it answers.
 */

const GUILD = "111111111111111111";
const HOLDERS = "222222222222222222";
const AZUKI = "0xED5AF388653567Af2F388E6224dC7C4b3241C544";

/**
 * The gate service as the command sees it, in memory: records each add (the platform's check of
 * the target), refuses what a test tells it to, and answers tests with the outcomes it is given.
 */
class RecordingGates implements GateControl {
  gates: Gate[] = [];
  added: { target: GateTarget; criteria: GateCriterion[]; createdBy: string }[] = [];
  tested: { criteria: GateCriterion[]; wallets: string[] }[] = [];
  /** The platform's refusal at add (Manage Roles missing, the role above the bot's). */
  refusal: string | undefined;
  outcomes: Partial<Record<GateCriterion["kind"], CriterionResult["outcome"]>> = {};
  private nextId = 1;

  async add(input: Parameters<GateControl["add"]>[0]) {
    this.added.push({ target: input.target, criteria: input.criteria, createdBy: input.createdBy });
    if (this.refusal) return { ok: false as const, reason: this.refusal };
    // The platform's check: Telegram makes the invite link, Discord knows the role's name.
    const target: GateTarget =
      input.target.platform === "telegram"
        ? { ...input.target, inviteLink: "https://t.me/+joinHere" }
        : {
            ...input.target,
            roleName: input.target.roleName === HOLDERS ? "Holders" : input.target.roleName,
          };
    const gate: Gate = {
      id: this.nextId++,
      platform: input.platform,
      chatId: input.chatId,
      target,
      criteria: input.criteria,
      createdBy: input.createdBy,
      createdAt: 0,
    };
    this.gates.push(gate);
    return { ok: true as const, gate };
  }

  async list(platform: string, chatId: string) {
    return this.gates.filter((gate) => gate.platform === platform && gate.chatId === chatId);
  }

  async remove(platform: string, chatId: string, n: number) {
    const gate = (await this.list(platform, chatId))[n - 1];
    if (gate) this.gates = this.gates.filter((other) => other !== gate);
    return gate;
  }

  async test(criteriaOrGate: GateCriterion[] | Gate, wallets: string[]): Promise<GateVerdict> {
    const criteria = Array.isArray(criteriaOrGate) ? criteriaOrGate : criteriaOrGate.criteria;
    this.tested.push({ criteria, wallets });
    const results = criteria.map((criterion) => {
      const outcome = this.outcomes[criterion.kind] ?? "pass";
      return { criterion, outcome, why: `${criterion.kind} said ${outcome}` };
    });
    const outcome = results.some((r) => r.outcome === "fail")
      ? "fail"
      : results.some((r) => r.outcome === "unknown")
        ? "unknown"
        : "pass";
    return { outcome, results };
  }

  async logCsv(_platform: string, _chatId: string, n: number) {
    return `at,user,action,reason\r\n2026-11-26T00:00:00Z,telegram:7,granted,gate ${n} passed\r\n`;
  }
}

const manager: Partial<Invocation> = {
  platform: "telegram",
  chat: { id: "-100123", kind: "group", title: "Azuki Holders" },
  canManageChannel: async () => true,
};
const member: Partial<Invocation> = {
  ...manager,
  user: { id: "u2", name: "Member" },
  canManageChannel: async () => false,
};
const discordManager: Partial<Invocation> = {
  platform: "discord",
  chat: { id: "333333333333333333", kind: "group" },
  guild: { id: GUILD, roleNames: { [HOLDERS]: "Holders" } },
  canManageChannel: async () => true,
};

let t: RuntimeSetup;
let gates: RecordingGates;
const say = async (line: string, who: Partial<Invocation> = manager) =>
  t.text(await t.say(line, who));

beforeAll(async () => {
  gates = new RecordingGates();
  // The service is the runtime's: each test resets the recording, not the runtime.
  const shared: GateControl = {
    add: (input) => gates.add(input),
    list: (p, c) => gates.list(p, c),
    remove: (p, c, n) => gates.remove(p, c, n),
    test: (criteria, wallets) => gates.test(criteria, wallets),
    logCsv: (p, c, n) => gates.logCsv(p, c, n),
  };
  t = await startRuntime({}, {}, [], { gates: shared });
});

afterAll(async () => {
  await t?.close();
});

beforeEach(() => {
  gates = new RecordingGates();
});

describe("/gate add", () => {
  it("Telegram: a manager gates the group itself; the reply shows the criteria and the invite link", async () => {
    const text = await say("/gate add holds 1 Azuki, not behavior flipper");
    expect(gates.added).toHaveLength(1);
    const [added] = gates.added;
    expect(added?.target).toEqual({
      platform: "telegram",
      chatId: "-100123",
      title: "Azuki Holders",
    });
    expect(added?.criteria.map((c) => c.kind)).toEqual(["holds", "behavior"]);
    expect(added?.criteria[0]).toMatchObject({ kind: "holds", contract: AZUKI, min: 1 });
    expect(added?.createdBy).toBe("telegram:u1");
    expect(text).toMatch(/Gate 1 added/);
    expect(text).toMatch(/Entry to this group, for people whose wallets pass all of/);
    expect(text).toContain("https://t.me/+joinHere");
  });

  it("Discord: the role picked (an id, resolved to its name), on the server, whichever channel", async () => {
    const text = await say(`/gate add role:${HOLDERS} holds 2 Azuki`, discordManager);
    expect(gates.added[0]?.target).toEqual({
      platform: "discord",
      guildId: GUILD,
      roleId: HOLDERS,
      roleName: "Holders",
    });
    expect((await gates.list("discord", GUILD)).length).toBe(1);
    expect(text).toMatch(/The role @Holders, for people/);
  });

  it("Discord: text forms of the role: a mention, @name among those Discord named", async () => {
    await say(`/gate add role:<@&${HOLDERS}> holds 1 Azuki`, discordManager);
    await say('/gate add "role:@holders" behavior collector', discordManager);
    await say(`/gate add <@&${HOLDERS}> volume 10`, discordManager);
    expect(gates.added.map((a) => a.target.platform === "discord" && a.target.roleId)).toEqual([
      HOLDERS,
      HOLDERS,
      HOLDERS,
    ]);
  });

  it("every bad input: a clear message, and nothing reaches the service", async () => {
    const cases: [string, Partial<Invocation>, RegExp][] = [
      ["/gate add role:@Nobody holds 1 Azuki", discordManager, /cannot find the role @Nobody/],
      ["/gate add holds 1 Azuki", discordManager, /Which role does the gate give/],
      [`/gate add role:${GUILD} holds 1 Azuki`, discordManager, /@everyone cannot be/],
      ["/gate add role:Holders holds 1 Azuki", discordManager, /role: pick it from the list/],
      [`/gate add role:${HOLDERS} holds 1 Azuki`, manager, /gives no role/],
      ["/gate add", manager, /Which criteria\?/],
      ["/gate add holds lots of Azuki", manager, /must be a whole number/],
      ["/gate add holds 1 NoSuchThingAtAll", manager, /no collection named "NoSuchThingAtAll"/],
      ["/gate add role:@Holders", discordManager, /Which criteria\?/],
      ["/gate add holds 1 Azuki", member, /Only people who can manage this chat/],
      [
        "/gate add holds 1 Azuki",
        { ...manager, chat: { id: "u1", kind: "private" } },
        /use \/gate in the group/,
      ],
      [
        `/gate add role:${HOLDERS} holds 1 Azuki`,
        { platform: "discord", chat: { id: "dm", kind: "private" } },
        /belong to a Discord server/,
      ],
      ["/gate add holds 1 Azuki", { platform: "console" }, /Discord server or a Telegram group/],
    ];
    for (const [line, who, message] of cases) {
      const reply = await t.say(line, who);
      expect(t.text(reply), line).toMatch(message);
      expect(reply.tone, line).not.toBe("success");
    }
    expect(gates.added).toEqual([]);
    expect(gates.gates).toEqual([]);
  });

  it("an 11th gate is refused before any lookup; the ten stay", async () => {
    for (let i = 0; i < MAX_GATES_PER_CHAT; i++) await say(`/gate add holds ${i + 1} Azuki`);
    expect(gates.gates).toHaveLength(MAX_GATES_PER_CHAT);
    const before = t.sim.requests.length;
    const text = await say("/gate add holds 1 Azuki");
    expect(text).toMatch(/already has 10 gates, the most it may have/);
    expect(gates.added).toHaveLength(MAX_GATES_PER_CHAT);
    expect(t.sim.requests.length).toBe(before);
  });

  it("the platform's refusal at add is shown with how to fix it; no gate", async () => {
    gates.refusal =
      "the bot lacks Manage Roles: Server Settings → Roles → the bot's role → Manage Roles.";
    const reply = await t.say(`/gate add role:${HOLDERS} holds 1 Azuki`, discordManager);
    expect(t.text(reply)).toMatch(/not added: the bot lacks Manage Roles/);
    expect(reply.tone).toBe("warning");
    expect(gates.gates).toEqual([]);
  });
});

describe("/gate list, remove, log", () => {
  async function twoGates() {
    await say("/gate add holds 1 Azuki");
    await say("/gate add behavior collector,whale");
  }

  it("list: numbered, in plain words, the invite link, a paused gate with its reason; for everyone", async () => {
    await twoGates();
    const second = gates.gates[1] as Gate;
    second.pausedAt = 1;
    second.pauseReason = "the bot can no longer invite users";
    const text = await say("/gate list", member);
    expect(text).toMatch(/Gates here \(2 of 10\)/);
    expect(text).toMatch(/1\. Entry to this group, for people whose wallets pass all of: .*Azuki/);
    expect(text).toMatch(
      /2\. Entry to this group, for people whose wallets pass all of: .*collector/i,
    );
    expect(text).toContain("https://t.me/+joinHere");
    expect(text).toMatch(/Paused: the bot can no longer invite users/);
    expect(await say("/gate list", { ...manager, chat: { id: "-100999", kind: "group" } })).toMatch(
      /No gates here/,
    );
  });

  it("remove: by number, managers only; a bad number changes nothing", async () => {
    await twoGates();
    expect(await say("/gate remove 1", member)).toMatch(/Only people who can manage this chat/);
    expect(await say("/gate remove x")).toMatch(/"x" is not a gate number/);
    expect(await say("/gate remove 0")).toMatch(/"0" is not a gate number/);
    expect(await say("/gate remove")).toMatch(/Which gate\?/);
    expect(await say("/gate remove 3")).toMatch(/There is no gate 3 here/);
    expect(gates.gates).toHaveLength(2);
    expect(await say("/gate remove 1")).toMatch(/Gate 1 removed/);
    expect(gates.gates.map((gate) => gate.criteria[0]?.kind)).toEqual(["behavior"]);
  });

  it("log: the gate's CSV attached, to the manager alone; members and bad numbers refused", async () => {
    await twoGates();
    const reply = await t.say("/gate log 2", manager);
    const file = reply.files?.[0];
    expect(file?.name).toBe("gate-2-log.csv");
    expect(file?.contentType).toBe("text/csv");
    expect(new TextDecoder().decode(file?.data)).toMatch(/^at,user,action,reason\r\n.*gate 2/);
    expect(await say("/gate log 2", member)).toMatch(/Only people who can manage this chat/);
    expect(await say("/gate log 5")).toMatch(/There is no gate 5 here/);
  });
});

describe("/gate test", () => {
  it("a wallet against criteria given: each criterion, pass/fail/unknown and why; for everyone", async () => {
    gates.outcomes = { behavior: "fail" };
    const wallet = t.sim.fixtures.wallet;
    const text = await say(`/gate test ${wallet} holds 1 Azuki, behavior whale`, member);
    expect(gates.tested[0]?.wallets.map((w) => w.toLowerCase())).toEqual([wallet.toLowerCase()]);
    expect(text).toMatch(/does not pass/);
    expect(text).toMatch(/✓ pass: .*Azuki.*\(holds said pass\)/);
    expect(text).toMatch(/✗ fail: .*whale.*\(behavior said fail\)/i);
    gates.outcomes = { holds: "unknown" };
    expect(await say(`/gate test ${wallet} holds 1 Azuki`, member)).toMatch(
      /cannot be checked now[\s\S]*\? unknown/,
    );
  });

  it("a name.eth is resolved to its address, as /wallet does", async () => {
    const { walletEns, wallet } = t.sim.fixtures;
    const text = await say(`/gate test ${walletEns} volume 10`, member);
    expect(gates.tested[0]?.wallets.map((w) => w.toLowerCase())).toEqual([wallet.toLowerCase()]);
    expect(text).toContain(walletEns);
  });

  it("without criteria: every gate of this chat", async () => {
    await say("/gate add holds 1 Azuki");
    await say("/gate add volume 10");
    gates.outcomes = { spend: "fail" };
    const text = await say(`/gate test ${t.sim.fixtures.wallet}`, member);
    expect(text).toMatch(/Gate 1, entry to this group: passes/);
    expect(text).toMatch(/Gate 2, entry to this group: does not pass/);
    expect(await say("/gate test")).toMatch(/Which wallet\?/);
    expect(await say("/gate test 0x1234 holds 1 Azuki")).toMatch(/4 hex digits/);
    expect(gates.tested).toHaveLength(2);
  });

  it("on the console, with criteria it works; gates of a chat it has none", async () => {
    const onConsole: Partial<Invocation> = {
      platform: "console",
      chat: { id: "console", kind: "private" },
    };
    expect(await say(`/gate test ${t.sim.fixtures.wallet} holds 1 Azuki`, onConsole)).toMatch(
      /passes/,
    );
    expect(await say(`/gate test ${t.sim.fixtures.wallet}`, onConsole)).toMatch(
      /Discord server or a Telegram group/,
    );
  });
});

describe("without a gate service (a runtime that has none)", () => {
  let bare: RuntimeSetup;
  beforeAll(async () => {
    bare = await startRuntime();
  });
  afterAll(async () => {
    await bare?.close();
  });

  it("says gates are not available here, for every action", async () => {
    for (const line of [
      "/gate add holds 1 Azuki",
      "/gate list",
      "/gate test 0x0000000000000000000000000000000000000001 volume 1",
    ]) {
      const reply = await bare.say(line, manager);
      expect(bare.text(reply), line).toMatch(/Gates are not available here/);
    }
  });
});

describe("Discord registration", () => {
  it("/gate: the action as choices, the role as Discord's role picker (type 8), not for managers only", () => {
    const gate = slashCommands(allCommands()).find((command) => command.name === "gate");
    const options = (gate?.options ?? []) as { name: string; type: number; required?: boolean }[];
    expect(options.find((o) => o.name === "action")).toMatchObject({ type: 3, required: true });
    expect(options.find((o) => o.name === "role")).toMatchObject({ type: 8, required: false });
    expect(options.find((o) => o.name === "spec")).toMatchObject({ type: 3 });
    // list and test are for everyone: the command is not hidden from members.
    expect(gate).not.toHaveProperty("default_member_permissions");
  });
});
