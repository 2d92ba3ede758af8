import { z } from "zod";
import type { SegmentRequest } from "../src/api/audiences.ts";
import { ApiError } from "../src/api/errors.ts";
import { defineAction, payloadField } from "../src/core/button-actions.ts";
import { type CommandContext, defineCommand } from "../src/core/command.ts";
import { type CsvColumn, toCsv } from "../src/core/csv.ts";
import {
  collectionName,
  formatCount,
  formatNative,
  fullAddress,
  short,
} from "../src/core/format.ts";
import { opt } from "../src/core/options.ts";
import { pageButtons } from "../src/core/paging.ts";
import type { Reply } from "../src/core/reply.ts";
import { UserError } from "../src/errors.ts";
import { describeFilters, filtersOf, financialFilterOptions } from "./shared/filters.ts";

const PAGE_SIZE = 10;
/** The client's largest page; the export pages through the segment with it. */
const EXPORT_PAGE = 500;
/** Past this a chat attachment stops being the right tool. */
const EXPORT_CAP = 10_000;

const CONDITION_CHOICES = [
  { value: "all", name: "Holds all the collections", aliases: ["both", "and"] },
  { value: "any", name: "Holds any of the collections", aliases: ["either", "or"] },
] as const;

const optionalText = payloadField.optional(z.string());

/**
 * Everything that defines a segment, as given (the command's options by name, the financial
 * filters among them): what the buttons that page and export it keep.
 */
const segmentQuery = z.object({
  collection: z.string(),
  collection2: optionalText,
  min_owned: optionalText,
  condition: payloadField.optional(payloadField.choice(CONDITION_CHOICES)),
  min_volume: optionalText,
  min_avg_price: optionalText,
  min_collections: optionalText,
  max_days_since_purchase: optionalText,
});

type SegmentQuery = z.output<typeof segmentQuery>;

const pageAction = defineAction({
  command: "segment",
  name: "page",
  schema: segmentQuery.extend({ page: payloadField.page }),
});
const exportAction = defineAction({ command: "segment", name: "csv", schema: segmentQuery });

interface SegmentWallet {
  walletAddress: string;
  totalSpend: string;
}

function segmentRequest(query: SegmentQuery): SegmentRequest {
  const entry = (contractAddress: string) => ({
    contractAddress,
    ...(query.min_owned !== undefined ? { nftsOwnedCountGte: query.min_owned } : {}),
  });
  const request: SegmentRequest = {
    collections: [entry(query.collection)],
    ...filtersOf(query),
  };
  if (query.collection2 !== undefined) {
    request.collections.push(entry(query.collection2));
    request.collectionsCondition = query.condition === "any" ? "CONDITION_ANY" : "CONDITION_ALL";
  }
  return request;
}

type Names = (address: string) => string | undefined;

function describeSegment(
  query: SegmentQuery,
  names: Names,
  symbol: string,
): { title: string; text: string } {
  const label = (address: string) => {
    const name = names(address);
    return name ? `${collectionName(name)} (${short(address)})` : fullAddress(address);
  };
  const title =
    query.collection2 === undefined
      ? `Wallets holding ${label(query.collection)}`
      : `Wallets holding ${label(query.collection)} ${query.condition === "any" ? "or" : "and"} ${label(query.collection2)}`;
  const filters = describeFilters(filtersOf(query), symbol);
  const owned =
    query.min_owned !== undefined
      ? `at least ${formatCount(query.min_owned)} ${query.min_owned === "1" ? "NFT" : "NFTs"} of ${query.collection2 === undefined ? "the collection" : "each collection"}`
      : undefined;
  const criteria = [owned, filters].filter((part) => part !== undefined);
  return {
    title,
    text:
      criteria.length > 0
        ? `Criteria: ${criteria.join(", ")}.`
        : "Every holder, sorted by total spend.",
  };
}

function segmentReply(
  query: SegmentQuery,
  wallets: SegmentWallet[],
  page: number,
  names: Names,
  symbol: string,
): Reply {
  const { title, text } = describeSegment(query, names, symbol);
  const shown = wallets.slice(0, PAGE_SIZE);
  if (shown.length === 0) {
    return {
      title,
      text: page === 0 ? `${text}\nNo wallet matches this segment.` : `${text}\nNo more wallets.`,
      replaceOriginal: page > 0,
      buttons: pageButtons((next) => pageAction.action({ ...query, page: next }), page, false),
    };
  }
  const exportButton = exportAction.button(query, "Export CSV", { style: "primary" });
  return {
    title,
    text,
    table: {
      columns: ["#", "Wallet", "Total spend"],
      rows: shown.map((wallet, i) => [
        String(page * PAGE_SIZE + i + 1),
        short(wallet.walletAddress),
        formatNative(wallet.totalSpend, symbol),
      ]),
      align: ["right", "left", "right"],
    },
    footer: `Page ${page + 1} · sorted by total spend (${symbol})`,
    replaceOriginal: page > 0,
    buttons: [
      ...pageButtons(
        (next) => pageAction.action({ ...query, page: next }),
        page,
        wallets.length > PAGE_SIZE,
      ),
      exportButton,
    ],
  };
}

const CSV_COLUMNS: readonly CsvColumn<SegmentWallet>[] = [
  // Untrusted text from the data service (an address, or whatever it sent instead).
  { header: "walletAddress", value: (wallet) => fullAddress(wallet.walletAddress) },
  { header: "totalSpend", value: (wallet) => wallet.totalSpend, numeric: true },
];

