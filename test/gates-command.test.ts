import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { allCommands } from "../commands/index.ts";
import { slashCommands } from "../src/adapters/discord/commands.ts";
import type { Invocation } from "../src/core/command.ts";
import { counted } from "../src/core/person-wallets.ts";
import { ApiGateEvaluator } from "../src/gates/evaluate.ts";
import { GateService } from "../src/gates/service.ts";
import { gateStoreOf } from "../src/gates/store.ts";
import {
  type Gate,
  type GateEvaluator,
  type GateMembership,
  type GateTarget,
  MAX_GATES_PER_CHAT,
} from "../src/gates/types.ts";
import { silentLogger } from "../src/log.ts";
import { DEMO_WALLET } from "../src/simulator/index.ts";
import { type RuntimeSetup, startRuntime } from "./helpers.ts";

/**
 * /gate through the runtime, as a Telegram group and a Discord server use it: the gate service on
 * the runtime's SQLite store, the simulator's answers, and platforms that record what they are
 * asked at /gate add.
 */

const GUILD = "111111111111111111";
const HOLDERS = "222222222222222222";
const AZUKI = "0xED5AF388653567Af2F388E6224dC7C4b3241C544";
const DEMO = DEMO_WALLET.address;

/**
 * What the platforms do at /gate add, recorded: Discord knows the role's name, Telegram makes the
 * invite link; a test may have them refuse (Manage Roles missing, the role above the bot's).
 */
function recordingMembership(platform: "discord" | "telegram") {
  const recorded = { checked: [] as GateTarget[], refusal: undefined as string | undefined };
  const membership: GateMembership = {
    platform,
    async check(target) {
      recorded.checked.push(target);
      if (recorded.refusal) return { ok: false, reason: recorded.refusal };
      return {
        ok: true,
        target:
          target.platform === "telegram"
            ? { ...target, inviteLink: "https://t.me/+joinHere" }
            : target.platform === "discord"
              ? { ...target, roleName: target.roleId === HOLDERS ? "Holders" : target.roleName }
              : target,
      };
    },
    grant: async () => ({ ok: true }),
    revoke: async () => ({ ok: true }),
  };
  return { membership, recorded };
}

/**
 * The data service's answers as the evaluator reads them, with the wallets asked about recorded;
 * `unknown` makes a criterion kind unknown, as an upstream failure would.
 */
