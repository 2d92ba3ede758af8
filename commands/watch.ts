import { isAddressLike } from "../src/api/validate.ts";
import { type CommandContext, defineCommand, personKey } from "../src/core/command.ts";
import { collectionName, formatNumber, fullAddress } from "../src/core/format.ts";
import { checkCollectionArg, linkedChainOf } from "../src/core/links.ts";
import { checkWalletWords, opt, resolveCollection, resolveWallet } from "../src/core/options.ts";
import type { Reply } from "../src/core/reply.ts";
import { UserError } from "../src/errors.ts";
import { watchStoreOf } from "../src/watches/store.ts";
import type { Watch, WatchStore } from "../src/watches/types.ts";
import { pausedNote } from "./shared/paused.ts";
import { namesChains } from "./shared/subscriptions.ts";

/** Watches a channel may hold when the bot's settings say nothing (WATCHES_PER_CHAT). */
const DEFAULT_WATCHES_PER_CHAT = 10;

/** Owner-count move watched when a collection watch names no threshold. */
export const DEFAULT_OWNERS_PERCENT = 10;

const ACTIONS = [
  { value: "collection", name: "collection" },
  { value: "wallet", name: "wallet" },
  { value: "list", name: "list" },
  { value: "remove", name: "remove" },
] as const;

/** A threshold as typed: "5", "5%", "2.5"; more than 0, at most `max`. */
function threshold(raw: string | undefined, what: string, unit: string, max: number): number {
  const text = (raw ?? "").replace(/%$/, "");
  const value = Number(text);
  if (!/^\d+(\.\d+)?$/.test(text) || !(value > 0) || value > max)
    throw new UserError(
      /^\d+(\.\d+)?$/.test(text) ? "number_out_of_range" : "invalid_number",
      `${what} must be ${unit === "percent" ? "a percent" : "a number of points"} above 0 and at most ${max}, like ${what.toLowerCase()} 5: "${raw ?? ""}" is not.`,
    );
  return value;
}

/** Words that turn a rule off: "whales off". */
const OFF = /^(off|none|remove)$/i;

/**
 * "bored ape yacht club owners 5 whales 2" → the collection words and the thresholds; a rule
 * given as "off" is null (removed from the watch), one not given undefined (kept).
 */
export function parseCollectionWatch(text: string): {
  collection: string;
  owners: number | null | undefined;
  whales: number | null | undefined;
} {
  const words = text.trim().split(/\s+/).filter(Boolean);
  let owners: number | null | undefined;
  let whales: number | null | undefined;
  // Thresholds come after the collection, as "owners N" and "whales N" (or owners:N).
  for (;;) {
    const last = words.at(-1);
    const joined = last?.match(/^(owners|whales):(.*)$/i);
    let key: string | undefined;
    let value: string | undefined;
    if (joined) {
      key = joined[1]?.toLowerCase();
      value = joined[2];
      words.pop();
    } else if (words.length >= 2 && /^(owners|whales)$/i.test(words.at(-2) ?? "")) {
      key = words.at(-2)?.toLowerCase();
      value = last;
      words.splice(-2, 2);
    } else if (last && /^(owners|whales)$/i.test(last)) {
      throw new UserError(
        "missing_argument",
        `Give ${last.toLowerCase()} a number, like ${last.toLowerCase()} 5.`,
      );
    } else break;
    const off = OFF.test(value ?? "");
    if (key === "owners") owners = off ? null : threshold(value, "Owners", "percent", 1000);
    else whales = off ? null : threshold(value, "Whales", "points", 100);
  }
  return { collection: words.join(" "), owners, whales };
}

function describe(watch: Watch, ctx: CommandContext): string {
  const on = namesChains(ctx)
    ? ` (${ctx.chains.find((c) => c.id === watch.chain)?.name ?? watch.chain})`
    : "";
  if (watch.kind === "wallet") return `#${watch.id} wallet ${watch.label}${on}: new NFTs`;
  const parts = [
    watch.ownersPercent !== null
      ? `owner count moves over ${formatNumber(watch.ownersPercent, 1)}% in a day`
      : undefined,
    watch.whalesPoints !== null
      ? `whale share moves over ${formatNumber(watch.whalesPoints, 1)} points in 30 days`
      : undefined,
  ].filter(Boolean);
  return `#${watch.id} ${collectionName(watch.label)}${on}: ${parts.join("; ")}`;
}

async function requireManager(ctx: CommandContext): Promise<void> {
  if (!(await ctx.invocation.canManageChannel()))
    throw new UserError(
      "not_manager",
      "Only people who can manage this channel may add or remove watches.",
    );
}

