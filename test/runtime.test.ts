import fc from "fast-check";
import { afterEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { isRefusal } from "../src/adapters/types.ts";
import { MemoryActionStore } from "../src/core/actions.ts";
import { defineAction } from "../src/core/button-actions.ts";
import { type ActionPayload, type AnyCommand, defineCommand } from "../src/core/command.ts";
import { opt } from "../src/core/options.ts";
import type { OutcomeEvent } from "../src/core/outcome.ts";
import { buildRegistry } from "../src/core/registry.ts";
import type { RenderableReply } from "../src/core/reply.ts";
import { parseTextArgs } from "../src/core/text-args.ts";
import { UserError } from "../src/errors.ts";
import { SqlActionStore } from "../src/store/shared/actions.ts";
import { migrate, openDatabase } from "../src/store/sqlite/index.ts";
import { sqliteSql } from "../src/store/sqlite/query.ts";
import {
  capturingLogger,
  type RuntimeSetup,
  runtimeWith,
  startClient,
  startRuntime,
  testInvocation,
} from "./helpers.ts";

function pingCommand(): AnyCommand {
  return defineCommand({
    name: "ping",
    description: "d",
    options: {},
    examples: [],
    run: async () => ({ text: "pong" }),
  });
}

let t: RuntimeSetup | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

describe("registry", () => {
  const command = (name: string): AnyCommand =>
    defineCommand({
      name,
      description: "d",
      options: {},
      examples: [],
      run: async () => ({ text: "x" }),
    });

  it("fails fast on a duplicate name", () => {
    expect(() => buildRegistry([command("top"), command("top")])).toThrow(
      /Two commands are named "top"/,
    );
  });

  it("refuses names Discord or Telegram would refuse", () => {
    expect(() => buildRegistry([command("Top")])).toThrow(/a-z/);
    expect(() => buildRegistry([command("top-collections")])).toThrow(/a-z/);
    expect(() => buildRegistry([command("x".repeat(33))])).toThrow(/1-32/);
  });

  it("fails fast on a button action listed under another command's or another name", () => {
    const next = defineAction({ command: "list", name: "next", schema: z.object({}) });
    const handler = next.handle({ run: async () => ({ text: "x" }) });
    const listing = (name: string, key: string): AnyCommand => ({
      ...command(name),
      actions: { [key]: handler },
    });
    expect(() => buildRegistry([listing("list", "next")])).not.toThrow();
    expect(() => buildRegistry([listing("list", "more")])).toThrow(
      /\/list lists the action "more" defined as list.next/,
    );
    expect(() => buildRegistry([listing("other", "next")])).toThrow(/defined as list.next/);
  });
});

describe("text arguments", () => {
  const top = defineCommand({
    name: "top",
    description: "d",
    options: {
      metric: opt.choice("m", [{ value: "volume", name: "Volume" }], { fallback: "volume" }),
      limit: opt.integer("l", { min: 1, max: 25, fallback: 10 }),
    },
    examples: [],
    run: async () => ({}),
  });
  const list = defineCommand({
    name: "behaviors",
    description: "d",
    options: { wallets: opt.walletList("w", { required: true }), min: opt.count("m") },
    examples: [],
    run: async () => ({}),
  });

  it("fills options by position and by name", () => {
    expect(parseTextArgs(top, "volume 20")).toEqual({ metric: "volume", limit: "20" });
    expect(parseTextArgs(top, "limit:5")).toEqual({ limit: "5", metric: undefined });
    expect(parseTextArgs(top, "limit=5 volume")).toEqual({ limit: "5", metric: "volume" });
  });

  it("gives the rest of the line, new lines included, to a list option", () => {
    const raw = parseTextArgs(list, "0x1,0x2\n0x3 min:2  0x4");
    expect(raw.wallets).toBe("0x1,0x2 0x3 0x4");
    expect(raw.min).toBe("2");
  });

  it("lets a word pass an optional option that cannot take it, to the next that can", () => {
    const report = defineCommand({
      name: "report",
      description: "d",
      options: {
        item: opt.nft("i", { required: true }),
        token_id: opt.tokenId("t"),
        wallet: opt.wallet("w"),
      },
      examples: [],
      run: async () => ({}),
    });
    const contract = "0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed";
    expect(parseTextArgs(report, `${contract} vitalik.eth`)).toEqual({
      item: contract,
      wallet: "vitalik.eth",
    });
    expect(parseTextArgs(report, `${contract} 12 vitalik.eth`)).toEqual({
      item: contract,
      token_id: "12",
      wallet: "vitalik.eth",
    });
    // A word nothing can take still lands where it was aimed, so its error is the precise one.
    expect(parseTextArgs(report, `${contract} 0x1`)).toEqual({ item: contract, token_id: "0x1" });
  });

  it("refuses extra words with the usage", () => {
    expect(() => parseTextArgs(top, "volume 20 extra")).toThrow(
      /did not expect "extra".*Usage: \/top/,
    );
  });
});

/** Answers "pong": a command whose only interest is being admitted or refused. */
const ping = defineCommand({
  name: "ping",
  description: "d",
  options: {},
  examples: [],
  run: async () => ({ text: "pong" }),
});

describe("dispatch", () => {
  it("an unknown command close to a known one suggests it; a far one points to /help", async () => {
    t = await startRuntime();
    for (const [typed, meant] of [
      ["audiense", "audience"],
      ["Audiance", "audience"],
      ["wallte", "wallet"],
      ["topp", "top"],
      ["segmnet", "segment"],
    ] as const) {
      const reply = await t.say(`/${typed} bayc`);
      expect(reply.text, typed).toBe(
        `There is no /${typed.toLowerCase()} command. Did you mean /${meant}? /help lists them all.`,
      );
      expect(await t.refusal(`/${typed}`)).toBe("unknown_command");
    }
    for (const far of ["nope", "frobnicate", "x"])
      expect((await t.say(`/${far}`)).text, far).toBe(`There is no /${far} command. Try /help.`);
    expect(t.sim.countRequests()).toBe(0);
  });

  it("answers a missing argument with the usage and an example", async () => {
    t = await startRuntime();
    const reply = await t.say("/audience");
    expect(reply.text).toMatch(/Missing collection\. Usage: \/audience <collection>/);
    const audience = t.runtime.find("audience");
    expect(reply.text).toContain(`Example: ${audience?.examples[0]}`);
    expect(audience?.examples[0]).toMatch(/^\/audience \S+/);
    expect(reply.private).toBe(true);
  });

  it.each([
    ["/nft 0x12 1", "invalid_address", /"0x12" is not a valid contract address/],
    [
      `/nft 0xBC4CA0EdA7647A8aB7C2061c2E118A18a936f13D ${"9".repeat(79)}`,
      "token_id_out_of_range",
      /79 digits/,
    ],
    ["/nft 0xBC4CA0EdA7647A8aB7C2061c2E118A18a936f13D -1", "invalid_token_id", /sign/],
    [
      "/top bogus",
      "invalid_choice",
      /I did not understand "bogus": it is not one of metric \(volume, sales, max_price\)/,
    ],
    ["/top volume 1d 99", "number_out_of_range", /limit: must be a whole number from 1 to 25/],
    ["/top volume 1d ten", "invalid_number", /limit: must be a whole number from 1 to 25/],
    ["/whois bad_name.eth", "invalid_ens_name", /not a valid ENS name: .*underscore/],
    ["/nope", "unknown_command", /There is no \/nope command/],
    ["/audience", "missing_argument", /Missing collection/],
    ["/nft https://opensea.io/vitalik", "invalid_link", /profile link holds a user name/],
    [
      "/nft https://example.com/nft/0xBC4CA0EdA7647A8aB7C2061c2E118A18a936f13D/1",
      "invalid_link",
      /example\.com/,
    ],
  ] as const)(
    "%s is refused (%s) with a clear message and sends nothing upstream",
    async (line, code, message) => {
      t = await startRuntime();
      expect(await t.refusal(line)).toBe(code);
      const reply = await t.say(line);
      expect(reply.text).toMatch(message);
      expect(reply.tone).toBe("warning");
      expect(t.sim.countRequests()).toBe(0);
    },
  );

  it("turns each upstream failure kind into its sentence", async () => {
    t = await startRuntime({
      API_RETRIES: "0",
      API_TIMEOUT_MS: "300",
      API_RETRY_MAX_TOTAL_MS: "1000",
    });
    const cases: [Parameters<typeof t.sim.script>[0][number], RegExp][] = [
      [{ status: 404 }, /No collection 0x[0-9a-fA-F]{4}…[0-9a-fA-F]{4} on this chain/],
      [{ status: 401 }, /The data service refused the bot's key: tell the bot's operator/],
      [{ status: 429, retryAfterSeconds: 20 }, /busy, try again in 20 s/],
      [{ status: 503 }, /unavailable right now/],
      [{ status: 200, hang: true }, /did not answer in time/],
      [{ status: 200, body: "{]" }, /could not read.*\(ref [0-9a-f]{10}\)/],
    ];
    for (const [scripted, message] of cases) {
      t.sim.script([scripted]);
      const reply = await t.say(`/audience ${t.sim.fixtures.erc1155Collection}`);
      expect(reply.text).toMatch(message);
    }
  });

  it("logs expected outcomes at debug, and operator problems without a stack", async () => {
    const { logger, lines } = capturingLogger();
    const setup = await startRuntime({ API_RETRIES: "0", API_RETRY_MAX_TOTAL_MS: "1000" }, {}, [], {
      logger,
    });
    t = setup;
    const collection = setup.sim.fixtures.erc1155Collection;
    const logged = async (
      line: string,
      scripted?: Parameters<typeof setup.sim.script>[0][number],
    ) => {
      if (scripted) setup.sim.script([scripted]);
      lines.length = 0;
      await setup.say(line);
      return lines.map(
        (entry) => JSON.parse(entry) as { level: number; kind?: string; err?: { stack?: string } },
      );
    };
    const worst = (entries: { level: number }[]) => Math.max(...entries.map((e) => e.level));
    // Not found, refused, busy, invalid input: what people meet every day, not warnings.
    for (const status of [404, 400, 429]) {
      const entries = await logged(`/audience ${collection}`, { status });
      expect(worst(entries), String(status)).toBeLessThan(40);
      expect(JSON.stringify(entries), String(status)).not.toContain("stack");
    }
    expect(worst(await logged("/audience 0x12"))).toBeLessThan(40);
    // The service down, a refused key, an unreadable answer: the operator's to fix, no stack.
    for (const [scripted, level] of [
      [{ status: 503 }, 40],
      [{ status: 401 }, 50],
      [{ status: 200, body: "{]" }, 50],
    ] as const) {
      const entries = await logged(`/audience ${collection}`, scripted);
      const problem = entries.find((entry) => entry.level >= 40);
      expect(problem?.level, String(scripted.status)).toBe(level);
      expect(problem?.kind).toBeDefined();
      expect(JSON.stringify(entries)).not.toContain("stack");
    }
  });

  it("logs an unexpected failure with an id and shows the person only that id", async () => {
    const setup = await startClient();
    const { logger, lines } = capturingLogger();
    const broken = defineCommand({
      name: "broken",
      description: "d",
      options: {},
      examples: [],
      run: async () => {
        throw new TypeError("secret internals: cannot read x of undefined");
      },
    });
    const runtime = runtimeWith(setup, [broken], { logger });
    const invocation = testInvocation({ id: "abc123def0" });
    const reply = await runtime.run(invocation, "broken", {});
    expect(reply.text).toMatch(/something went wrong.*ref abc123def0/);
    expect(reply.text).not.toContain("secret internals");
    expect(lines.join("\n")).toContain("secret internals");
    // A bug is the one failure whose stack helps.
    expect(
      lines.find((line) => line.includes("abc123def0") && line.includes("command failed")),
    ).toMatch(/"stack":"TypeError[^"]*\\n\s+at /);
    await setup.close();
  });

  it("stops a command at its deadline and says so", async () => {
    const setup = await startClient();
    const slow = defineCommand({
      name: "slow",
      description: "d",
      options: {},
      examples: [],
      run: (ctx) =>
        new Promise((resolve) => {
          const timer = setTimeout(() => resolve({ text: "late" }), 5000);
          ctx.signal.addEventListener("abort", () => clearTimeout(timer));
        }),
    });
    const runtime = runtimeWith(setup, [slow], { deadlineMs: 1000 });
    const reply = await runtime.run(testInvocation(), "slow", {});
    expect(reply.text).toMatch(/took longer than 1 s/);
    await setup.close();
  });

  it("rate-limits each person, not everyone", async () => {
    const setup = await startClient();
    let elapsed = 0;
    const runtime = runtimeWith(setup, [ping], {
      deadlineMs: 1000,
      rateLimit: { burst: 2, perMinute: 6 },
      monotonic: () => elapsed,
    });
    const alice = testInvocation({ user: { id: "alice", name: "Alice" } });
    const bob = testInvocation({ user: { id: "bob", name: "Bob" } });
    expect((await runtime.run(alice, "ping", {})).text).toBe("pong");
    expect((await runtime.run(alice, "ping", {})).text).toBe("pong");
    expect((await runtime.run(alice, "ping", {})).text).toMatch(/try again in 10 s/);
    expect((await runtime.run(bob, "ping", {})).text).toBe("pong");
    elapsed += 10_000;
    expect((await runtime.run(alice, "ping", {})).text).toBe("pong");
    await setup.close();
  });

  it("a wall clock stepping back an hour locks nobody out: limits run on the monotonic clock", async () => {
    const setup = await startClient();
    let wall = Date.parse("2025-06-01T12:00:00Z");
    let elapsed = 0;
    const runtime = runtimeWith(setup, [ping], {
      deadlineMs: 1000,
      rateLimit: { burst: 2, perMinute: 6 },
      now: () => new Date(wall),
      monotonic: () => elapsed,
    });
    const alice = testInvocation({ user: { id: "alice", name: "Alice" } });
    expect((await runtime.run(alice, "ping", {})).text).toBe("pong");
    expect((await runtime.run(alice, "ping", {})).text).toBe("pong");
    expect((await runtime.run(alice, "ping", {})).text).toMatch(/try again in 10 s/);
    // NTP steps the wall clock back an hour while the normal refill time passes.
    wall -= 3_600_000;
    elapsed += 10_000;
    expect((await runtime.run(alice, "ping", {})).text).toBe("pong");
    await setup.close();
  });

  it("refuses a person once per window, then stays quiet", async () => {
    const setup = await startClient();
    let elapsed = 0;
    const runtime = runtimeWith(setup, [pingCommand()], {
      rateLimit: { burst: 2, perMinute: 6 },
      monotonic: () => elapsed,
    });
    const alice = testInvocation({ user: { id: "alice", name: "Alice" } });
    const replies = [];
    for (let i = 0; i < 6; i++) replies.push(await runtime.run(alice, "ping", {}));
    expect(replies.map((reply) => reply.text)).toEqual([
      "pong",
      "pong",
      expect.stringMatching(/try again in 10 s/),
      expect.any(String),
      expect.any(String),
      expect.any(String),
    ]);
    expect(replies.map((reply) => reply.quiet === true)).toEqual([
      false,
      false,
      false,
      true,
      true,
      true,
    ]);
    // Once a token is back and used, a new overrun is refused out loud again.
    elapsed += 10_000;
    expect((await runtime.run(alice, "ping", {})).text).toBe("pong");
    const again = await runtime.run(alice, "ping", {});
    expect(again.text).toMatch(/try again/);
    expect(again.quiet).toBeUndefined();
    await setup.close();
  });

  it("limits a group as a whole on the platforms that have a per-group budget, not private chats", async () => {
    const setup = await startClient();
    const runtime = runtimeWith(setup, [pingCommand()], {
      rateLimit: { burst: 2, perMinute: 1 },
      chatRateLimit: { telegram: { burst: 3, perMinute: 1 } },
      monotonic: () => 0,
    });
    const inGroup = (user: string, chat = "-4001") =>
      testInvocation({
        platform: "telegram",
        user: { id: user, name: user },
        chat: { id: chat, kind: "group" },
      });
    expect((await runtime.run(inGroup("a"), "ping", {})).text).toBe("pong");
    expect((await runtime.run(inGroup("b"), "ping", {})).text).toBe("pong");
    expect((await runtime.run(inGroup("c"), "ping", {})).text).toBe("pong");
    const refused = await runtime.run(inGroup("d"), "ping", {});
    expect(refused.text).toMatch(/This chat is sending me many commands: try again in \d+ s/);
    expect(refused.quiet).toBeUndefined();
    expect((await runtime.run(inGroup("e"), "ping", {})).quiet).toBe(true);
    // Another group, a private chat and another platform keep their own budgets.
    expect((await runtime.run(inGroup("f", "-4002"), "ping", {})).text).toBe("pong");
    const dm = testInvocation({
      platform: "telegram",
      user: { id: "g", name: "g" },
      chat: { id: "g", kind: "private" },
    });
    expect((await runtime.run(dm, "ping", {})).text).toBe("pong");
    const discord = testInvocation({
      platform: "discord",
      user: { id: "h", name: "h" },
      chat: { id: "-4001", kind: "group" },
    });
    expect((await runtime.run(discord, "ping", {})).text).toBe("pong");
    await setup.close();
  });

  it("refuses channel-changing commands to people who may not manage the channel", async () => {
    const setup = await startClient();
    let ran = 0;
    const admin = defineCommand({
      name: "admin",
      description: "d",
      options: {},
      examples: [],
      requiresManageChannel: true,
      run: async () => {
        ran++;
        return { text: "done" };
      },
    });
    const runtime = runtimeWith(setup, [admin], { deadlineMs: 1000 });
    const answered = await runtime.answerCommand(
      testInvocation({ canManageChannel: async () => false }),
      "admin",
      {},
    );
    expect(answered).toMatchObject({ outcome: "user_error", code: "not_manager" });
    expect(ran).toBe(0);
    await setup.close();
  });

  it("a UserError's message is shown as it is", async () => {
    const setup = await startClient();
    const picky = defineCommand({
      name: "picky",
      description: "d",
      options: {
        x: {
          description: "x",
          kind: "string",
          required: false,
          placeholder: "x",
          schema: z.string(),
        },
      },
      examples: [],
      run: async () => {
        throw new UserError("invalid_argument", "Give me something nicer.");
      },
    });
    const runtime = runtimeWith(setup, [picky], { deadlineMs: 1000 });
    expect((await runtime.run(testInvocation(), "picky", {})).text).toBe(
      "Give me something nicer.",
    );
    await setup.close();
  });

  it("a UserError's code is counted and logged with its context, which the person never sees", async () => {
    const setup = await startClient();
    const picky = defineCommand({
      name: "picky",
      description: "d",
      options: {},
      examples: [],
      run: async () => {
        throw new UserError("invalid_argument", "Give me something nicer.", { input: "zebra" });
      },
    });
    const { logger, lines } = capturingLogger();
    const runtime = runtimeWith(setup, [picky], { deadlineMs: 1000, logger });
    const events: OutcomeEvent[] = [];
    runtime.onOutcome = (event) => events.push(event);
    const answered = await runtime.answerCommand(testInvocation(), "picky", {});
    expect(answered).toMatchObject({ outcome: "user_error", code: "invalid_argument" });
    expect(JSON.stringify(answered.reply)).not.toContain("zebra");
    // Counted after the answer went out.
    await runtime.settled();
    expect(events).toMatchObject([
      { command: "picky", outcome: "user_error", code: "invalid_argument" },
    ]);
    await vi.waitFor(() => expect(lines.join("")).toContain("invocation answered"));
    const line = JSON.parse(lines.find((l) => l.includes("invocation answered")) ?? "{}");
    expect(line).toMatchObject({
      outcome: "user_error",
      code: "invalid_argument",
      context: { input: "zebra" },
    });
    await setup.close();
  });
});