export function segmentCsv(wallets: readonly SegmentWallet[]): string {
  return toCsv(CSV_COLUMNS, wallets);
}

function segmentExportReply(
  query: SegmentQuery,
  wallets: readonly SegmentWallet[],
  capped: boolean,
  now: Date,
  symbol: string,
): Reply {
  const title = "Segment export";
  if (wallets.length === 0) {
    return { title, text: "No wallet matches this segment, so there is nothing to export." };
  }
  const name = [
    "segment",
    query.collection.slice(0, 10).toLowerCase(),
    ...(query.collection2 !== undefined ? [query.collection2.slice(0, 10).toLowerCase()] : []),
    now.toISOString().slice(0, 10),
  ].join("-");
  return {
    title,
    text: capped
      ? `The first ${formatCount(String(wallets.length))} wallets of the segment, by total spend (the export stops at ${formatCount(String(EXPORT_CAP))}).`
      : `All ${formatCount(String(wallets.length))} wallets of the segment, by total spend.`,
    files: [
      {
        name: `${name}.csv`,
        contentType: "text/csv",
        data: new TextEncoder().encode(segmentCsv(wallets)),
      },
    ],
    footer: `Columns: walletAddress, totalSpend (${symbol}, exact)`,
  };
}

/** A 404 on the segment endpoint means one of the collections is unknown. */
async function segmentCall<T>(query: SegmentQuery, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof ApiError && error.kind === "not_found") {
      throw new UserError(
        "unknown_collection",
        query.collection2 === undefined
          ? `No collection ${short(query.collection)} on this chain.`
          : `No collection ${short(query.collection)} or ${short(query.collection2)} on this chain: check both.`,
      );
    }
    throw error;
  }
}

async function fetchPage(ctx: CommandContext, query: SegmentQuery, page: number): Promise<Reply> {
  const { wallets } = await segmentCall(query, () =>
    ctx.api.audiences.segmentedAudience(
      // One more than a page tells whether there is a next page.
      { ...segmentRequest(query), limit: PAGE_SIZE + 1, offset: page * PAGE_SIZE },
      { signal: ctx.signal },
    ),
  );
  ctx.resolver.rememberWallets(wallets.map((wallet) => wallet.walletAddress));
  return segmentReply(
    query,
    wallets,
    page,
    (address) => ctx.collections.name(address),
    ctx.chain.symbol,
  );
}

async function fetchAll(ctx: CommandContext, query: SegmentQuery): Promise<Reply> {
  const all: SegmentWallet[] = [];
  let more = true;
  while (more && all.length < EXPORT_CAP) {
    const { wallets } = await segmentCall(query, () =>
      ctx.api.audiences.segmentedAudience(
        { ...segmentRequest(query), limit: EXPORT_PAGE, offset: all.length },
        { signal: ctx.signal },
      ),
    );
    all.push(...wallets);
    more = wallets.length === EXPORT_PAGE;
  }
  return segmentExportReply(query, all.slice(0, EXPORT_CAP), more, ctx.now(), ctx.chain.symbol);
}

export default defineCommand({
  name: "segment",
  description: "Wallets holding one or two collections, filtered by spending; exportable as CSV",
  help: "Lists the wallets that hold a collection (or two: condition all = both, any = either; default all), sorted by total spend, 10 per page. min_owned asks for at least that many NFTs of each collection. Filters by name: min_volume:1.5 and min_avg_price:0.2 (in the chain's currency, e.g. ETH), min_collections:3, max_days_since_purchase:30. The Export CSV button sends the whole list (up to 10,000 wallets) as a file.",
  options: {
    collection: opt.collection("Collection: name, symbol, address or link", { required: true }),
    collection2: {
      ...opt.collection("A second collection"),
      placeholder: "collection2",
    },
    min_owned: opt.count("Minimum NFTs owned in each collection", { placeholder: "min_owned" }),
    condition: opt.choice("With two collections: hold all or any of them", CONDITION_CHOICES, {
      placeholder: "any|all",
    }),
    ...financialFilterOptions(),
  },
  examples: [
    "/segment bayc mayc 1 all",
    "/segment 0xBC4CA0EdA7647A8aB7C2061c2E118A18a936f13D",
    "/segment 0xBC4CA0EdA7647A8aB7C2061c2E118A18a936f13D 0x60E4d786628Fea6478F785A6d7e704777c86a7c6 1 any",
    "/segment 0xBC4CA0EdA7647A8aB7C2061c2E118A18a936f13D min_owned:2 min_volume:10 max_days_since_purchase:90",
  ],
  async run(ctx, args) {
    if (
      args.collection2 !== undefined &&
      args.collection2.toLowerCase() === args.collection.toLowerCase()
    ) {
      throw new UserError(
        "conflicting_arguments",
        "The two collections are the same: give two different ones, or one.",
      );
    }
    const query: SegmentQuery = {
      collection: args.collection,
      collection2: args.collection2,
      min_owned: args.min_owned,
      condition: args.condition,
      min_volume: args.min_volume,
      min_avg_price: args.min_avg_price,
      min_collections: args.min_collections,
      max_days_since_purchase: args.max_days_since_purchase,
    };
    return fetchPage(ctx, query, 0);
  },
  actions: {
    page: pageAction.handle({
      run: (ctx, { page, ...query }) => fetchPage(ctx, query, page),
    }),
    csv: exportAction.handle({ run: (ctx, query) => fetchAll(ctx, query) }),
  },
});