function added(
  result: Awaited<ReturnType<WatchStore["add"]>>,
  ctx: CommandContext,
  what: string,
): Reply {
  if (result.kind === "full")
    return {
      text: `This channel already has ${result.count} watches, the most it may have (${result.max}). /watch remove <id> frees one; /watch list shows them.`,
      tone: "warning",
    };
  const verb = result.kind === "added" ? "Watching" : "Changed: watching";
  return {
    text: `${verb} ${describe(result.watch, ctx)}. ${what} /watch remove ${result.watch.id} stops it.`,
    tone: "success",
  };
}

async function watchCollection(ctx: CommandContext, text: string): Promise<Reply> {
  const parsed = parseCollectionWatch(text);
  if (parsed.collection === "")
    throw new UserError(
      "missing_argument",
      "Which collection? /watch collection <collection> [owners <percent>] [whales <points>]",
    );
  const checked = checkCollectionArg(parsed.collection);
  if (!checked.ok) throw new UserError(checked.code, checked.message);
  const resolution = await resolveCollection(checked.value, ctx.resolver);
  if (resolution.kind !== "found") return { text: resolution.text, tone: "warning" };
  const address = resolution.value;
  const { platform, chat } = ctx.invocation;
  const target = address.toLowerCase();
  const existing = (await watchStoreOf(ctx.store).forChat(platform, chat.id)).find(
    (watch) =>
      watch.chain === ctx.chain.id && watch.kind === "collection" && watch.target === target,
  );
  // A rule not given is kept from the watch there is; a new watch with none gets the default.
  const owners =
    parsed.owners !== undefined
      ? parsed.owners
      : existing
        ? existing.ownersPercent
        : parsed.whales
          ? null
          : DEFAULT_OWNERS_PERCENT;
  const whales = parsed.whales !== undefined ? parsed.whales : (existing?.whalesPoints ?? null);
  if (existing && parsed.owners === undefined && parsed.whales === undefined)
    return {
      text: `Already watching ${describe(existing, ctx)}: nothing changed. ${RULES_HINT} /watch remove ${existing.id} stops it.`,
      tone: "info",
    };
  if (owners === null && whales === null)
    return {
      text: existing
        ? `Watch #${existing.id} would have no rule left: /watch remove ${existing.id} stops it.`
        : `A watch needs a rule: owners <percent> or whales <points>.`,
      tone: "warning",
    };
  // One read now: an address the service does not know is refused here, not at every check.
  await ctx.api.collections.ownersCount(
    address,
    "DURATION_7_DAYS",
    "GROUP_BY_PERIOD_1_DAY",
    {},
    {
      signal: ctx.signal,
    },
  );
  const result = await watchStoreOf(ctx.store).add(
    {
      platform,
      chatId: chat.id,
      chain: ctx.chain.id,
      kind: "collection",
      target,
      label: ctx.collections.name(address) || fullAddress(address),
      ownersPercent: owners,
      whalesPoints: whales,
      createdBy: personKey(ctx.invocation),
      createdAt: ctx.now().getTime(),
    },
    ctx.settings.watchesPerChat ?? DEFAULT_WATCHES_PER_CHAT,
  );
  if (existing && result.kind === "updated") {
    const changes = [
      ruleChange("owners", existing.ownersPercent, owners, parsed.owners !== undefined),
      ruleChange("whales", existing.whalesPoints, whales, parsed.whales !== undefined),
    ];
    // The rules given first, then those kept.
    if (parsed.owners === undefined && parsed.whales !== undefined) changes.reverse();
    return {
      text: `Changed watch #${result.watch.id} ${collectionName(result.watch.label)}: ${changes
        .filter(Boolean)
        .join("; ")}. ${RULES_HINT} /watch remove ${result.watch.id} stops it.`,
      tone: "success",
    };
  }
  return added(
    result,
    ctx,
    "Owner counts are checked every 5 minutes, whale shares daily (as often as the data changes).",
  );
}

const RULES_HINT =
  "owners <percent> or whales <points> changes one rule and keeps the other; owners off or whales off removes one.";

/** A rule's value as the replies show it: "5%", "2 points". */
function ruleValue(rule: "owners" | "whales", value: number): string {
  return rule === "owners" ? `${formatNumber(value, 1)}%` : `${formatNumber(value, 1)} points`;
}

/** What became of one rule of a watch: "owners rule set to 10% (was 5%)", "whales rule 2 points kept". */
function ruleChange(
  rule: "owners" | "whales",
  was: number | null,
  now: number | null,
  given: boolean,
): string | undefined {
  if (now === null)
    return was === null ? undefined : `${rule} rule removed (was ${ruleValue(rule, was)})`;
  if (!given || was === now) return `${rule} rule ${ruleValue(rule, now)} kept`;
  return was === null
    ? `${rule} rule added: ${ruleValue(rule, now)}`
    : `${rule} rule set to ${ruleValue(rule, now)} (was ${ruleValue(rule, was)})`;
}