describe("buttons", () => {
  it("carry only a random id of at least 96 bits; the action stays server-side", async () => {
    t = await startRuntime();
    const reply = await t.say(`/audience ${t.sim.fixtures.collection}`);
    const id = reply.buttons?.[0]?.id ?? "";
    expect(id).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(JSON.stringify(reply)).not.toContain('"action"');
  });

  it("a click runs the action in the same chat; pages follow", async () => {
    t = await startRuntime();
    const reply = await t.say(`/audience ${t.sim.fixtures.collection}`);
    const page1 = await t.press(reply.buttons?.[0]?.id ?? "");
    expect(page1.title).toMatch(/Sample wallets/);
    expect(page1.footer).toMatch(/Page 1 of \d+/);
    const next = page1.buttons?.find((button) => button.label.includes("Next"));
    const page2 = await t.press(next?.id ?? "");
    expect(page2.footer).toMatch(/Page 2 of/);
    expect(page2.replaceOriginal).toBe(true);
    expect(page2.table?.rows[0]).not.toEqual(page1.table?.rows[0]);
  });

  it("a button from another chat, a forged id or an expired one does nothing upstream", async () => {
    t = await startRuntime({ BUTTON_TTL_S: "60" });
    const reply = await t.say(`/audience ${t.sim.fixtures.collection}`);
    const id = reply.buttons?.[0]?.id ?? "";
    const before = t.sim.countRequests();
    expect(await t.pressRefusal(id, { chat: { id: "other-chat", kind: "group" } })).toBe(
      "button_other_chat",
    );
    expect(await t.pressRefusal(id, { platform: "discord" })).toBe("button_other_chat");
    expect(await t.pressRefusal("AAAAAAAAAAAAAAAAAAAAAA")).toBe("button_expired");
    expect(await t.pressRefusal("'; DROP TABLE actions; --")).toBe("button_unknown");
    expect(await t.pressRefusal("x".repeat(500))).toBe("button_unknown");
    expect(t.sim.countRequests()).toBe(before);
  });

  it("tells the adapter a refusal by its outcome, not by how the reply looks", async () => {
    t = await startRuntime();
    const who = testInvocation();
    const answered = await t.runtime.answerText(who, "audience", t.sim.fixtures.collection);
    expect(answered.outcome).toBe("ok");
    const id = answered.reply.buttons?.[0]?.id ?? "";
    expect((await t.runtime.answerButton(who, id)).outcome).toBe("ok");
    for (const [refused, code] of [
      [await t.runtime.answerButton(who, "AAAAAAAAAAAAAAAAAAAAAA"), "button_expired"],
      [await t.runtime.answerButton(who, "not an id"), "button_unknown"],
      [
        await t.runtime.answerButton(testInvocation({ platform: "discord" }), id),
        "button_other_chat",
      ],
      [await t.runtime.answerText(who, "nosuchcommand", ""), "unknown_command"],
      [await t.runtime.answerCommand(who, "audience", {}), "missing_argument"],
    ] as const) {
      expect(refused.outcome).toBe("user_error");
      expect(refused.code).toBe(code);
      expect(isRefusal(refused.outcome)).toBe(true);
    }
    expect(isRefusal(answered.outcome)).toBe(false);
    expect(answered.code).toBeUndefined();
  });

  it("a stored button whose payload does not parse, or whose command is gone, no longer works", async () => {
    t = await startRuntime();
    const store = new SqlActionStore(sqliteSql(t.db));
    const stored = (action: { command: string; action: string; payload: ActionPayload }) => ({
      platform: "telegram",
      chatId: "chat-1",
      userId: "u1",
      action,
      expiresAt: Date.now() + 60_000,
    });
    const [malformed, gone, unknownAction, good] = await store.putMany([
      // A page of /wallet without the wallet it pages through.
      stored({ command: "wallet", action: "page", payload: { page: 1 } }),
      stored({ command: "renamed-away", action: "page", payload: { page: 1 } }),
      stored({ command: "top", action: "no-such-action", payload: {} }),
      // The format buttons already issued have (migration 8's rows) still reads.
      stored({
        command: "top",
        action: "page",
        payload: { metric: "sales", duration: "7d", limit: 3, page: 1 },
      }),
    ]);
    const before = t.sim.countRequests();
    for (const id of [malformed, gone, unknownAction]) {
      expect(await t.pressRefusal(id ?? "")).toBe("button_stale");
      // The first press is refused the same way again.
      const reply = await t.press(id ?? "");
      expect(reply.text).toBe("This button no longer works. Run the command again.");
    }
    expect(t.sim.countRequests()).toBe(before);
    const page = await t.press(good ?? "");
    expect(page.title).toBe("Top collections by number of sales, last 7 days");
  });

  it("refuses commands and buttons that act for a person to anonymous senders", async () => {
    t = await startRuntime();
    const anonymous = { user: { id: "chat:-4001", name: "NFT chat", anonymous: true } };
    expect(await t.refusal("/verify", anonymous)).toBe("anonymous_sender");
    expect((await t.say("/verify", anonymous)).text).toMatch(
      /Anonymous admins and channels cannot use \/verify: send it from your own account/,
    );
    // The person's own proved wallet: reports are made for no other.
    const { address } = await t.prove();
    t.sim.giveNft(address);
    const list = await t.say(`/wallet ${address} exclude`);
    const spam = list.buttons?.find((button) => button.label === "Spam #1");
    expect(spam).toBeDefined();
    expect(await t.pressRefusal(spam?.id ?? "", anonymous)).toBe("anonymous_sender");
    expect((await t.press(spam?.id ?? "")).title).toMatch(/Report as spam\?/);
  });

  it("expires after BUTTON_TTL_S", async () => {
    const setup = await startRuntime();
    let now = Date.now();
    const runtime = runtimeWith(setup, setup.runtime.commands, {
      rateLimit: { burst: 50, perMinute: 600 },
      now: () => new Date(now),
    });
    const invocation = testInvocation();
    const reply = await runtime.runText(invocation, "audience", setup.sim.fixtures.collection);
    const id = reply.buttons?.[0]?.id ?? "";
    now += 61_000;
    expect((await runtime.answerButton(invocation, id)).code).toBe("button_expired");
    await setup.close();
  });
});

