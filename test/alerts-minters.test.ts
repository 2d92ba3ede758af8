import { afterEach, describe, expect, it } from "vitest";
import {
  BAD_ACTOR,
  lookUpMinters,
  type MinterLookupSettings,
  NOT_BAD_ACTOR,
} from "../src/alerts/minters.ts";
import type { DueAlert } from "../src/alerts/store/types.ts";
import type { ApiClient } from "../src/api/client.ts";
import { behaviorLabel } from "../src/core/format.ts";
import type { RenderableReply } from "../src/core/reply.ts";
import { alertPipeline } from "./alert-helpers.ts";
import { type RuntimeSetup, startRuntime } from "./helpers.ts";

let t: RuntimeSetup;
afterEach(async () => {
  const setup = t;
  // Closed once: the tests below without a runtime must not close the last one again.
  t = undefined as unknown as RuntimeSetup;
  await setup?.close();
});

const BEHAVIORS_PATH = "/audiences/v1beta1/behaviors/by_wallets";

function alertsFor(
  setup: RuntimeSetup,
  options: {
    suppressReports?: number;
    onHidden?: (n: number) => void;
    minterLookup?: MinterLookupSettings;
  } = {},
) {
  const suppressed: DueAlert[] = [];
  const pipeline = alertPipeline(setup, {
    worker: {
      reports: setup.store.reports,
      onSuppressed: (alerts) => suppressed.push(...alerts),
    },
    workerSettings:
      options.suppressReports !== undefined ? { suppressReports: options.suppressReports } : {},
    poller: {
      ...(options.onHidden ? { onHidden: options.onHidden } : {}),
      ...(options.minterLookup ? { minterLookup: options.minterLookup } : {}),
    },
  });
  return { ...pipeline, suppressed };
}

const subscribe = (setup: RuntimeSetup, chatId: string, badActors?: "hide" | "show") =>
  setup.subscriptions.upsert({
    platform: "telegram",
    chatId,
    chain: "ethereum",
    types: "all",
    ...(badActors ? { badActors } : {}),
    createdBy: "telegram:u1",
    now: Date.now(),
  });

/** Mints until an NFT contract comes out (fungible ones are not alerted). */
function mintNft(setup: RuntimeSetup, minter?: string) {
  for (;;) {
    const [minted] = setup.sim.mint(1, undefined, minter ? { minter } : {});
    if (minted && !minted.types.includes("TYPE_ERC20")) return minted;
  }
}

const field = (reply: RenderableReply | undefined, name: string) =>
  reply?.fields?.find((f) => f.name === name)?.value;