async function watchWallet(ctx: CommandContext, text: string): Promise<Reply> {
  const given = text.trim();
  if (given === "" || /\s/.test(given))
    throw new UserError("missing_argument", "Which wallet? /watch wallet <wallet|name.eth>");
  const checked = checkWalletWords(given);
  if (!checked.ok) throw new UserError(checked.code, checked.message);
  const resolution = await resolveWallet(checked.value, ctx.resolver);
  if (resolution.kind !== "found") return { text: resolution.text, tone: "warning" };
  const wallet = resolution.value;
  let address: string;
  let label: string;
  if (isAddressLike(wallet)) {
    address = wallet;
    label = fullAddress(address);
  } else {
    const { entity } = await ctx.api.wallets.ensByName(wallet, { signal: ctx.signal });
    address = entity.resolvedAddress;
    label = wallet;
  }
  const { platform, chat } = ctx.invocation;
  const result = await watchStoreOf(ctx.store).add(
    {
      platform,
      chatId: chat.id,
      chain: ctx.chain.id,
      kind: "wallet",
      target: address.toLowerCase(),
      label,
      ownersPercent: null,
      whalesPoints: null,
      createdBy: personKey(ctx.invocation),
      createdAt: ctx.now().getTime(),
    },
    ctx.settings.watchesPerChat ?? DEFAULT_WATCHES_PER_CHAT,
  );
  return added(
    result,
    ctx,
    `New NFTs are posted as they appear (checked every 5 minutes${ctx.chain.spam ? "; spam left out" : ""}).`,
  );
}

export default defineCommand({
  name: "watch",
  description: "Post when a collection's owners or whales move, or a wallet gets new NFTs",
  help: "/watch collection <collection> [owners <percent>] [whales <points>] posts here when the owner count moves by more than the percent in a day (default 10%), or the share of whales among the owners moved by more than the points over 30 days. Given again for a watched collection, a rule replaces that rule only and the other is kept; owners off or whales off removes one. /watch wallet <wallet|name.eth> posts the new NFTs that appear in the wallet (spam left out where the chain has spam data). Each move over a threshold is posted once. Owner counts and wallets are checked every 5 minutes, whales daily, as often as the data changes. /watch list shows this channel's watches, /watch remove <id> stops one. Watches are per chain (chain:base). Only people who can manage the channel may add or remove them.",
  options: {
    action: opt.choice("What to do", ACTIONS, {
      required: true,
      placeholder: "collection|wallet|list|remove",
    }),
    target: {
      ...opt.string("The collection (and thresholds), the wallet, or the watch's id", {
        placeholder: "what",
        rest: true,
      }),
      // A pasted link's chain is the watch's, when none is named.
      chainOf: linkedChainOf,
    },
  },
  examples: [
    "/watch collection bored ape yacht club owners 5 whales 2",
    "/watch wallet vitalik.eth",
    "/watch list",
    "/watch remove 1",
  ],
  async run(ctx, { action, target }) {
    const { platform, chat } = ctx.invocation;
    const watches = watchStoreOf(ctx.store);
    switch (action) {
      case "list": {
        const mine = await watches.forChat(platform, chat.id);
        if (mine.length === 0)
          return {
            text: "This channel watches nothing. /watch collection <collection> or /watch wallet <wallet> adds a watch.",
            tone: "info",
          };
        return {
          title: `Watches here (${mine.length} of ${ctx.settings.watchesPerChat ?? DEFAULT_WATCHES_PER_CHAT})`,
          text: mine
            .map((watch) => {
              const paused = pausedNote(watch, ctx.now());
              return `${describe(watch, ctx)}${paused ? ` (${paused})` : ""}`;
            })
            .join("\n"),
          tone: "info",
        };
      }
      case "remove": {
        await requireManager(ctx);
        const id = (target ?? "").trim().replace(/^#/, "");
        if (!/^\d{1,15}$/.test(id))
          throw new UserError(
            id ? "invalid_number" : "missing_argument",
            "Which watch? /watch remove <id> (the number /watch list shows).",
          );
        const removed = await watches.remove(platform, chat.id, Number(id));
        return removed
          ? { text: `Watch #${id} removed: it posts no more.`, tone: "success" }
          : {
              text: `This channel has no watch #${id}. /watch list shows its watches.`,
              tone: "warning",
            };
      }
      case "collection":
        await requireManager(ctx);
        return watchCollection(ctx, target ?? "");
      case "wallet":
        await requireManager(ctx);
        return watchWallet(ctx, target ?? "");
    }
  },
});