describe("stored button actions", () => {
  /** A reply with data and three buttons; each button answers "pressed n". */
  const press = defineAction({
    command: "withbuttons",
    name: "press",
    schema: z.object({ n: z.number() }),
  });
  const withButtons = defineCommand({
    name: "withbuttons",
    description: "d",
    options: {},
    examples: [],
    run: async () => ({
      text: "the data",
      buttons: [1, 2, 3].map((n) => press.button({ n }, `b${n}`)),
    }),
    actions: {
      press: press.handle({ run: async (_ctx, { n }) => ({ text: `pressed ${n}` }) }),
    },
  });

  it("a full disk costs a reply its buttons, never its data, and the failure is logged", async () => {
    t = await startRuntime();
    const { logger, lines } = capturingLogger();
    const runtime = runtimeWith(t, [withButtons], {
      actions: new SqlActionStore(sqliteSql(t.db)),
      logger,
    });
    // A real SQLITE_FULL: the database may not grow, and the table's pages are filled with
    // rows smaller than any real one until a hundred inserts in a row find no room.
    t.db.pragma(`max_page_count = ${t.db.pragma("page_count", { simple: true })}`);
    const fill = t.db.prepare(
      "INSERT INTO button_actions (secret, platform, chat_id, user_id, first_seq, count, actions, expires_at) VALUES (randomblob(10), 'x', 'x', 'x', 0, 1, '[]', 0)",
    );
    for (let failures = 0; failures < 100; ) {
      try {
        fill.run();
        failures = 0;
      } catch (error) {
        expect((error as { code?: string }).code).toBe("SQLITE_FULL");
        failures++;
      }
    }
    const reply = await runtime.runText(testInvocation(), "withbuttons", "");
    expect(reply.text).toBe("the data");
    expect(reply.buttons ?? []).toEqual([]);
    expect(reply.footer).toMatch(/^Buttons left out/);
    const warning = lines.find((line) => line.includes("without buttons"));
    expect(warning).toMatch(/"level":40/);
    expect(warning).toMatch(/SQLITE_FULL/);
  });

  it("keeps at most BUTTON_MAX_PER_USER per person: the oldest go, the newest and others' work", async () => {
    t = await startRuntime({ BUTTON_MAX_PER_USER: "25" });
    const cap = t.config.buttonMaxPerUser;
    const runtime = runtimeWith(t, [withButtons], {
      actions: new SqlActionStore(sqliteSql(t.db), cap),
      rateLimit: { burst: 1000, perMinute: 100_000 },
    });
    const other = testInvocation({ user: { id: "u2", name: "Other" } });
    const theirs = await runtime.runText(other, "withbuttons", "");
    const mine: RenderableReply[] = [];
    for (let i = 0; i < cap + 10; i++)
      mine.push(await runtime.runText(testInvocation(), "withbuttons", ""));
    const stored = t.db
      .prepare("SELECT COUNT(*) AS n FROM button_actions WHERE user_id = 'u1'")
      .get() as { n: number };
    expect(stored.n).toBeLessThanOrEqual(cap);
    const press = (reply: RenderableReply | undefined, who = testInvocation()) =>
      Promise.all((reply?.buttons ?? []).map((b) => runtime.click(who, b.id)));
    expect((await press(mine.at(-1))).map((r) => r.text)).toEqual([
      "pressed 1",
      "pressed 2",
      "pressed 3",
    ]);
    expect((await press(mine[0]))[0]?.text).toMatch(/expired/);
    expect((await press(theirs, other))[0]?.text).toBe("pressed 1");
  });

  it("buttons of replies ready at the same time share one commit, each reply its own ids", async () => {
    t = await startRuntime();
    const db = t.db;
    let commits = 0;
    // The store's transactions, counted: the database itself is the real one.
    const counting = new Proxy(db, {
      get(target, key) {
        if (key === "transaction")
          return (fn: (...args: never[]) => unknown) => {
            const tx = target.transaction(fn);
            return (...args: never[]) => {
              commits++;
              return tx(...args);
            };
          };
        const value = Reflect.get(target, key);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    const store = new SqlActionStore(sqliteSql(counting));
    const replies = await Promise.all(
      Array.from({ length: 10 }, (_, n) =>
        store.putMany(
          [1, 2].map((b) => ({
            platform: "telegram",
            chatId: `c${n}`,
            userId: `u${n}`,
            action: { command: "c", action: "a", payload: { n, b } },
            expiresAt: Date.now() + 60_000,
          })),
        ),
      ),
    );
    expect(commits).toBe(1);
    expect(new Set(replies.flat()).size).toBe(20);
    for (const [n, ids] of replies.entries()) {
      expect(ids).toHaveLength(2);
      for (const [b, id] of ids.entries())
        expect((await store.get(id))?.action.payload).toEqual({ n, b: b + 1 });
    }
  });

  it("the per-person cap holds for any run of reply sizes: never above it, the newest kept, at least nine tenths of it", async () => {
    t = await startRuntime();
    const db = t.db;
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 25, max: 120 }),
        fc.array(fc.integer({ min: 1, max: 25 }), { minLength: 1, maxLength: 60 }),
        async (cap, sizes) => {
          db.prepare("DELETE FROM button_actions").run();
          const store = new SqlActionStore(sqliteSql(db), cap);
          let last: string[] = [];
          let total = 0;
          for (const size of sizes) {
            last = await store.putMany(
              Array.from({ length: size }, (_, i) => ({
                platform: "telegram",
                chatId: "c",
                userId: "u1",
                action: { command: "c", action: "a", payload: { i } },
                expiresAt: Date.now() + 60_000,
              })),
            );
            total += size;
            const { held } = db
              .prepare(
                "SELECT COALESCE(SUM(count), 0) AS held FROM button_actions WHERE user_id = 'u1'",
              )
              .get() as { held: number };
            expect(held).toBeLessThanOrEqual(cap);
            expect(held).toBeGreaterThanOrEqual(Math.min(total, Math.floor(cap * 0.9) - 25));
            for (const id of last) expect(await store.get(id)).toBeDefined();
          }
        },
      ),
      { numRuns: 100 },
    );
  });

  it("an id with a real reply's number but another secret, place or length finds nothing", async () => {
    t = await startRuntime();
    const runtime = runtimeWith(t, [withButtons], { actions: new SqlActionStore(sqliteSql(t.db)) });
    const reply = await runtime.runText(testInvocation(), "withbuttons", "");
    const id = reply.buttons?.[1]?.id ?? "";
    expect((await runtime.click(testInvocation(), id)).text).toBe("pressed 2");
    const bytes = Buffer.from(id, "base64url");
    const forged = (change: (b: Buffer) => void) => {
      const copy = Buffer.from(bytes);
      change(copy);
      return copy.toString("base64url");
    };
    for (const other of [
      forged((b) => {
        b[15] = (b[15] ?? 0) ^ 1; // the secret's last bit
      }),
      forged((b) => {
        b[5] = 7; // a place past the reply's three buttons
      }),
    ]) {
      expect(await new SqlActionStore(sqliteSql(t.db)).get(other)).toBeUndefined();
      expect((await runtime.click(testInvocation(), other)).text).not.toMatch(/pressed/);
    }
    expect(await new SqlActionStore(sqliteSql(t.db)).get(id.slice(0, 20))).toBeUndefined();
  });

  it("buttons issued before their store changed shape keep working until they expire", async () => {
    t = await startRuntime();
    // The store as the release before migration 8 left it, with one button each way.
    const db = openDatabase(t.dataDir, "older.sqlite", 7);
    try {
      const old = db.prepare(
        "INSERT INTO button_actions (id, platform, chat_id, user_id, action, expires_at) VALUES (?, 'telegram', 'c1', 'u1', ?, ?)",
      );
      const live = "AAAAAAAAAAAAAAAAAAAAAA";
      old.run(
        live,
        JSON.stringify({ command: "c", action: "a", payload: { n: 1 } }),
        Date.now() + 60_000,
      );
      old.run("BBBBBBBBBBBBBBBBBBBBBB", "{}", Date.now() - 1);
      migrate(db);
      const store = new SqlActionStore(sqliteSql(db));
      expect((await store.get(live))?.action).toEqual({
        command: "c",
        action: "a",
        payload: { n: 1 },
      });
      const [fresh] = await store.putMany([
        {
          platform: "telegram",
          chatId: "c1",
          userId: "u1",
          action: { command: "c", action: "b", payload: {} },
          expiresAt: Date.now() + 60_000,
        },
      ]);
      expect((await store.get(fresh ?? ""))?.action.action).toBe("b");
      expect(await store.prune(Date.now())).toBe(1);
      expect(await store.get("BBBBBBBBBBBBBBBBBBBBBB")).toBeUndefined();
      expect(await store.get(live)).toBeDefined();
    } finally {
      db.close();
    }
  });

  it("the in-memory store keeps the same cap per person", async () => {
    const store = new MemoryActionStore(1000, 5);
    const action = { command: "c", action: "a", payload: {} };
    const put = (userId: string, count: number) =>
      store.putMany(
        Array.from({ length: count }, () => ({
          platform: "telegram",
          chatId: "c",
          userId,
          action,
          expiresAt: Date.now() + 60_000,
        })),
      );
    const first = await put("u1", 3);
    await put("u2", 3);
    const last = await put("u1", 4);
    expect(await store.get(first[0] ?? "")).toBeUndefined();
    expect(await store.get(first[1] ?? "")).toBeUndefined();
    expect(await store.get(first[2] ?? "")).toBeDefined();
    for (const id of last) expect(await store.get(id)).toBeDefined();
  });
});

describe("autocomplete", () => {
  it("suggests collections seen in answers, by name or address, at most 25", async () => {
    t = await startRuntime();
    await t.say("/top volume 30d 25");
    await t.say("/top sales 30d 25");
    const all = await t.runtime.autocomplete("audience", "collection", "");
    expect(all.length).toBe(25);
    const first = all[0]!;
    const byAddress = await t.runtime.autocomplete(
      "audience",
      "collection",
      first.value.slice(0, 8),
    );
    expect(byAddress.map((choice) => choice.value)).toContain(first.value);
    expect(await t.runtime.autocomplete("top", "metric", "")).toEqual([]);
  });
});
