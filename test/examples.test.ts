/**
 * The first minute of a new user: every example /help shows, typed into the console chat of a bot
 * built as `npm start` builds it (embedded simulator, console adapter), answers with data. The
 * examples are data on each command definition, so a new command or example is covered as is.
 */

import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough, Writable } from "node:stream";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { allCommands } from "../commands/index.ts";
import { type Bot, createBot } from "../src/bot.ts";
import { parseConfig } from "../src/config.ts";
import type { OutcomeEvent } from "../src/core/outcome.ts";
import { silentLogger } from "../src/log.ts";
import { CAST_COLLECTIONS, DEMO_WALLET } from "../src/simulator/index.ts";
import { DOC_PAGES } from "./doc-pages.ts";
import { proveWithLink } from "./helpers.ts";

const COMMANDS = allCommands();
const EXAMPLES = COMMANDS.flatMap((command) =>
  command.examples.map((example): [string, string] => [example, command.name]),
);

/** How the console marks a warning or an error (src/render/console.ts). */
const MARKED = /^(! |✖ )/;
/**
 * Words of an answer that failed (besides its outcome and mark), or found nothing where the
 * example should show data. ("Usage:" is no failure here: /help shows it.)
 */
const NO_DATA: readonly RegExp[] = [
  /not found/i,
  /something went wrong/i,
  /not a valid/i,
  /\bholds no\b/i,
  /\blists no\b/i,
  /\bhas no (behavior|financial|owners)/i,
  /\bno (ENS name|owners?|wallets?|other collection|owner-count|collections ranked|contracts)\b/i,
];

/**
 * Words of the bot's inner workings that mean nothing to the person asking: the data service's
 * interface document ("the spec"), its endpoints and schemas, "API".
 */
const INNER_WORDS = /\b(spec|specs|specification|schema|endpoints?)\b|\bAPI\b/i;

interface ConsoleBot {
  bot: Bot;
  /** What the console's gates printed unasked: roles given and taken back. */
  gated: string[];
  /** Types a line into the console and returns what it printed and the outcomes it caused. */
  type(line: string): Promise<{ text: string; outcomes: OutcomeEvent[] }>;
  close(): Promise<void>;
}

