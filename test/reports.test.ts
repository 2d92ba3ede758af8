import { mkdtempSync, rmSync } from "node:fs";
import { type AddressInfo, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { createApiClient } from "../src/api/client.ts";
import { apiClientSettings, createBot } from "../src/bot.ts";
import { parseConfig } from "../src/config.ts";
import type { Invocation } from "../src/core/command.ts";
import { fullAddress } from "../src/core/format.ts";
import type { RenderableReply } from "../src/core/reply.ts";
import { silentLogger } from "../src/log.ts";
import { attemptReport, ReportRetryWorker } from "../src/reports/submit.ts";
import { SqlReportStore } from "../src/store/shared/reports.ts";
import { openDatabase } from "../src/store/sqlite/index.ts";
import { sqliteSql } from "../src/store/sqlite/query.ts";
import type { ReportStore } from "../src/store/types.ts";
import { type RuntimeSetup, startRuntime } from "./helpers.ts";

let t: RuntimeSetup;
afterEach(async () => {
  await t?.close();
});

const button = (reply: RenderableReply, label: string | RegExp) => {
  const found = reply.buttons?.find((b) =>
    typeof label === "string" ? b.label === label : label.test(b.label),
  );
  if (!found) throw new Error(`no ${String(label)} button under: ${t.text(reply)}`);
  return found.id;
};

/**
 * The person's own wallet, proved as on the page (a new key signs the challenge), holding six
 * ordinary NFTs and three of spam collections: reports are made only for a wallet one proved.
 */
async function ownWallet(who: Partial<Invocation> = {}): Promise<string> {
  const { address } = await t.prove(who);
  for (const spam of [false, false, false, false, false, false, true, true, true])
    t.sim.giveNft(address, undefined, { spam });
  return address;
}

/** /wallet of one's own, then "Spam #1" (or "Not spam #1"), then Confirm: the whole button flow. */
async function reportFirstWalletItem(who: Partial<Invocation> = {}) {
  const wallet = await ownWallet(who);
  const list = await t.say(`/wallet ${wallet} exclude`, who);
  const ask = await t.press(button(list, "Spam #1"), who);
  return { list, ask, wallet };
}

describe("wallets and proofs", () => {
  it("/link no longer links: it points to /verify and keeps nothing", async () => {
    t = await startRuntime();
    const { fixtures: f } = t.sim;
    const answer = await t.say(`/link ${f.walletEns}`);
    expect(answer.text).toMatch(/prove yours with \/verify/);
    expect(answer.private).toBe(true);
    expect(await t.store.wallets.list("telegram", "u1")).toEqual([]);
  });

  it("/wallets lists proved wallets with chain and time, and migrated ones as not proved; /unlink forgets", async () => {
    t = await startRuntime();
    expect((await t.say("/wallets")).text).toMatch(/no wallets here yet: \/verify proves one/);
    // A wallet linked before proofs, as the migration keeps it.
    const old = t.sim.fixtures.wallet;
    await t.store.wallets.link("telegram", "u1", old.toLowerCase(), old, Date.now() - 86_400_000);
    const { address } = await t.prove();
    const list = await t.say("/wallets");
    expect(list.confidential).toEqual({ what: "your wallets" });
    const text = t.text(list);
    expect(text).toContain(`${address}: proved by signature on Ethereum, `);
    expect(text).toContain(`${fullAddress(old)}: not proved`);
    expect(list.footer).toContain(`Spam reports are made for ${address}`);
    // Another person sees none of them.
    expect((await t.say("/wallets", { user: { id: "u2", name: "Other" } })).text).toMatch(
      /no wallets here yet/,
    );
    expect((await t.say(`/unlink ${address}`)).text).toBe(`Forgotten: ${address} and its proof.`);
    expect((await t.say(`/unlink ${address}`)).text).toMatch(/is not one of your wallets/);
    expect((await t.say("/unlink 0x123")).text).toMatch(/not a valid wallet address/);
    expect((await t.say("/unlink mine")).text).toMatch(/Give the wallet's address/);
    expect((await t.say("/unlink all")).text).toBe("Forgotten: your wallet and its proof.");
    expect(await t.store.wallets.list("telegram", "u1")).toEqual([]);
    expect((await t.say("/unlink all")).text).toBe("There was nothing to forget.");
  });

  it("reports only for a proved wallet of one's own: a migrated one, or another's, is refused", async () => {
    t = await startRuntime();
    const { fixtures: f } = t.sim;
    await t.store.wallets.link("telegram", "u1", f.wallet.toLowerCase(), f.wallet, Date.now());
    const refused = await t.say(`/report spam ${f.spamCollection} 1`);
    expect(refused.text).toMatch(
      new RegExp(`${fullAddress(f.wallet)} was linked on your word: prove it with /verify`),
    );
    // Named outright: not proved is refused all the same, as is anyone else's wallet.
    expect((await t.say(`/report spam ${f.spamCollection} 1 ${f.wallet}`)).text).toMatch(
      /is not proved: prove it with \/verify/,
    );
    const theirs = await ownWallet({ user: { id: "u2", name: "Other" } });
    expect(await t.refusal(`/report spam ${f.spamCollection} 1 ${theirs}`)).toBe(
      "no_proved_wallet",
    );
    // A /wallet of someone else's offers no buttons that would refuse, but what one can do.
    const list = await t.say(`/wallet ${theirs} exclude`);
    expect((list.buttons ?? []).map((b) => b.label).filter((l) => /spam/i.test(l))).toEqual([]);
    expect(list.text).toMatch(/report spam from your own NFTs, prove your wallet with \/verify/);
    // Its prover's buttons, pressed by another, report for nobody.
    const theirList = await t.say(`/wallet ${theirs} exclude`, {
      user: { id: "u2", name: "Other" },
    });
    expect((await t.press(button(theirList, "Spam #1"))).text).toMatch(/is not one of yours/);
    expect(t.sim.reports).toHaveLength(0);
    expect(await t.store.reports.forChat("telegram", "chat-1")).toHaveLength(0);
  });
});

describe("names over addresses (issue 38)", () => {
  it("a report of a collection typed by name says its name, with the short address", async () => {
    t = await startRuntime();
    await ownWallet();
    const done = await t.say("/report spam azuki 1");
    expect(done.text).toMatch(/^Reported as spam by Tester: token 1 of Azuki \(0xED5A…C544\)/);
    // /reports' Collection column names it too.
    const list = await t.say("/reports");
    expect(list.table?.rows[0]).toContain("Azuki");
  });
});

describe("the button flow", () => {
  it("a /wallet item: confirm names the wallet asked about; one call to endpoint 19; 'Reported by'", async () => {
    t = await startRuntime();
    const { ask, wallet } = await reportFirstWalletItem();
    expect(ask.private).toBe(true);
    expect(ask.title).toBe("Report as spam?");
    expect(ask.text?.toLowerCase()).toContain(wallet.toLowerCase());
    expect(t.sim.reports).toHaveLength(0);
    const done = await t.press(button(ask, "Confirm report"));
    expect(done.replaceOriginal).toBe(true);
    expect(done.text).toMatch(/^Reported as spam by Tester: token .* of \S.* \(0x[0-9a-fA-F]{4}…/);
    expect(t.sim.reports).toHaveLength(1);
    expect(t.sim.reports[0]).toMatchObject({
      kind: "spam",
      walletAddress: wallet.toLowerCase(),
    });
  });

  it("a spam-flagged item offers 'Not spam', which goes to endpoint 20", async () => {
    t = await startRuntime();
    const list = await t.say(`/wallet ${await ownWallet()} only`);
    const ask = await t.press(button(list, "Not spam #1"));
    expect(ask.title).toBe("Report as not spam?");
    await t.press(button(ask, "Confirm report"));
    expect(t.sim.reports.map((r) => r.kind)).toEqual(["not_spam"]);
  });

  it("only the person who asked can confirm or cancel", async () => {
    t = await startRuntime();
    const { ask } = await reportFirstWalletItem();
    const someoneElse = { user: { id: "u2", name: "Someone else" } };
    expect((await t.press(button(ask, "Confirm report"), someoneElse)).text).toMatch(
      /Only the person who started this report/,
    );
    expect((await t.press(button(ask, "Cancel"), someoneElse)).text).toMatch(
      /Only the person who started this report/,
    );
    expect(t.sim.reports).toHaveLength(0);
    expect((await t.press(button(ask, "Confirm report"))).text).toMatch(
      /^Reported as spam by Tester/,
    );
  });

  it("cancel sends nothing", async () => {
    t = await startRuntime();
    const { ask } = await reportFirstWalletItem();
    expect((await t.press(button(ask, "Cancel"))).text).toBe("Cancelled: nothing was reported.");
    expect(t.sim.reports).toHaveLength(0);
  });

  it("the double click: the same person, the same target, is one report", async () => {
    t = await startRuntime();
    const { ask } = await reportFirstWalletItem();
    const confirm = button(ask, "Confirm report");
    const [first, second] = await Promise.all([t.press(confirm), t.press(confirm)]);
    const texts = [first.text, second.text].join("\n");
    expect(texts).toMatch(/Reported as spam by Tester/);
    expect(texts).toMatch(/You already reported .* It counts once\./);
    expect(t.sim.reports).toHaveLength(1);
    expect(await t.store.reports.forChat("telegram", "chat-1")).toHaveLength(1);
  });

  it("/nft and alerts use the proved wallet, and say how to prove one when there is none", async () => {
    t = await startRuntime();
    const { fixtures: f } = t.sim;
    const nft = await t.say(`/nft ${f.token.contract} ${f.token.tokenId}`);
    const refused = await t.press(button(nft, "Report spam"));
    expect(refused.text).toMatch(/a report needs one you proved: prove yours with \/verify/);
    expect(await t.pressRefusal(button(nft, "Report spam"))).toBe("no_proved_wallet");
    const { address } = await t.prove();
    const ask = await t.press(button(nft, "Report spam"));
    await t.press(button(ask, "Confirm report"));
    expect(t.sim.reports[0]).toMatchObject({
      walletAddress: address.toLowerCase(),
      tokenId: f.token.tokenId,
    });
  });

  it("forged, expired and foreign ids are refused and nothing is sent", async () => {
    t = await startRuntime({ BUTTON_TTL_S: "60" });
    const { ask } = await reportFirstWalletItem();
    const confirm = button(ask, "Confirm report");
    expect((await t.press(confirm, { chat: { id: "another-chat", kind: "group" } })).text).toMatch(
      /another chat/,
    );
    expect((await t.press("ZZZZZZZZZZZZZZZZZZZZZZ")).text).toMatch(/expired/);
    expect((await t.press("../../etc/passwd")).text).toMatch(/not one of mine/);
    t.db.prepare("UPDATE button_actions SET expires_at = 0").run();
    expect((await t.press(confirm)).text).toMatch(/expired/);
    expect(t.sim.reports).toHaveLength(0);
  });
});

describe("upstream failures", () => {
  it("a 503 keeps the report queued; the retry worker sends it: one upstream report in the end", async () => {
    t = await startRuntime();
    const { ask } = await reportFirstWalletItem();
    t.sim.script([{ status: 503 }]);
    const queued = await t.press(button(ask, "Confirm report"));
    expect(queued.text).toMatch(/queued and will be sent automatically/);
    const { reports } = t.store;
    expect((await reports.forChat("telegram", "chat-1"))[0]?.status).toBe("queued");
    expect(t.sim.reports).toHaveLength(0);
    const worker = retryWorker(reports);
    await worker.retryDue();
    await worker.retryDue();
    expect((await reports.forChat("telegram", "chat-1"))[0]).toMatchObject({
      status: "sent",
      attempts: 2,
    });
    expect(t.sim.reports).toHaveLength(1);
  });

  it("a 404 on not-spam is kept as unsupported and said plainly", async () => {
    t = await startRuntime({}, { reportNotSpamSupported: false });
    const list = await t.say(`/wallet ${await ownWallet()} only`);
    const ask = await t.press(button(list, "Not spam #1"));
    const answer = await t.press(button(ask, "Confirm report"));
    expect(answer.text).toMatch(/does not take not-spam reports .* kept on record as unsupported/);
    expect((await t.store.reports.forChat("telegram", "chat-1"))[0]?.status).toBe("unsupported");
  });

  it("a refusal (400) is final and says why", async () => {
    t = await startRuntime();
    const { ask } = await reportFirstWalletItem();
    t.sim.script([
      { status: 400, body: JSON.stringify({ message: "token is not held by the wallet" }) },
    ]);
    expect((await t.press(button(ask, "Confirm report"))).text).toMatch(
      /refused the report .*: token is not held by the wallet/,
    );
    expect((await t.store.reports.forChat("telegram", "chat-1"))[0]?.status).toBe("failed");
  });
});

/** Calls to endpoint 19 that reached the simulator, answered or not. */
const reportCalls = () => t.sim.requests.filter((r) => r.path.includes("/report_spam/")).length;

/** A retry worker whose clock is an hour ahead: every queued report is due. */
const retryWorker = (reports: ReportStore) =>
  new ReportRetryWorker({
    api: t.api,
    reports,
    logger: silentLogger(),
    isLeader: () => true,
    intervalMs: 1000,
    callMaxMs: 30_000,
    now: () => Date.now() + 3_600_000,
  });

describe("at most once to the data service", () => {
  it("a call that hangs past the timeout ends 'unknown', is said so, and is never sent again", async () => {
    t = await startRuntime({ API_TIMEOUT_MS: "300" });
    const { ask } = await reportFirstWalletItem();
    t.sim.script([{ status: 200, hang: true }]);
    const answer = await t.press(button(ask, "Confirm report"));
    expect(answer.text).toMatch(/^Reported as spam by Tester/);
    expect(answer.text).toMatch(/whether the data service got it is unknown/i);
    const { reports } = t.store;
    expect((await reports.forChat("telegram", "chat-1"))[0]).toMatchObject({
      status: "unknown",
      attempts: 1,
    });
    expect(reportCalls()).toBe(1);
    const worker = retryWorker(reports);
    await worker.retryDue();
    await worker.retryDue();
    expect(reportCalls()).toBe(1);
    const list = await t.say("/reports");
    expect(list.table?.rows[0]).toContain("outcome unknown");
    expect(t.text(list)).toMatch(/outcome unknown: .*not re-sent to avoid a double report/);
  });

  it("queues again only what certainly never reached the service: 429, 503, connection refused", async () => {
    t = await startRuntime();
    const list = await t.say(`/wallet ${await ownWallet()} exclude`);
    const confirmAfter = async (n: number, before: () => unknown) => {
      const ask = await t.press(button(list, `Spam #${n}`));
      await before();
      await t.press(button(ask, "Confirm report"));
    };
    await confirmAfter(1, () => t.sim.script([{ status: 429, retryAfterSeconds: 1 }]));
    await confirmAfter(2, () => t.sim.script([{ status: 503 }]));
    await confirmAfter(3, () => t.sim.script([{ status: 500 }]));
    await confirmAfter(4, () => t.sim.script([{ status: 502 }]));
    // Nothing listens on the port: the connection is refused before anything is written.
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise((resolve) => closed.close(resolve));
    const unreachable = createApiClient(
      apiClientSettings(t.config, `http://127.0.0.1:${port}`, "k"),
      silentLogger(),
    );
    const { reports } = t.store;
    const { report } = await reports.create(
      {
        platform: "telegram",
        chatId: "chat-1",
        userId: "u1",
        userName: "Tester",
        wallet: t.sim.fixtures.wallet,
        contract: t.sim.fixtures.spamCollection,
        tokenId: "",
        kind: "spam",
        feedback: null,
      },
      Date.now(),
    );
    await attemptReport(unreachable, reports, report, silentLogger());
    await unreachable.close();
    const statuses = (await reports.forChat("telegram", "chat-1")).reverse().map((r) => r.status);
    expect(statuses).toEqual(["queued", "queued", "unknown", "unknown", "queued"]);
    expect(
      (await reports.forChat("telegram", "chat-1")).find((r) => r.id === report.id)?.upstream,
    ).toMatch(/ECONNREFUSED/);
  });

  it("a report a killed process left 'sending' is marked unknown at start and never sent", async () => {
    t = await startRuntime();
    const { sim } = t;
    const dataDir = mkdtempSync(join(tmpdir(), "bot-reports-"));
    const db = openDatabase(dataDir);
    const reports = new SqlReportStore(sqliteSql(db));
    const { report } = await reports.create(
      {
        platform: "telegram",
        chatId: "-4001",
        userId: "7",
        userName: "Ann",
        wallet: sim.fixtures.wallet,
        contract: sim.fixtures.spamCollection,
        tokenId: "1",
        kind: "spam",
        feedback: null,
      },
      Date.now() - 3_600_000,
    );
    db.close();
    const bot = await createBot(
      parseConfig({ API_BASE_URL: sim.url, API_KEY: sim.apiKey, DATA_DIR: dataDir }),
      { logger: silentLogger(), input: new PassThrough(), output: new PassThrough() },
    );
    await bot.start();
    try {
      const after = bot.store.reports;
      const stored = (await after.forChat("telegram", "-4001")).find((r) => r.id === report.id);
      expect(stored).toMatchObject({ status: "unknown" });
      expect(stored?.upstream).toMatch(/stopped during the call/);
      await new ReportRetryWorker({
        api: bot.api,
        reports: after,
        logger: silentLogger(),
        isLeader: () => true,
        intervalMs: 1000,
        callMaxMs: 30_000,
        now: () => Date.now() + 3_600_000,
      }).retryDue();
      expect(sim.requests.filter((r) => r.path.includes("/report_spam/"))).toHaveLength(0);
    } finally {
      await bot.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe("several instances on one store", () => {
  it("an instance starting leaves another's report mid-call alone; the leader settles it once no call can still be running", async () => {
    t = await startRuntime();
    const { sim } = t;
    const dataDir = mkdtempSync(join(tmpdir(), "bot-reports-"));
    const db = openDatabase(dataDir);
    const reports = new SqlReportStore(sqliteSql(db));
    // Another instance's report, its call started a moment ago.
    const { report } = await reports.create(
      {
        platform: "telegram",
        chatId: "-4002",
        userId: "8",
        userName: "Bo",
        wallet: sim.fixtures.wallet,
        contract: sim.fixtures.spamCollection,
        tokenId: "1",
        kind: "spam",
        feedback: null,
      },
      Date.now(),
    );
    db.close();
    const bot = await createBot(
      parseConfig({ API_BASE_URL: sim.url, API_KEY: sim.apiKey, DATA_DIR: dataDir }),
      { logger: silentLogger(), input: new PassThrough(), output: new PassThrough() },
    );
    await bot.start();
    try {
      const status = async () =>
        (await bot.store.reports.forChat("telegram", "-4002")).find((r) => r.id === report.id)
          ?.status;
      expect(await status()).toBe("sending");
      const leader = (minutesLater: number) =>
        new ReportRetryWorker({
          api: bot.api,
          reports: bot.store.reports,
          logger: silentLogger(),
          isLeader: () => true,
          intervalMs: 1000,
          callMaxMs: 31_000,
          now: () => Date.now() + minutesLater * 60_000,
        });
      await leader(0).retryDue();
      expect(await status()).toBe("sending");
      await leader(1).retryDue();
      expect(await status()).toBe("unknown");
      expect(sim.requests.filter((r) => r.path.includes("/report_spam/"))).toHaveLength(0);
    } finally {
      await bot.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe("rules", () => {
  it("limits reports per person per hour; others are unaffected", async () => {
    t = await startRuntime({ REPORTS_PER_HOUR: "2" });
    const list = await t.say(`/wallet ${await ownWallet()} exclude`);
    for (const n of [1, 2])
      await t.press(button(await t.press(button(list, `Spam #${n}`)), "Confirm report"));
    const third = await t.press(button(await t.press(button(list, "Spam #3")), "Confirm report"));
    expect(third.text).toMatch(/made 2 reports in the last hour/);
    expect(t.sim.reports).toHaveLength(2);
    const other = { user: { id: "u2", name: "Other" } };
    const theirs = await t.say(`/wallet ${await ownWallet(other)} exclude`, other);
    const ask = await t.press(button(theirs, "Spam #3"), other);
    expect((await t.press(button(ask, "Confirm report"), other)).text).toMatch(
      /Reported as spam by Other/,
    );
  });

  it("/report sends feedback and takes a link", async () => {
    t = await startRuntime();
    const { fixtures: f } = t.sim;
    const wallet = await ownWallet();
    const reply = await t.say(
      `/report spam https://opensea.io/assets/ethereum/${f.spamCollection}/1 ${wallet} airdropped, not mine`,
    );
    expect(reply.text).toMatch(/^Reported as spam by Tester/);
    expect(t.sim.reports[0]).toMatchObject({ feedback: "airdropped, not mine", tokenId: "1" });
    expect((await t.say(`/report spam ${f.collection} ${"9".repeat(79)}`)).text).toMatch(
      /79 digits/,
    );
    expect((await t.say(`/report maybe ${f.collection}`)).text).toMatch(
      /kind: use one of spam, not_spam/,
    );
  });

  it("a note with markup or control characters is echoed inert in the reply", async () => {
    t = await startRuntime();
    const { fixtures: f } = t.sim;
    await ownWallet();
    const reply = await t.say(`/report spam ${f.spamCollection} 5 <b>fake</b>\u0000\u202e`);
    expect(reply.text, t.text(reply)).toMatch(/^Reported as spam by Tester/);
    expect(reply.text).toContain('Note: "<b>fake</b>??"');
    expect(t.sim.reports.at(-1)?.feedback).toMatch(/^<b>fake<\/b>/);
  });

  it("a note needs no wallet before it: a word that is no wallet starts the note, for the proved wallet", async () => {
    t = await startRuntime();
    const { fixtures: f } = t.sim;
    const wallet = await ownWallet();
    // The line, with a collection name and a token id.
    const reply = await t.say(`/report spam ${f.spamCollection} 5 this looks fake`);
    expect(reply.text, t.text(reply)).toMatch(/^Reported as spam by Tester/);
    expect(reply.text).toContain(wallet);
    expect(reply.text).toContain('Note: "this looks fake"');
    expect(t.sim.reports.at(-1)).toMatchObject({
      feedback: "this looks fake",
      tokenId: "5",
      walletAddress: wallet.toLowerCase(),
    });
    // No token id: the note still starts at its first word.
    const whole = await t.say(`/report spam ${f.spamCollection} airdropped to me`);
    expect(whole.text, t.text(whole)).toMatch(/^Reported as spam/);
    expect(t.sim.reports.at(-1)?.feedback).toBe("airdropped to me");
    expect(t.sim.reports.at(-1)?.tokenId).toBeUndefined();
    // A wallet given before the note is still the wallet: an address, a name.eth, a link (a
    // name.eth of another's wallet is refused for that wallet, not taken as a note).
    await t.say(`/report spam ${f.spamCollection} 6 ${wallet} mine, fake`);
    expect(t.sim.reports.at(-1)).toMatchObject({ feedback: "mine, fake", tokenId: "6" });
    expect((await t.say(`/report spam ${f.spamCollection} 6 ${f.walletEns} x`)).text).toContain(
      `${fullAddress(f.wallet)} is not one of yours`,
    );
    await t.say(`/report spam ${f.spamCollection} 7 https://etherscan.io/address/${wallet} x`);
    expect(t.sim.reports.at(-1)).toMatchObject({ feedback: "x", tokenId: "7" });
    // A mistyped address is refused, not taken as a note.
    expect((await t.say(`/report spam ${f.spamCollection} 8 0x1234 fake`)).text).toMatch(
      /not a valid wallet address/,
    );
  });
});

describe("the audit trail", () => {
  it("the CSV guards text a spreadsheet would run as a formula, never numbers like chat ids", async () => {
    t = await startRuntime();
    const { fixtures: f } = t.sim;
    const where = {
      chat: { id: "-4001", kind: "group" as const },
      user: { id: "7", name: "-Mallory" },
    };
    const wallet = await ownWallet(where);
    await t.say(`/report spam ${f.spamCollection} 1 ${wallet} =HYPERLINK(evil) +1`, where);
    const list = await t.say("/reports", where);
    const exported = await t.press(button(list, "Export CSV"), where);
    const [, row] = new TextDecoder().decode(exported.files?.[0]?.data).trim().split("\r\n");
    expect(row).toContain(",telegram,-4001,7,'-Mallory,spam,");
    expect(row).toContain(",1,'=HYPERLINK(evil) +1,");
  });

  it("every report is recorded; admins list and export them as CSV; others may not", async () => {
    t = await startRuntime();
    const { ask } = await reportFirstWalletItem({ user: { id: "u9", name: 'Mallory "=cmd"' } });
    await t.press(button(ask, "Confirm report"), { user: { id: "u9", name: 'Mallory "=cmd"' } });
    const member = { canManageChannel: async () => false };
    expect((await t.say("/reports", member)).text).toMatch(
      /Only people who can manage this channel/,
    );
    const list = await t.say("/reports");
    expect(list.table?.rows[0]).toEqual(expect.arrayContaining(['Mallory "=cmd"', "spam", "sent"]));
    expect((await t.press(button(list, "Export CSV"), member)).text).toMatch(
      /Only people who can manage/,
    );
    const exported = await t.press(button(list, "Export CSV"));
    expect(exported.text).toBe("1 spam report.");
    const csv = new TextDecoder().decode(exported.files?.[0]?.data);
    const [header, row] = csv.trim().split("\r\n");
    expect(header).toBe(
      "id,createdAt,platform,chatId,userId,userName,kind,wallet,contract,tokenId,feedback,status,attempts,serviceAnswer,chain",
    );
    expect(row).toContain('"Mallory ""=cmd"""');
    expect(row).toContain(",telegram,chat-1,u9,");
    // What the data service answered, in words: it took the report.
    expect(row).toContain(",sent,1,accepted,ethereum");
    expect(row).not.toContain("{}");
  });

  it("counts the reports in words, one or many, and says what the service answered each", async () => {
    t = await startRuntime();
    const { reports } = t.store;
    const made = [];
    for (const tokenId of ["1", "2", "3"]) {
      const { report } = await reports.create(
        {
          platform: "telegram",
          chatId: "chat-1",
          userId: "u1",
          userName: "Tester",
          wallet: t.sim.fixtures.wallet,
          contract: t.sim.fixtures.spamCollection,
          tokenId,
          kind: "spam",
          feedback: null,
        },
        Date.now(),
      );
      made.push(report);
    }
    const [sent, refused, unknown] = made;
    await reports.begin(sent!.id, Date.now());
    await reports.finish(sent!.id, "sent", "{}", Date.now());
    await reports.begin(refused!.id, Date.now());
    await reports.finish(refused!.id, "failed", "invalid_input 400: bad token", Date.now());
    await reports.begin(unknown!.id, Date.now());
    await reports.finish(unknown!.id, "unknown", "timeout: no answer in 10 s", Date.now());
    const list = await t.say("/reports");
    expect(list.title).toBe("Spam reports in this chat (3)");
    const exported = await t.press(button(list, "Export CSV"));
    expect(exported.text).toBe("3 spam reports.");
    const rows = new TextDecoder().decode(exported.files?.[0]?.data).trim().split("\r\n");
    const answers = rows.slice(1).map((row) => row.split(",").at(-2));
    expect(answers.sort()).toEqual(
      ["accepted", "invalid_input 400: bad token", "timeout: no answer in 10 s"].sort(),
    );
  });
});