describe("the minter's behavior label", () => {
  it("a burst of 300 mints is one behaviors call; every contract keeps its minter's label", async () => {
    t = await startRuntime();
    await subscribe(t, "chat-1");
    const { poller, worker, sender, alerts } = alertsFor(t);
    await poller.pollOnce();
    const before = t.sim.countRequests(BEHAVIORS_PATH);
    const minted = t.sim.mint(300).filter((c) => !c.types.includes("TYPE_ERC20"));
    const result = await poller.pollOnce();
    expect(result).toMatchObject({ kind: "polled", fresh: minted.length, hidden: 0 });
    expect(t.sim.countRequests(BEHAVIORS_PATH) - before).toBe(1);
    // Every minter is known at least as "no history of spam mints".
    const due = await alerts.due(Date.now(), 1000);
    expect(due).toHaveLength(minted.length);
    for (const alert of due) expect(alert.contract.minterBehavior).toBeDefined();
    expect(due.some((alert) => alert.contract.minterBehavior === NOT_BAD_ACTOR)).toBe(true);
    // Polling the same window again looks nothing up (stored with the contracts).
    await poller.pollOnce();
    expect(t.sim.countRequests(BEHAVIORS_PATH) - before).toBe(1);
    // The digest has a Minter column in words.
    await worker.drain();
    expect(sender.sent).toHaveLength(1);
    const table = sender.sent[0]?.reply.table;
    expect(table?.columns).toContain("Minter");
    expect(table?.rows[0]).toContain("No spam history");
  });

  it("one mint's alert shows its minter's label in words, and the contract types", async () => {
    t = await startRuntime();
    await subscribe(t, "chat-1");
    const { poller, worker, sender } = alertsFor(t);
    await poller.pollOnce();
    const minted = mintNft(t);
    await poller.pollOnce();
    await worker.drain();
    const { aggregatedBehaviors } = await t.api.audiences.behaviorsByWallets([
      minted.mintEvent.minterAddress,
    ]);
    const behavior = aggregatedBehaviors[0]?.behavior ?? "";
    expect(behavior).toMatch(/^BEHAVIOR_/);
    const reply = sender.sent[0]?.reply;
    expect(reply?.title).toMatch(/^New collection: /);
    expect(field(reply, "Minter behavior")).toBe(
      behavior === "BEHAVIOR_UNSPECIFIED" ? "No label (new to NFTs)" : behaviorLabel(behavior),
    );
    expect(field(reply, "Type")).toMatch(/ERC-721|ERC-1155/);
  });

  it("a failed lookup does not hold the alert: it goes out with the minter unknown", async () => {
    t = await startRuntime();
    await subscribe(t, "chat-1");
    const { poller, worker, sender } = alertsFor(t);
    await poller.pollOnce();
    mintNft(t);
    // The contracts page is answered; every try at the behaviors call (4 with 3 retries) fails.
    t.sim.script([{ status: 200 }, ...Array.from({ length: 4 }, () => ({ status: 503 }))]);
    const result = await poller.pollOnce();
    expect(result).toMatchObject({ kind: "polled", enqueued: 1 });
    // Each try at the lookup reached the simulator and failed (one call, its retries included).
    expect(t.sim.countRequests(BEHAVIORS_PATH)).toBe(4);
    await worker.drain();
    expect(sender.sent).toHaveLength(1);
    expect(field(sender.sent[0]?.reply, "Minter behavior")).toBe("unknown");
  });

  it("a lookup that hangs is given up at its time limit: the alert goes out with the minter unknown", async () => {
    t = await startRuntime();
    await subscribe(t, "chat-1");
    const { poller, worker, sender } = alertsFor(t, { minterLookup: { timeoutMs: 300 } });
    await poller.pollOnce();
    mintNft(t);
    t.sim.script([{ status: 200 }, { status: 200, hang: true }]);
    const result = await poller.pollOnce();
    expect(result).toMatchObject({ kind: "polled", enqueued: 1 });
    // Given up after the one hanging call: no retry past the time limit.
    expect(t.sim.countRequests(BEHAVIORS_PATH)).toBe(1);
    await worker.drain();
    expect(field(sender.sent[0]?.reply, "Minter behavior")).toBe("unknown");
  });
});

describe("bad actors' mints", () => {
  it("are not posted by default; a channel with badactors:show gets them marked as likely spam", async () => {
    t = await startRuntime();
    await subscribe(t, "hides");
    // The command: /subscribe badactors:show, and /subscriptions says so.
    const said = await t.say("/subscribe badactors:show", { chat: { id: "shows", kind: "group" } });
    expect(t.text(said)).toMatch(/marked as likely spam/);
    const listed = await t.say("/subscriptions", { chat: { id: "shows", kind: "group" } });
    expect(t.text(listed)).toMatch(/Posted, marked as likely spam/);
    expect(t.text(await t.say("/subscriptions", { chat: { id: "hides", kind: "group" } }))).toMatch(
      /Not posted \(default\)/,
    );
    let hiddenCount = 0;
    const { poller, worker, sender } = alertsFor(t, { onHidden: (n) => (hiddenCount += n) });
    await poller.pollOnce();
    const minted = mintNft(t, "badactor");
    const { aggregatedBehaviors } = await t.api.audiences.behaviorsByWallets([
      minted.mintEvent.minterAddress,
    ]);
    expect(aggregatedBehaviors.map((b) => b.behavior)).toEqual([BAD_ACTOR]);
    const result = await poller.pollOnce();
    expect(result).toMatchObject({ kind: "polled", fresh: 1, enqueued: 1, hidden: 1 });
    expect(hiddenCount).toBe(1);
    await worker.drain();
    expect(sender.sent.map((s) => s.chatId)).toEqual(["shows"]);
    const reply = sender.sent[0]?.reply;
    expect(reply?.title).toMatch(/^Likely spam: new collection: /);
    expect(reply?.text).toMatch(/history of minting spam collections/);
    expect(field(reply, "Minter behavior")).toBe("Bad actor (has minted spam collections)");
  });

  it("in a burst, each bad actor is found by splitting the batch, and only its mints are hidden", async () => {
    t = await startRuntime();
    await subscribe(t, "chat-1");
    const { poller, alerts } = alertsFor(t);
    await poller.pollOnce();
    const ordinary = t.sim.mint(60).filter((c) => !c.types.includes("TYPE_ERC20"));
    const bad = mintNft(t, "badactor");
    const before = t.sim.countRequests(BEHAVIORS_PATH);
    const result = await poller.pollOnce();
    const calls = t.sim.countRequests(BEHAVIORS_PATH) - before;
    expect(result).toMatchObject({ fresh: ordinary.length + 1, hidden: 1 });
    expect(calls).toBeGreaterThan(1);
    expect(calls).toBeLessThanOrEqual(1 + Math.ceil(Math.log2(62)));
    const due = await alerts.due(Date.now(), 1000);
    expect(due.map((a) => a.contract.address)).not.toContain(bad.address);
    expect(due).toHaveLength(ordinary.length);
    for (const alert of due) expect(alert.contract.minterBehavior).not.toBe(BAD_ACTOR);
  });
});