/** A bot as `npm start` builds it (embedded simulator, console chat), in its own data directory. */
async function startConsoleBot(): Promise<ConsoleBot> {
  const dataDir = mkdtempSync(join(tmpdir(), "bot-examples-"));
  const input = new PassThrough();
  const outcomes: OutcomeEvent[] = [];
  const gated: string[] = [];
  let waiting: ((text: string) => void) | undefined;
  const output = new Writable({
    write(chunk, _encoding, callback) {
      const text = String(chunk);
      // A new-collection alert, or a role given on the console, is not the answer to the line.
      if (text.startsWith("[gate]")) gated.push(text);
      else if (!text.startsWith("[alert]")) {
        waiting?.(text);
        waiting = undefined;
      }
      callback();
    },
  });
  const config = parseConfig({
    DATA_DIR: dataDir,
    SIMULATOR_MINT_INTERVAL_MS: "0",
    // The examples come in one quick burst; a person typing them never meets the upstream budget.
    API_BUDGET_PER_SECOND: "100000",
    API_BUDGET_BURST: "100000",
  });
  const bot = await createBot(config, { logger: silentLogger(), input, output });
  await bot.start();
  const metrics = bot.runtime.onOutcome;
  bot.runtime.onOutcome = (event) => {
    outcomes.push(event);
    metrics?.(event);
  };
  return {
    bot,
    gated,
    async type(line) {
      const before = outcomes.length;
      const printed = new Promise<string>((resolve) => {
        waiting = resolve;
      });
      input.write(`${line}\n`);
      const text = (await printed).trim();
      // Counted after the answer went out.
      await bot.runtime.settled();
      return { text, outcomes: outcomes.slice(before) };
    },
    async close() {
      input.end();
      await bot.finished;
      await bot.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

let main: ConsoleBot | undefined;

/** The line is answered by `command`, successfully, with no warning and with data. */
async function expectData(line: string, command: string) {
  return expectDataOn(main as ConsoleBot, line, command);
}

async function expectDataOn(on: ConsoleBot, line: string, command: string) {
  const answer = await on.type(line);
  expect(answer.outcomes.map((event) => [event.command, event.outcome])).toEqual([[command, "ok"]]);
  expect(answer.text).not.toMatch(MARKED);
  for (const pattern of NO_DATA) expect(answer.text).not.toMatch(pattern);
  expect(answer.text).not.toMatch(INNER_WORDS);
  return answer;
}

/**
 * /verify prints a link to the bot's page; the newcomer opens it and signs with the simulator's
 * demo wallet (as the page's wallet would, with its key), so the examples after it (/wallets,
 * /report, /unlink) have a proved wallet to show, report for and forget.
 */
async function exampleOf(line: string, command: string) {
  const answer = await expectData(line, command);
  if (command !== "verify") return;
  const link = /http:\/\/127\.0\.0\.1:\d+\/verify\/[A-Za-z0-9_-]+/.exec(answer.text)?.[0];
  expect(link, answer.text).toBeDefined();
  await proveWithLink(
    (main as ConsoleBot).bot.verify,
    link as string,
    privateKeyToAccount(DEMO_WALLET.privateKey),
  );
}

beforeAll(async () => {
  main = await startConsoleBot();
});

afterAll(async () => {
  await main?.close();
});

describe("the console is a simulated community you manage (issue 38)", () => {
  let own: ConsoleBot | undefined;
  afterAll(async () => {
    await own?.close();
  });

  it("a gate added there gives its role when the demo wallet is proved, printed", async () => {
    own = await startConsoleBot();
    await expectDataOn(own, "/gate add holds 1 Azuki", "gate");
    const answer = await expectDataOn(own, "/verify", "verify");
    const link = /http:\/\/127\.0\.0\.1:\d+\/verify\/[A-Za-z0-9_-]+/.exec(answer.text)?.[0];
    await proveWithLink(
      own.bot.verify,
      link as string,
      privateKeyToAccount(DEMO_WALLET.privateKey),
    );
    await expect
      .poll(() => own?.gated.join("\n") ?? "", { timeout: 10_000 })
      .toMatch(/^\[gate\] You were given the role @Holders/m);
    // And the report the demo wallet makes there is made.
    const report = await expectDataOn(
      own,
      "/report spam 0xBC4CA0EdA7647A8aB7C2061c2E118A18a936f13D 1",
      "report",
    );
    expect(report.text).toMatch(/^Reported as spam/);
  });
});

describe("every /help example on the embedded simulator", () => {
  it("covers every command", () => {
    const without = COMMANDS.filter((command) => command.examples.length === 0);
    expect(without.map((command) => command.name)).toEqual([]);
  });

  // In /help's order, in one chat, as a person trying them one after another would.
  it.each(EXAMPLES)("%s", exampleOf);
});

describe("the famous collections on the embedded simulator", () => {
  const lines = CAST_COLLECTIONS.flatMap(({ address }) =>
    ["audience", "owners", "stats", "common", "profile", "segment"].map(
      (command): [string, string] => [`/${command} ${address}`, command],
    ),
  );

  it.each(lines)("%s", exampleOf);
});

/**
 * The documentation's examples of the commands that set things up (chains, alerts, rules,
 * digests, watches), quoted in prose or in code blocks of the README and every page under docs/,
 * in their order (README first, then the pages by name) after a /subscribe on each chain they
 * name: each is answered without a warning or an error. Of /gate, the tests of a wallet (gates
 * themselves are for Discord servers and Telegram groups, not the console). Lines with a placeholder (<…>, […], a|b)
 * or a bot's @name are forms, and a subcommand named in prose without its value
 * ("`/settings chain`", "`/digest add`") is a name: neither is an example.
 */
const DOC_EXAMPLES = [
  ...new Set(
    DOC_PAGES.flatMap((page) => [
      ...readFileSync(page, "utf8").matchAll(
        /`(\/(?:alerts|settings|subscribe|unsubscribe|digest|watch|top|gate test)\b[^`]*)`|^(\/(?:digest|watch) [^\n]+)$/gm,
      ),
    ])
      .map((match) => (match[1] ?? match[2] ?? "").trim())
      .filter(
        (line) =>
          line.includes(" ") && !/[<>[\]|…@]/.test(line) && !/^\/\w+ (add|chain|test)$/.test(line),
      ),
  ),
];

describe("the set-up examples of the README and docs/ on the embedded simulator", () => {
  // A bot of their own: the /help examples above leave watches and digests behind.
  let readme: ConsoleBot | undefined;
  beforeAll(async () => {
    readme = await startConsoleBot();
  });
  afterAll(async () => {
    await readme?.close();
  });

  it("finds them in the README and under docs/", () => {
    expect(DOC_EXAMPLES).toEqual(
      expect.arrayContaining([
        // README.md
        "/top volume 1d chain:base",
        // docs/alerts.md, docs/commands.md, docs/digests-and-watches.md
        "/alerts quiet 23:00-07:00 Europe/Berlin",
        "/settings chain base",
        "/digest add weekly mon 09:00 Europe/Berlin top sales 7d",
        "/watch collection 0xBC4CA0EdA7647A8aB7C2061c2E118A18a936f13D owners 10",
        // README.md, docs/gates.md: one gate criterion of each kind, tested on the demo wallet
        "/gate test 0xEC3111Cb30983AC4545f576b2793cA163fE0294B holds 1 Azuki",
        "/gate test 0xEC3111Cb30983AC4545f576b2793cA163fE0294B avgprice 0.5, collections 3",
      ]),
    );
  });

  it.each(DOC_EXAMPLES)("%s", async (line) => {
    // Subscribed on the chains the examples name, as the README's reader would be by then.
    const bot = readme as ConsoleBot;
    await bot.type("/subscribe");
    await bot.type("/subscribe chain:base");
    const answer = await bot.type(line);
    expect(answer.outcomes.map((event) => event.outcome)).not.toContain("error");
    expect(answer.text).not.toMatch(MARKED);
  });
});

describe("README", () => {
  it("shows, for every command, one of the examples /help shows", () => {
    const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
    const shown = new Map<string, string>();
    for (const line of readme.split("\n")) {
      const row = /^\| `\/([a-z_]+)[^|]*\|.*\| `(\/[^`]+)` \|$/.exec(line);
      if (row?.[1] && row[2]) shown.set(row[1], row[2]);
    }
    // A hidden command (/link, retired) has no row.
    for (const command of COMMANDS.filter((c) => !c.hidden)) {
      expect(command.examples, `README's example of /${command.name}`).toContain(
        shown.get(command.name),
      );
    }
  });
});
