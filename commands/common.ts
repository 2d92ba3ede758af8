import { z } from "zod";
import type { CommonCollection, CommonCollectionTrend } from "../src/api/schemas.ts";
import type { Chain } from "../src/chains.ts";
import { defineAction, payloadField } from "../src/core/button-actions.ts";
import { type CommandContext, defineCommand } from "../src/core/command.ts";
import {
  collectionName,
  explorer,
  formatChange,
  formatCount,
  fullAddress,
  short,
} from "../src/core/format.ts";
import { opt } from "../src/core/options.ts";
import { pageButtons, pageOf } from "../src/core/paging.ts";
import type { Reply, ReplyTable } from "../src/core/reply.ts";
import {
  DURATION_CHOICES,
  type DurationChoice,
  durationApi,
  durationName,
} from "./shared/choices.ts";

/** The service returns at most 30: two pages. */
const PAGE_SIZE = 15;

/** Another page of the list: of the shares, or of the trend over `trend`. */
const commonPage = defineAction({
  command: "common",
  name: "page",
  schema: z.object({
    collection: z.string(),
    trend: payloadField.optional(payloadField.choice(DURATION_CHOICES)),
    page: payloadField.page,
  }),
});

/** part / whole as "12.3%", rounded half up on BigInt (both are int64 strings). */
export function shareOf(part: string, whole: string): string {
  const total = BigInt(whole);
  if (total <= 0n) return "n/a";
  const tenths = (BigInt(part) * 2000n + total) / (2n * total);
  return `${tenths / 10n}.${tenths % 10n}%`;
}

type CommonList =
  | { kind: "common"; items: CommonCollection[] }
  | { kind: "trend"; duration: DurationChoice; items: CommonCollectionTrend[] };

type PageView = Omit<ReturnType<typeof pageOf>, "items">;

const rankOf = (offset: number, i: number) => String(offset + i + 1);

function commonTable(list: CommonList, page: number): { table: ReplyTable; shown: PageView } {
  if (list.kind === "trend") {
    const shown = pageOf(list.items, page, PAGE_SIZE);
    return {
      shown,
      table: {
        columns: ["#", "Collection", "Address", "Owner change", "Common owners"],
        rows: shown.items.map((item, i) => [
          rankOf(shown.offset, i),
          collectionName(item.name),
          short(item.contractAddress),
          formatChange(item.ownersCountChange),
          formatCount(item.commonOwnersCount),
        ]),
        align: ["right", "left", "left", "right", "right"],
      },
    };
  }
  const shown = pageOf(list.items, page, PAGE_SIZE);
  return {
    shown,
    table: {
      columns: ["#", "Collection", "Address", "Common owners", "Owners", "Common share"],
      rows: shown.items.map((item, i) => [
        rankOf(shown.offset, i),
        collectionName(item.name),
        short(item.contractAddress),
        formatCount(item.commonOwnersCount),
        formatCount(item.ownersCount),
        shareOf(item.commonOwnersCount, item.ownersCount),
      ]),
      align: ["right", "left", "left", "right", "right", "right"],
    },
  };
}

function commonReply(
  collection: string,
  name: string | undefined,
  list: CommonList,
  page: number,
  chain: Pick<Chain, "explorer" | "spam">,
): Reply {
  const explorerUrl = chain.explorer;
  const subject = name ? collectionName(name) : fullAddress(collection);
  const period = list.kind === "trend" ? durationName(list.duration) : "";
  const title =
    list.kind === "trend"
      ? `Owner trends of collections in common with ${subject}, last ${period}`
      : `Collections in common with ${subject}`;
  const url = explorer.address(explorerUrl, collection);
  if (list.items.length === 0) {
    return {
      title,
      url,
      text: `No other collection shares owners with this one${chain.spam ? " (spam collections are left out)" : ""}.`,
    };
  }
  const { table, shown } = commonTable(list, page);
  return {
    title,
    url,
    text:
      list.kind === "trend"
        ? "Owner change: how many owners each collection gained or lost over the period."
        : "Common share: the part of each collection's owners who also hold this one.",
    table,
    footer: `Page ${shown.page + 1} of ${shown.pages} · ${list.items.length} collections, most shared owners first${chain.spam ? " · spam left out" : ""}`,
    replaceOriginal: page > 0,
    buttons: pageButtons(
      (page) =>
        commonPage.action({
          collection,
          trend: list.kind === "trend" ? list.duration : undefined,
          page,
        }),
      shown.page,
      shown.page < shown.pages - 1,
    ),
  };
}

async function fetchCommon(
  ctx: CommandContext,
  collection: string,
  trend: DurationChoice | undefined,
  page: number,
): Promise<Reply> {
  const options = { signal: ctx.signal };
  let list: CommonList;
  if (trend === undefined) {
    const { collections } = await ctx.api.audiences.commonCollections(collection, options);
    list = { kind: "common", items: collections };
  } else {
    const { collections } = await ctx.api.audiences.commonCollectionTrends(
      collection,
      durationApi(trend),
      options,
    );
    list = { kind: "trend", duration: trend, items: collections };
  }
  ctx.collections.remember(
    list.items.map((item) => ({ address: item.contractAddress, name: item.name })),
  );
  return commonReply(collection, ctx.collections.name(collection), list, page, ctx.chain);
}

export default defineCommand({
  name: "common",
  description: "Collections most held by a collection's owners, or their owner trends",
  help: "Lists up to 30 collections whose owners also hold this collection, most shared owners first, with the share of each one's owners that are shared. With a trend period (1d, 7d, 30d, 365d), shows how many owners each of them gained or lost instead. Spam collections are left out, on chains with spam data.",
  options: {
    collection: opt.collection("Collection: name, symbol, address or link", { required: true }),
    trend: opt.choice("Show owner trends over this period", DURATION_CHOICES, {
      placeholder: "1d|7d|30d|365d",
    }),
  },
  examples: [
    "/common azuki",
    "/common 0xBC4CA0EdA7647A8aB7C2061c2E118A18a936f13D",
    "/common 0xBC4CA0EdA7647A8aB7C2061c2E118A18a936f13D 7d",
  ],
  run: (ctx, { collection, trend }) => fetchCommon(ctx, collection, trend, 0),
  actions: {
    page: commonPage.handle({
      run: (ctx, { collection, trend, page }) => fetchCommon(ctx, collection, trend, page),
    }),
  },
});