describe("contracts the channel reported as spam", () => {
  const report = (setup: RuntimeSetup, chatId: string, userId: string, contract: string) =>
    setup.store.reports.create(
      {
        platform: "telegram",
        chatId,
        userId,
        userName: userId,
        wallet: `0x${"1".repeat(40)}`,
        contract,
        tokenId: "",
        kind: "spam",
        feedback: null,
      },
      Date.now(),
    );

  it("are not posted after ALERT_SUPPRESS_REPORTS reports, with a one-line note once (across a restart)", async () => {
    t = await startRuntime();
    await subscribe(t, "chat-1");
    await subscribe(t, "chat-2");
    const { poller, worker, sender, alerts, suppressed } = alertsFor(t, { suppressReports: 2 });
    await poller.pollOnce();
    const minted = mintNft(t);
    await poller.pollOnce();
    // Two members of chat-1 report it; chat-2 has one report only.
    await report(t, "chat-1", "u1", minted.address);
    await report(t, "chat-1", "u2", minted.address);
    await report(t, "chat-2", "u3", minted.address);
    await worker.drain();
    expect(await alerts.depth()).toBe(0);
    const toChat1 = sender.sent.filter((s) => s.chatId === "chat-1");
    expect(toChat1).toHaveLength(1);
    expect(toChat1[0]?.reply.text).toMatch(
      /^Not posted here: .+, which 2 members of this channel reported as spam\.$/,
    );
    expect(sender.sent.filter((s) => s.chatId === "chat-2")[0]?.reply.title).toMatch(
      /^New collection: /,
    );
    expect(suppressed).toHaveLength(1);

    // The same contract queued again for chat-1 (as after a crash): dropped without a second note,
    // by a new worker (a restart).
    const sub = await t.subscriptions.find("telegram", "chat-1");
    t.db
      .prepare(
        "INSERT INTO outbox (subscription_id, chain, contract, note, due_at, created_at) VALUES (?, 'ethereum', ?, NULL, 0, 0)",
      )
      .run(sub?.id, minted.address.toLowerCase());
    const restarted = alertsFor(t, { suppressReports: 2 });
    await restarted.worker.drain();
    expect(restarted.sender.sent).toHaveLength(0);
    expect(await alerts.depth()).toBe(0);
    expect(restarted.suppressed).toHaveLength(1);
  });

  it("with ALERT_SUPPRESS_REPORTS 0, reports never hold an alert back", async () => {
    t = await startRuntime();
    await subscribe(t, "chat-1");
    const { poller, worker, sender } = alertsFor(t, { suppressReports: 0 });
    await poller.pollOnce();
    const minted = mintNft(t);
    await poller.pollOnce();
    await report(t, "chat-1", "u1", minted.address);
    await report(t, "chat-1", "u2", minted.address);
    await worker.drain();
    expect(sender.sent[0]?.reply.title).toMatch(/^New collection: /);
  });
});

