import { afterEach, describe, expect, it } from "vitest";
import type { ScriptedResponse } from "../src/simulator/index.ts";
import { replyHelpers } from "./command-helpers.ts";
import { type RuntimeSetup, startRuntime } from "./helpers.ts";

/** Upstream failures, as every command words them. */

let t: RuntimeSetup;
const { button } = replyHelpers(() => t);

describe("each test on its own runtime", () => {
  afterEach(async () => {
    await t?.close();
  });

  describe("upstream failures, per command", () => {
    const lines = (f: RuntimeSetup["sim"]["fixtures"]) => [
      `/whois ${f.walletEns}`,
      `/audience ${f.collection}`,
      "/top volume 1d",
      `/nft ${f.token.contract} ${f.token.tokenId}`,
    ];
    const cases: [string, ScriptedResponse, RegExp][] = [
      ["503", { status: 503 }, /unavailable right now/],
      ["429 past the budget", { status: 429, retryAfterSeconds: 120 }, /busy, try again in 120 s/],
      ["malformed JSON", { status: 200, body: "{oops" }, /could not read/],
      ["401", { status: 401 }, /refused the bot's key/],
    ];
    it.each(cases)("%s gets its sentence from every command", async (_label, scripted, message) => {
      t = await startRuntime({ API_RETRIES: "0", API_RETRY_MAX_TOTAL_MS: "1000" });
      for (const line of lines(t.sim.fixtures)) {
        t.sim.script([scripted, scripted]);
        const reply = await t.say(line);
        expect(reply.text, line).toMatch(message);
      }
    });
  });
});

describe("upstream failures", () => {
  afterEach(async () => {
    await t.close();
  });

  const lines: [string, (f: RuntimeSetup["sim"]["fixtures"]) => string, number][] = [
    ["behaviors", (f) => `/behaviors ${f.wallet}`, 1],
    ["contracts", () => "/contracts", 1],
    ["wallet", (f) => `/wallet ${f.wallet}`, 1],
    ["owners", (f) => `/owners ${f.collection}`, 2],
    ["common", (f) => `/common ${f.collection} 30d`, 1],
    ["stats", (f) => `/stats ${f.collection}`, 1],
    ["walletstats", (f) => `/walletstats ${f.wallet}`, 1],
    ["profile", (f) => `/profile ${f.collection}`, 1],
    ["segment", (f) => `/segment ${f.collection}`, 1],
  ];

  it.each(lines)("/%s: unavailable, busy and unreadable answers", async (_name, line, calls) => {
    t = await startRuntime({ API_RETRIES: "0" });
    const command = line(t.sim.fixtures);
    const times = <T>(value: T) => Array.from({ length: calls }, () => value);

    t.sim.script(times({ status: 503 }));
    expect((await t.say(command)).text).toContain("unavailable");
    t.sim.script(times({ status: 429, retryAfterSeconds: 120 }));
    expect((await t.say(command)).text).toContain("busy, try again in 120 s");
    t.sim.script(times({ status: 200, body: "<html>502 Bad Gateway</html>" }));
    expect((await t.say(command)).text).toContain("could not read");
  });

  it("unavailable once the retries of a 503 burst are spent", async () => {
    t = await startRuntime({ API_RETRIES: "3" });
    t.sim.script([{ status: 503 }, { status: 503 }, { status: 503 }, { status: 503 }]);
    const reply = await t.say(`/segment ${t.sim.fixtures.collection}`);
    expect(reply.text).toContain("unavailable");
    expect(reply.tone).toBe("error");
    expect(t.sim.countRequests()).toBe(4);
  });

  it("a failure in the middle of a CSV export gives the message, not a partial file", async () => {
    t = await startRuntime({ API_RETRIES: "0" });
    const f = t.sim.fixtures;
    // This segment is longer than one export page of 500, so the export asks twice.
    const first = await t.say(`/segment ${f.collection} ${f.erc1155Collection} condition:any`);
    t.sim.script([{ status: 200 }, { status: 503 }]);
    const exported = await t.press(button(first, "Export CSV"));
    expect(exported.files).toBeUndefined();
    expect(exported.text).toContain("unavailable");
  });
});