function recordingEvaluator(real: GateEvaluator) {
  const recorded = { wallets: [] as string[][], unknown: undefined as string | undefined };
  const evaluator: GateEvaluator = {
    async evaluate(criteria, wallets) {
      recorded.wallets.push(counted(wallets).wallets.map((w) => w.address));
      const verdict = await real.evaluate(criteria, wallets);
      if (!recorded.unknown) return verdict;
      const results = verdict.results.map((result) =>
        result.criterion.kind === recorded.unknown
          ? { ...result, outcome: "unknown" as const, why: "the data service is unavailable" }
          : result,
      );
      return {
        outcome: results.some((r) => r.outcome === "fail")
          ? "fail"
          : results.some((r) => r.outcome === "unknown")
            ? "unknown"
            : "pass",
        results,
      };
    },
  };
  return { evaluator, recorded };
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
let discord: ReturnType<typeof recordingMembership>;
let telegram: ReturnType<typeof recordingMembership>;
let evaluation: ReturnType<typeof recordingEvaluator>;
const say = async (line: string, who: Partial<Invocation> = manager) =>
  t.text(await t.say(line, who));
/** The refusal code of a line (undefined when it was not refused). */
const refusal = (line: string, who: Partial<Invocation> = manager) => t.refusal(line, who);
/** Every gate the store holds, of every chat. */
const allGates = () => gateStoreOf(t.store).all();
const checkedTargets = () => [...discord.recorded.checked, ...telegram.recorded.checked];

beforeAll(async () => {
  // The service needs the runtime's store and clients: the runtime gets it through a stand-in.
  let service: GateService | undefined;
  const standIn = new Proxy({} as GateService, {
    get: (_, key) => {
      const value = Reflect.get(service as GateService, key);
      return typeof value === "function" ? value.bind(service) : value;
    },
  });
  t = await startRuntime({}, {}, [], { services: { gates: standIn } });
  discord = recordingMembership("discord");
  telegram = recordingMembership("telegram");
  evaluation = recordingEvaluator(new ApiGateEvaluator({ apis: t.apis }));
  service = new GateService({
    gates: gateStoreOf(t.store),
    wallets: t.store.wallets,
    evaluator: evaluation.evaluator,
    memberships: [discord.membership, telegram.membership],
    tell: async () => true,
    logger: silentLogger(),
    settings: { graceHours: 24 },
  });
});

afterAll(async () => {
  await t?.close();
});

beforeEach(async () => {
  for (const gate of await allGates())
    await gateStoreOf(t.store).remove(gate.platform, gate.chatId, gate.id);
  for (const { recorded } of [discord, telegram]) {
    recorded.checked = [];
    recorded.refusal = undefined;
  }
  evaluation.recorded.wallets = [];
  evaluation.recorded.unknown = undefined;
});

describe("/gate add", () => {
  it("Telegram: a manager gates the group itself; the reply shows the criteria and the invite link", async () => {
    const text = await say("/gate add holds 1 Azuki, not behavior flipper");
    expect(checkedTargets()).toEqual([
      { platform: "telegram", chatId: "-100123", title: "Azuki Holders" },
    ]);
    const [added, ...others] = await allGates();
    expect(others).toEqual([]);
    expect(added?.criteria.map((c) => c.kind)).toEqual(["holds", "behavior"]);
    expect(added?.criteria[0]).toMatchObject({ kind: "holds", contract: AZUKI, min: 1 });
    expect(added?.createdBy).toBe("telegram:u1");
    expect(text).toMatch(/Gate 1 added/);
    expect(text).toMatch(/Entry to this group, for people whose wallets pass all of/);
    expect(text).toContain("https://t.me/+joinHere");
  });

  it("Discord: the role picked (an id, resolved to its name), on the server, whichever channel", async () => {
    const text = await say(`/gate add role:${HOLDERS} holds 2 Azuki`, discordManager);
    expect(checkedTargets()[0]).toEqual({
      platform: "discord",
      guildId: GUILD,
      roleId: HOLDERS,
      roleName: "Holders",
    });
    expect((await allGates()).map((gate) => [gate.platform, gate.chatId])).toEqual([
      ["discord", GUILD],
    ]);
    expect(text).toMatch(/The role @Holders, for people/);
  });

  it("Discord: text forms of the role: a mention, @name among those Discord named", async () => {
    await say(`/gate add role:<@&${HOLDERS}> holds 1 Azuki`, discordManager);
    await say('/gate add "role:@holders" behavior collector', discordManager);
    await say(`/gate add <@&${HOLDERS}> volume 10`, discordManager);
    expect(checkedTargets().map((a) => a.platform === "discord" && a.roleId)).toEqual([
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
      // A runtime without the console's own gates (the real console has them: examples.test.ts).
      [
        "/gate add holds 1 Azuki",
        { platform: "console" },
        /Gates are not available on this platform/,
      ],
    ];
    for (const [line, who, message] of cases) {
      const reply = await t.say(line, who);
      expect(t.text(reply), line).toMatch(message);
      expect(reply.tone, line).not.toBe("success");
    }
    expect(checkedTargets()).toEqual([]);
    expect(await allGates()).toEqual([]);
  });

  it("an 11th gate is refused before any lookup; the ten stay", async () => {
    for (let i = 0; i < MAX_GATES_PER_CHAT; i++) await say(`/gate add holds ${i + 1} Azuki`);
    expect(await allGates()).toHaveLength(MAX_GATES_PER_CHAT);
    const before = t.sim.requests.length;
    const text = await say("/gate add holds 1 Azuki");
    expect(text).toMatch(/already has 10 gates, the most it may have/);
    expect(checkedTargets()).toHaveLength(MAX_GATES_PER_CHAT);
    expect(await allGates()).toHaveLength(MAX_GATES_PER_CHAT);
    expect(t.sim.requests.length).toBe(before);
  });

  it("the platform's refusal at add is shown with how to fix it; no gate", async () => {
    discord.recorded.refusal =
      "the bot lacks Manage Roles: Server Settings → Roles → the bot's role → Manage Roles.";
    const reply = await t.say(`/gate add role:${HOLDERS} holds 1 Azuki`, discordManager);
    expect(t.text(reply)).toMatch(/not added: the bot lacks Manage Roles/);
    expect(reply.tone).toBe("warning");
    expect(await allGates()).toEqual([]);
  });
});

describe("/gate: hostile and malformed inputs", () => {
  it("refuses each with a clear message; no gate is added, nothing is looked up", async () => {
    const cases: [string, Partial<Invocation>, RegExp][] = [
      ["/gate add holds 1 0x1234", manager, /hex digits|not an address|collection/i],
      [`/gate add holds ${"9".repeat(79)} Azuki`, manager, /number|at most|too/i],
      ["/gate add holds 1 Azu\u0000ki", manager, /cannot read|characters/i],
      ["/gate add holds 1 <b>Azuki</b>", manager, /cannot read|characters|markup|collection/i],
      ["/gate add role:@<b>Holders</b> holds 1 Azuki", discordManager, /cannot find the role/],
      ["/gate add role:@Hold\u0000ers holds 1 Azuki", discordManager, /cannot find the role|role/],
      ["/gate add role:@everyone holds 1 Azuki", discordManager, /everyone|cannot find/],
    ];
    for (const [line, who, message] of cases) {
      const reply = await t.say(line, who);
      const text = t.text(reply);
      expect(text, line).toMatch(message);
      expect(text, line).not.toContain("\u0000");
      expect(reply.tone, line).not.toBe("success");
    }
    expect(checkedTargets()).toEqual([]);
    expect(await allGates()).toEqual([]);
  });

  it("remove and log: 0, a 20-digit number and a 79-digit one are no gate numbers", async () => {
    await say("/gate add holds 1 Azuki");
    for (const action of ["remove", "log"])
      for (const n of ["0", "99999999999999999999", "9".repeat(79), "-1", "1.5"])
        expect(await refusal(`/gate ${action} ${n}`), `${action} ${n}`).toBe("invalid_number");
    expect(await refusal("/gate log 1", member)).toBe("not_manager");
    expect(await refusal("/gate remove 1", member)).toBe("not_manager");
    expect(await allGates()).toHaveLength(1);
  });

  it("test: a malformed ENS name is refused before any lookup", async () => {
    for (const name of ["foo..eth", ".eth", "-bad-.eth", "a b.eth"]) {
      const reply = await t.say(`/gate test ${name} holds 1 Azuki`, member);
      expect(reply.tone, name).not.toBe("success");
      expect(evaluation.recorded.wallets, name).toEqual([]);
    }
  });
});

describe("/gate list, remove, log", () => {
  async function twoGates() {
    await say("/gate add holds 1 Azuki");
    await say("/gate add behavior collector,whale");
  }

  it("list: numbered, in plain words, the invite link, a paused gate with its reason; for everyone", async () => {
    await twoGates();
    const second = (await allGates())[1] as Gate;
    await gateStoreOf(t.store).pause(second.id, "the bot can no longer invite users", Date.now());
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
    expect(await refusal("/gate remove 1", member)).toBe("not_manager");
    expect(await refusal("/gate remove x")).toBe("invalid_number");
    expect(await say("/gate remove 0")).toMatch(/"0" is not a gate number/);
    expect(await refusal("/gate remove")).toBe("missing_argument");
    expect(await say("/gate remove 3")).toMatch(/There is no gate 3 here/);
    expect(await allGates()).toHaveLength(2);
    expect(await say("/gate remove 1")).toMatch(/Gate 1 removed/);
    expect((await allGates()).map((gate) => gate.criteria[0]?.kind)).toEqual(["behavior"]);
  });

  it("log: the gate's CSV attached, to the manager alone; members and bad numbers refused", async () => {
    await twoGates();
    const reply = await t.say("/gate log 2", manager);
    const file = reply.files?.[0];
    expect(file?.name).toBe("gate-2-log.csv");
    expect(file?.contentType).toBe("text/csv");
    expect(new TextDecoder().decode(file?.data)).toMatch(/^[^\r\n]*,[^\r\n]*\r\n/);
    expect(await refusal("/gate log 2", member)).toBe("not_manager");
    expect(await say("/gate log 5")).toMatch(/There is no gate 5 here/);
  });
});

describe("/gate test", () => {
  it("a wallet against criteria given: each criterion, pass/fail/unknown and why; for everyone", async () => {
    // The simulator's demo wallet holds an Azuki and is a collector, not a whale.
    const text = await say(`/gate test ${DEMO} holds 1 Azuki, behavior whale`, member);
    expect(evaluation.recorded.wallets).toEqual([[DEMO.toLowerCase()]]);
    expect(text).toMatch(/does not pass/);
    expect(text).toMatch(/✓ pass: .*Azuki/);
    expect(text).toMatch(/✗ fail: .*whale/i);
    evaluation.recorded.unknown = "holds";
    expect(await say(`/gate test ${DEMO} holds 1 Azuki`, member)).toMatch(
      /cannot be checked now[\s\S]*\? unknown: .*Azuki.*the data service is unavailable/,
    );
  });

  it("a name.eth is resolved to its address, as /wallet does", async () => {
    const { walletEns, wallet } = t.sim.fixtures;
    const text = await say(`/gate test ${walletEns} volume 10`, member);
    expect(evaluation.recorded.wallets.map((ws) => ws.map((w) => w.toLowerCase()))).toEqual([
      [wallet.toLowerCase()],
    ]);
    expect(text).toContain(walletEns);
  });

  it("without criteria: every gate of this chat", async () => {
    await say("/gate add holds 1 Azuki");
    await say("/gate add behavior whale");
    evaluation.recorded.wallets = [];
    const text = await say(`/gate test ${DEMO}`, member);
    expect(text).toMatch(/Gate 1, entry to this group: passes/);
    expect(text).toMatch(/Gate 2, entry to this group: does not pass/);
    expect(await refusal("/gate test")).toBe("missing_argument");
    expect(await refusal("/gate test 0x1234 holds 1 Azuki")).toBe("invalid_address");
    expect(evaluation.recorded.wallets).toHaveLength(2);
  });

  it("on the console, with criteria it works; gates of a chat it has none", async () => {
    const onConsole: Partial<Invocation> = {
      platform: "console",
      chat: { id: "console", kind: "private" },
    };
    // /help's examples, one per criterion kind: the demo wallet passes each on the simulator.
    const examples = (allCommands().find((c) => c.name === "gate")?.examples ?? []).filter((line) =>
      line.startsWith("/gate test"),
    );
    expect(examples).toHaveLength(4);
    for (const line of examples) expect(await say(line, onConsole), line).toMatch(/ passes\n/);
    // The console is a community of its own (issue 38): none of its gates yet.
    expect(await say(`/gate test ${DEMO}`, onConsole)).toMatch(/No gates here to test against/);
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
      expect(await bare.refusal(line, manager), line).toBe("feature_unavailable");
    }
  });
});

describe("/gate list: members who could not be warned (issue 34, item 16)", () => {
  it("counts the members in grace whose warning was not delivered", async () => {
    await say("/gate add holds 1 Azuki");
    const gate = (await allGates())[0] as Gate;
    const now = Date.now();
    const grace = { gateId: gate.id, status: "grace" as const, since: now, failingSince: now };
    await gateStoreOf(t.store).putMember({
      ...grace,
      userId: "w1",
      graceUntil: now + 1,
      toldAt: now,
    });
    await gateStoreOf(t.store).putMember({ ...grace, userId: "w2", graceUntil: now + 1 });
    await gateStoreOf(t.store).putMember({ ...grace, userId: "w3", graceUntil: now + 1 });
    const text = await say("/gate list", member);
    expect(text).toMatch(/2 people in grace were not warned \(direct messages closed\)/);
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