describe("lookUpMinters on endpoint 1's counts", () => {
  /** A service that knows each wallet's label and answers counts, leaving out unlabelled ones. */
  function fakeApi(labels: Map<string, string>) {
    const calls: string[][] = [];
    const api = {
      audiences: {
        async behaviorsByWallets(wallets: readonly string[]) {
          calls.push([...wallets]);
          const counts = new Map<string, number>();
          for (const wallet of wallets) {
            const label = labels.get(wallet);
            if (label) counts.set(label, (counts.get(label) ?? 0) + 1);
          }
          return {
            aggregatedBehaviors: [...counts].map(([behavior, n]) => ({
              behavior,
              walletsCount: String(n),
              walletsPercentage: (n * 100) / wallets.length,
            })),
          };
        },
      },
    } as unknown as ApiClient;
    return { api, calls };
  }
  const wallet = (n: number) => `0x${n.toString(16).padStart(40, "0")}`;

  it("finds each bad actor among 300 by halving, in about log2(300) calls each; the rest read 'not a bad actor'", async () => {
    const kinds = ["BEHAVIOR_COLLECTOR", "BEHAVIOR_FLIPPER", "BEHAVIOR_WHALE"];
    const labels = new Map<string, string>();
    for (let n = 0; n < 300; n++) labels.set(wallet(n), kinds[n % 3] as string);
    labels.set(wallet(17), BAD_ACTOR);
    labels.set(wallet(250), BAD_ACTOR);
    labels.delete(wallet(5)); // a wallet the service has no label for
    const { api, calls } = fakeApi(labels);
    const found = await lookUpMinters(api, [...Array(300).keys()].map(wallet));
    expect(found.get(wallet(17))).toBe(BAD_ACTOR);
    expect(found.get(wallet(250))).toBe(BAD_ACTOR);
    const others = [...found].filter(([, label]) => label !== BAD_ACTOR);
    expect(others).toHaveLength(298);
    for (const [address, label] of others)
      expect([NOT_BAD_ACTOR, labels.get(address) ?? "BEHAVIOR_UNSPECIFIED"]).toContain(label);
    expect(calls[0]).toHaveLength(300);
    expect(calls.length).toBeLessThanOrEqual(1 + 2 * Math.ceil(Math.log2(300)));
  });

  it("a poll's few minters of several behaviors each get their own label", async () => {
    const labels = new Map([
      [wallet(1), "BEHAVIOR_COLLECTOR"],
      [wallet(2), "BEHAVIOR_WHALE"],
      [wallet(3), "BEHAVIOR_COLLECTOR"],
    ]);
    const { api, calls } = fakeApi(labels);
    const found = await lookUpMinters(api, [wallet(1), wallet(2), wallet(3)]);
    expect(found).toEqual(labels);
    expect(calls.length).toBeLessThanOrEqual(3);
    // Five is past the default: one call, and "not a bad actor" for each.
    labels.set(wallet(4), "BEHAVIOR_FLIPPER");
    labels.set(wallet(5), "BEHAVIOR_FLIPPER");
    const five = fakeApi(labels);
    const many = await lookUpMinters(five.api, [...labels.keys()]);
    expect(five.calls).toHaveLength(1);
    expect(new Set(many.values())).toEqual(new Set([NOT_BAD_ACTOR]));
  });

  it("500 wallets a call at most; a group left unresolved when the calls run out is unknown", async () => {
    const labels = new Map<string, string>();
    for (let n = 0; n < 1200; n++) labels.set(wallet(n), "BEHAVIOR_EXPLORER");
    labels.set(wallet(3), BAD_ACTOR);
    const { api, calls } = fakeApi(labels);
    const found = await lookUpMinters(api, [...Array(1200).keys()].map(wallet), { maxCalls: 3 });
    expect(calls.map((c) => c.length)).toEqual([500, 500, 200]);
    // The first 500 hold the bad actor: unknown without more calls; the others are all explorers.
    expect(found.get(wallet(3))).toBeUndefined();
    expect(found.get(wallet(4))).toBeUndefined();
    expect(found.get(wallet(600))).toBe("BEHAVIOR_EXPLORER");
    expect(found.size).toBe(700);
  });
});
