import { z } from "zod";
import type { AggregatedBehavior, WalletBehavior } from "../src/api/schemas.ts";
import { defineAction, payloadField } from "../src/core/button-actions.ts";
import { chartable } from "../src/core/charts.ts";
import { defineCommand } from "../src/core/command.ts";
import {
  behaviorLabel,
  collectionName,
  compareIntegerStrings,
  explorer,
  formatChange,
  formatCount,
  formatPercent,
  fullAddress,
  scoreLabel,
  short,
} from "../src/core/format.ts";
import { opt } from "../src/core/options.ts";
import { pageButtons, pageOf } from "../src/core/paging.ts";
import type { ChartSpec, Reply } from "../src/core/reply.ts";

const SAMPLE_PAGE_SIZE = 10;

/** A page of the collection's owners with their scores. */
const samples = defineAction({
  command: "audience",
  name: "samples",
  schema: z.object({ contract: z.string(), page: payloadField.page }),
});

const score = (value: string) => scoreLabel(value, "short");

/** Largest category first. */
function byWalletsDesc(rows: readonly AggregatedBehavior[]): AggregatedBehavior[] {
  return [...rows].sort((a, b) => compareIntegerStrings(b.walletsCount, a.walletsCount));
}

export function breakdownReply(
  contract: string,
  name: string | undefined,
  rows: AggregatedBehavior[],
  explorerUrl: string,
): Reply {
  const sorted = byWalletsDesc(rows);
  const total = sorted.reduce((sum, row) => sum + BigInt(row.walletsCount), 0n);
  return {
    title: `Audience of ${name ? collectionName(name) : fullAddress(contract)}`,
    url: explorer.address(explorerUrl, contract),
    text:
      sorted.length === 0
        ? "The data service has no behavior data for this collection's owners yet."
        : undefined,
    table: {
      columns: ["Behavior", "Wallets", "Share", "30d change"],
      rows: sorted.map((row) => [
        behaviorLabel(row.behavior),
        formatCount(row.walletsCount),
        formatPercent(row.walletsPercentage),
        formatChange(row.walletsCountChange30d),
      ]),
      align: ["left", "right", "right", "right"],
    },
    footer: `${formatCount(total.toString())} owners · ${fullAddress(contract)}`,
    buttons: [samples.button({ contract, page: 0 }, "Sample wallets", { style: "primary" })],
  };
}

function samplesReply(
  contract: string,
  name: string | undefined,
  wallets: WalletBehavior[],
  page: number,
): Reply {
  const view = pageOf(wallets, page, SAMPLE_PAGE_SIZE);
  return {
    title: `Sample wallets of ${name ? collectionName(name) : short(contract)}`,
    text:
      wallets.length === 0
        ? "No wallet details for this collection."
        : "Scores: experience, holding, selling, taste, automation, spend intent, influence (VL very low … VH very high).",
    table: {
      columns: ["Wallet", "Behavior", "Exp", "Hold", "Sell", "Taste", "Auto", "Spend", "Infl"],
      rows: view.items.map((w) => [
        short(w.address),
        behaviorLabel(w.behavior),
        score(w.experience),
        score(w.holding),
        score(w.selling),
        score(w.taste),
        score(w.automation),
        score(w.spendIntent),
        score(w.influence),
      ]),
    },
    footer: `Page ${view.page + 1} of ${view.pages} · ${formatCount(String(wallets.length))} wallets`,
    replaceOriginal: page > 0,
    buttons: pageButtons(
      (page) => samples.action({ contract, page }),
      view.page,
      view.page < view.pages - 1,
    ),
  };
}

export default defineCommand({
  name: "audience",
  description: "Behavior breakdown of a collection's owners",
  help: "Shows how a collection's owners behave (whales, flippers, collectors, …), each category's share and its 30-day change. The button shows sample wallets with their seven scores.",
  options: {
    collection: opt.collection("Collection: name, symbol, address or link", { required: true }),
  },
  examples: [
    "/audience cryptopunks",
    "/audience 0xBC4CA0EdA7647A8aB7C2061c2E118A18a936f13D",
    "/audience https://opensea.io/collection/boredapeyachtclub",
  ],
  async run(ctx, { collection }) {
    const { aggregatedBehaviors } = await ctx.api.audiences.behaviorsByCollection(collection, {
      signal: ctx.signal,
    });
    // Asked by address or link, the collection is still titled by its name where the chain's
    // index knows it (filled first if this is the chain's first command); else by its address.
    const reply = breakdownReply(
      collection,
      await ctx.resolver.collectionName(collection),
      aggregatedBehaviors,
      ctx.chain.explorer,
    );
    const rows = byWalletsDesc(aggregatedBehaviors).map((row) => ({
      label: behaviorLabel(row.behavior),
      share: row.walletsPercentage,
      change: formatChange(row.walletsCountChange30d),
    }));
    const title = reply.title ?? "Audience";
    const chart: ChartSpec = {
      kind: "audience",
      subject: `audience:${collection.toLowerCase()}`,
      title,
      rows,
    };
    if (chartable(chart)) return { ...reply, chart };
    // No rows: the reply says there is no data. One bar would be the table's row drawn again.
    if (rows.length === 0) return reply;
    return { ...reply, text: "All owners fall in one category: a chart needs two." };
  },
  actions: {
    samples: samples.handle({
      async run(ctx, { contract, page }) {
        const { walletBehaviors } = await ctx.api.audiences.behaviorDetailsByCollection(contract, {
          signal: ctx.signal,
        });
        ctx.resolver.rememberWallets(
          pageOf(walletBehaviors, page, SAMPLE_PAGE_SIZE).items.map((wallet) => wallet.address),
        );
        return samplesReply(contract, ctx.collections.name(contract), walletBehaviors, page);
      },
    }),
  },
});
