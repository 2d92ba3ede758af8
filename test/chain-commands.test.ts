/**
 * Issue 17, the commands: a command reads the chain it names (chain:base, or a leading chain
 * word), else the chat's (/settings chain), else the first; each chain through its own base URL,
 * its symbol, explorer and marketplace; spam only where the chain has it; names resolve within
 * the chain.
 */
import { afterEach, describe, expect, it } from "vitest";
import { slashCommands } from "../src/adapters/discord/commands.ts";
import type { Address } from "../src/api/validate.ts";
import type { RenderableReply } from "../src/core/reply.ts";
import { silentLogger } from "../src/log.ts";
import { renderTelegram } from "../src/render/telegram.ts";
import { ReportRetryWorker } from "../src/reports/submit.ts";
import { replyHelpers } from "./command-helpers.ts";
import { type RuntimeSetup, startRuntime } from "./helpers.ts";

const CHAINS = "ethereum,base,polygon";

let t: RuntimeSetup;
afterEach(async () => {
  await t?.close();
});

const { sent, button } = replyHelpers(() => t);

/** The chains the requests of a step went to, without repeats. */
async function chainsHit(step: () => Promise<RenderableReply>) {
  const { result, requests } = await sent(step);
  return { reply: result, chains: [...new Set(requests.map((request) => request.chain))] };
}

describe("a command on each chain", () => {
  it("reads that chain's base URL only, by name or by a leading chain word, and names it", async () => {
    t = await startRuntime({ CHAINS });
    for (const chain of ["ethereum", "base", "polygon"]) {
      const named = await chainsHit(() => t.say(`/top volume 1d chain:${chain}`));
      expect(named.chains).toEqual([chain]);
      expect(named.reply.footer).toMatch(
        new RegExp(` · ${t.chains.find((c) => c.id === chain)?.name}$`),
      );
      // Another metric, so the answer cache does not hide the request.
      const leading = await chainsHit(() => t.say(`/top ${chain} sales 7d`));
      expect(leading.chains).toEqual([chain]);
      expect(leading.reply.title).toBe("Top collections by number of sales, last 7 days");
    }
    // Nothing named: the first chain.
    expect((await chainsHit(() => t.say("/top max_price 30d"))).chains).toEqual(["ethereum"]);
  });

  it("each chain is its own world: the same command answers differently", async () => {
    t = await startRuntime({ CHAINS });
    const rows = async (chain: string) =>
      (await t.say(`/top volume 1d chain:${chain}`)).table?.rows.map((row) => row[2]);
    expect(await rows("base")).not.toEqual(await rows("ethereum"));
  });

  it("amounts are in the chain's symbol", async () => {
    t = await startRuntime({ CHAINS });
    const amounts = async (chain: string) =>
      (await t.say(`/top volume 1d chain:${chain}`)).table?.rows.map((row) => row[3]) ?? [];
    const polygon = await amounts("polygon");
    expect(polygon.length).toBeGreaterThan(0);
    for (const amount of polygon) expect(amount).toMatch(/ POL$/);
    for (const amount of await amounts("base")) expect(amount).toMatch(/ ETH$/);
    const stats = await t.say(`/stats ${t.sim.fixturesOf("polygon").collection} chain:polygon`);
    expect(stats.footer).toMatch(/amounts in POL · Polygon$/);
    expect(stats.fields?.find((field) => field.name === "Avg purchase price")?.value).toMatch(
      / POL$/,
    );
  });

  it("links go to the chain's explorer and marketplace", async () => {
    t = await startRuntime({ CHAINS });
    const { token } = t.sim.fixturesOf("base");
    const reply = await t.say(`/nft ${token.contract} ${token.tokenId} chain:base`);
    expect(reply.url).toMatch(/^https:\/\/basescan\.org\/nft\//);
    expect(reply.links?.map((link) => link.url)).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^https:\/\/opensea\.io\/assets\/base\/0x[0-9a-fA-F]{40}\/\d+$/),
      ]),
    );
  });

  it("a button remembers its chain: the next page reads the same chain", async () => {
    t = await startRuntime({ CHAINS });
    const first = await t.say("/top volume 1d 5 chain:polygon");
    const next = await chainsHit(() => t.press(button(first, "Next")));
    expect(next.chains).toEqual(["polygon"]);
    expect(next.reply.footer).toMatch(/Page 2 .*· Polygon$/);
  });

  it("an unknown chain: a clear message listing the chains served, and nothing else happens", async () => {
    t = await startRuntime({ CHAINS });
    for (const line of ["/top volume 1d chain:solana", "/stats chain:Solana bayc"]) {
      const { reply, chains } = await chainsHit(() => t.say(line));
      expect(reply.tone).toBe("warning");
      expect(reply.text).toBe(
        'There is no chain "solana" here: this bot serves ethereum, base or polygon.'.replace(
          "solana",
          line.includes("Solana") ? "Solana" : "solana",
        ),
      );
      expect(chains).toEqual([]);
    }
    // Markup, a NUL, a mention and a long id: quoted short, escaped, never pinging, no call made.
    const hostile = `<b>x</b>\u0000@everyone${"z".repeat(100)}`;
    const { reply: refused, chains: hit } = await chainsHit(() =>
      t.say(`/top volume 1d chain:${hostile}`),
    );
    expect(refused.tone).toBe("warning");
    expect(hit).toEqual([]);
    expect(refused.text).toMatch(/^There is no chain ".{1,40}" here: this bot serves/s);
    const html = JSON.stringify(renderTelegram(refused));
    expect(html).toContain("&lt;b&gt;x&lt;/b&gt;");
    expect(html).not.toMatch(/<b>x|\\u0000/);
    expect(html).not.toContain("z".repeat(40));
    // A word that is no chain is not taken for one: it is named with what it could have been.
    expect((await t.say("/top solana")).text).toMatch(
      /^I did not understand "solana": it is not one of chain \(ethereum, base, polygon\), metric \(/,
    );
  });
});

describe("one chain", () => {
  it("hides the option (Discord, /help, usage) but still understands chain:<id>", async () => {
    t = await startRuntime();
    expect(t.chains.map((chain) => chain.id)).toEqual(["ethereum"]);
    const top = slashCommands(t.runtime.commands).find((command) => command.name === "top");
    expect(top?.options?.map((option) => option.name)).toEqual(["metric", "duration", "limit"]);
    expect((await t.say("/help top")).fields?.map((field) => field.name)).not.toContain(
      "chain (optional)",
    );
    expect((await t.say("/help")).text).not.toMatch(/Chains:/);
    const reply = await t.say("/top volume 1d chain:ethereum");
    expect(reply.footer).toBe("Page 1 · refreshed every 15 minutes");
    expect((await t.say("/top volume 1d chain:base")).text).toBe(
      'There is no chain "base" here: this bot serves ethereum.',
    );
    // Positionally, "base" is no chain here.
    expect((await t.say("/top base")).text).toMatch(
      /^I did not understand "base": it is not one of metric \(volume, sales, max_price\), duration/,
    );
  });
});

describe("the channel's chain", () => {
  it("/settings chain <id> sets the chat's default, for people who manage it; /settings shows it", async () => {
    t = await startRuntime({ CHAINS });
    const shown = await t.say("/settings");
    expect(shown.fields?.find((field) => field.name === "Default chain")?.value).toBe(
      "Ethereum (ethereum), the bot's first",
    );
    // A member who may not manage the chat changes nothing.
    const refused = await t.refusal("/settings chain base", {
      canManageChannel: async () => false,
    });
    expect(refused).toBe("not_manager");
    expect(await t.store.chatSettings.get("telegram", "chat-1")).toEqual({ chain: undefined });

    expect((await t.say("/settings chain solana")).text).toMatch(
      /There is no chain "solana" here: this bot serves ethereum, base or polygon/,
    );
    expect(await t.store.chatSettings.get("telegram", "chat-1")).toEqual({ chain: undefined });

    expect((await t.say("/settings chain base")).text).toBe(
      "Commands here now read Base (base) unless they name another chain.",
    );
    expect(await t.store.chatSettings.get("telegram", "chat-1")).toEqual({ chain: "base" });
    expect(
      (await t.say("/settings")).fields?.find((field) => field.name === "Default chain")?.value,
    ).toBe("Base (base)");

    // This chat now reads base; a command may still name another; other chats keep the first.
    const here = await chainsHit(() => t.say("/top volume 1d"));
    expect(here.chains).toEqual(["base"]);
    expect(here.reply.footer).toMatch(/ · Base$/);
    expect((await chainsHit(() => t.say("/top sales 1d chain:polygon"))).chains).toEqual([
      "polygon",
    ]);
    const elsewhere = await chainsHit(() =>
      t.say("/top max_price 1d", { chat: { id: "chat-2", kind: "group" } }),
    );
    expect(elsewhere.chains).toEqual(["ethereum"]);

    await t.say("/settings chain default");
    expect(await t.store.chatSettings.get("telegram", "chat-1")).toEqual({ chain: undefined });
    expect((await chainsHit(() => t.say("/top max_price 7d"))).chains).toEqual(["ethereum"]);
  });
});

describe("spam, only on chains with spam detection", () => {
  it("/common says spam is left out only where the chain has spam data", async () => {
    t = await startRuntime({ CHAINS });
    for (const chain of ["ethereum", "base"]) {
      const { collection } = t.sim.fixturesOf(chain);
      const reply = await t.say(`/common ${collection} chain:${chain}`);
      const said = `${reply.text ?? ""} ${reply.footer ?? ""}`;
      expect(/spam/i.test(said), `${chain}: ${said}`).toBe(chain === "ethereum");
    }
  });

  it("/wallet flags spam and offers report buttons on ethereum and polygon only", async () => {
    t = await startRuntime({ CHAINS });
    for (const chain of ["ethereum", "base", "polygon"]) {
      const { wallet } = t.sim.fixturesOf(chain);
      // Report buttons are offered under one's own wallets only (issue 38): the asker's, here.
      await t.store.wallets.addProved({
        platform: "telegram",
        userId: "u1",
        address: wallet.toLowerCase(),
        chain,
        label: wallet,
        message: "m",
        signature: "0x",
        provedAt: Date.now(),
        kind: "eoa",
      });
      const { result: reply, requests } = await sent(() =>
        t.say(`/wallet ${wallet} chain:${chain}`),
      );
      const spamButtons = (reply.buttons ?? []).filter((b) => /^(Not spam|Spam) #/.test(b.label));
      const spamChain = chain !== "base";
      expect(spamButtons.length > 0, chain).toBe(spamChain);
      expect(reply.table?.columns.includes("Spam"), chain).toBe(spamChain);
      if (!spamChain) expect(reply.footer).toMatch(/spam data is not available on Base/);
      expect(requests.every((request) => !("spam" in request.query))).toBe(true);
    }
    const filtered = await sent(() =>
      t.say(`/wallet ${t.sim.fixturesOf("base").wallet} only chain:base`),
    );
    expect(filtered.result.text).toBe(
      "Spam data is not available on Base. Leave out the spam filter there.",
    );
    expect(filtered.requests).toEqual([]);
    const polygonOnly = await sent(() =>
      t.say(`/wallet ${t.sim.fixturesOf("polygon").wallet} only chain:polygon`),
    );
    expect(polygonOnly.requests.map((request) => [request.chain, request.query.spam])).toEqual([
      ["polygon", expect.stringMatching(/ONLY/)],
    ]);
  });

  it("/nft offers the report button on spam chains only", async () => {
    t = await startRuntime({ CHAINS });
    for (const chain of ["ethereum", "base", "polygon"]) {
      const { token } = t.sim.fixturesOf(chain);
      const reply = await t.say(`/nft ${token.contract} ${token.tokenId} chain:${chain}`);
      expect(
        reply.buttons?.some((b) => b.label === "Report spam"),
        chain,
      ).toBe(chain !== "base");
    }
  });

  it("/report works on polygon, through polygon; on base it says so and calls nothing", async () => {
    t = await startRuntime({ CHAINS });
    const base = t.sim.fixturesOf("base");
    const refused = await sent(() =>
      t.say(`/report spam ${base.collection} 1 ${base.wallet} chain:base`),
    );
    expect(refused.result.text).toBe("Spam data is not available on Base.");
    expect(refused.requests).toEqual([]);
    expect(t.sim.reports).toEqual([]);

    const polygon = t.sim.fixturesOf("polygon");
    // Reports are made for the person's own proved wallet (an address is one on every chain).
    const { address } = await t.prove({}, undefined, "polygon");
    const made = await sent(() =>
      t.say(`/report spam ${polygon.collection} 1 ${address} chain:polygon`),
    );
    expect(made.result.tone).not.toBe("warning");
    expect(made.requests.map((request) => request.chain)).toEqual(["polygon"]);
    expect(made.requests[0]?.path).toMatch(/report_spam/);
  });

  it("a report button keeps its chain through ask and confirm", async () => {
    t = await startRuntime({ CHAINS });
    const { address: wallet } = await t.prove({}, undefined, "polygon");
    t.sim.giveNft(wallet, "polygon", { spam: false });
    const list = await t.say(`/wallet ${wallet} chain:polygon`);
    const ask = await t.press(button(list, "#1"));
    const confirmed = await sent(() => t.press(button(ask, "Confirm")));
    expect(confirmed.requests.map((request) => request.chain)).toEqual(["polygon"]);
  });
});

describe("a queued report", () => {
  it("is retried on its own chain's data service", async () => {
    t = await startRuntime({ CHAINS });
    const polygon = t.sim.fixturesOf("polygon");
    const { report } = await t.store.reports.create(
      {
        chain: "polygon",
        platform: "telegram",
        chatId: "chat-1",
        userId: "u1",
        userName: "Tester",
        wallet: polygon.wallet,
        contract: polygon.collection,
        tokenId: "",
        kind: "spam",
        feedback: null,
      },
      0,
    );
    await t.store.reports.begin(report.id, 1);
    await t.store.reports.queue(report.id, "HTTP 503", 2, 1);
    const worker = new ReportRetryWorker({
      api: t.api,
      apis: t.apis,
      reports: t.store.reports,
      logger: silentLogger(),
      isLeader: () => true,
      callMaxMs: 30_000,
      intervalMs: 60_000,
    });
    const before = t.sim.requests.length;
    await worker.retryDue();
    expect(t.sim.requests.slice(before).map((request) => request.chain)).toEqual(["polygon"]);
    expect(await t.store.reports.findSame({ ...report })).toMatchObject({ status: "sent" });
  });
});

describe("collection names within the chain", () => {
  it("a name known on one chain resolves there, not on another; autocomplete shows the chain", async () => {
    t = await startRuntime({ CHAINS });
    const base = t.sim.fixturesOf("base");
    t.runtime
      .collectionsOf({ id: "base" })
      .remember([{ address: base.collection as Address, name: "Zebra Baseline Club" }]);
    const found = await chainsHit(() => t.say('/stats "Zebra Baseline Club" chain:base'));
    expect(found.reply.title).toMatch(/Zebra Baseline Club/);
    expect(found.chains).toEqual(["base"]);
    const elsewhere = await t.say('/stats "Zebra Baseline Club" chain:ethereum');
    expect(elsewhere.title).toBeUndefined();
    expect(elsewhere.text).toMatch(/Zebra Baseline Club/);

    expect(await t.runtime.autocomplete("stats", "collection", "zebra", { chain: "base" })).toEqual(
      [
        {
          name: expect.stringMatching(/^Zebra Baseline Club \(0x.*\) · Base$/),
          value: expect.any(String),
        },
      ],
    );
    expect(
      await t.runtime.autocomplete("stats", "collection", "zebra", { chain: "ethereum" }),
    ).toEqual([]);
  });
});

describe("autocomplete follows the chat's chain", () => {
  it("after /settings chain base, suggestions in that chat come from Base at once", async () => {
    t = await startRuntime({ CHAINS });
    const base = t.sim.fixturesOf("base");
    t.runtime
      .collectionsOf({ id: "base" })
      .remember([{ address: base.collection as Address, name: "Zebra Baseline Club" }]);
    const chat = { platform: "telegram" as const, chat: { id: "chat-1", kind: "group" as const } };
    // A command first, on the chat's chain then (the first); then the chat changes its chain.
    await t.say("/top volume 1d");
    expect(await t.runtime.autocomplete("stats", "collection", "zebra", { chat })).toEqual([]);
    expect((await t.say("/settings chain base")).text).toMatch(/Base/);
    expect(await t.runtime.autocomplete("stats", "collection", "zebra", { chat })).toEqual([
      { name: expect.stringMatching(/· Base$/), value: expect.any(String) },
    ]);
  });
});

describe("the Discord registration", () => {
  it("offers the chain option with the configured chains as choices, on commands that read data", async () => {
    t = await startRuntime({ CHAINS });
    const body = slashCommands(t.runtime.commands);
    const chainOf = (name: string) =>
      body
        .find((command) => command.name === name)
        ?.options?.find((option) => option.name === "chain") as
        | { required?: boolean; choices?: { name: string; value: string }[] }
        | undefined;
    expect(chainOf("top")).toMatchObject({
      required: false,
      choices: [
        { name: "Ethereum", value: "ethereum" },
        { name: "Base", value: "base" },
        { name: "Polygon", value: "polygon" },
      ],
    });
    for (const name of ["stats", "wallet", "nft", "report", "whois"])
      expect(chainOf(name), name).toBeDefined();
    for (const name of ["help", "settings", "link", "unlink", "reports"])
      expect(chainOf(name), name).toBeUndefined();
    // Required options first, as Discord wants.
    const stats = body.find((command) => command.name === "stats");
    expect(stats?.options?.map((option) => option.name)).toEqual(["collection", "chain"]);
  });
});
