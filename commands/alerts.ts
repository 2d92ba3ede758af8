import { digestReply } from "../src/alerts/message.ts";
import { BAD_ACTOR } from "../src/alerts/minters.ts";
import {
  type AlertRules,
  BEHAVIOR_NAMES,
  behaviorNamed,
  behaviorWords,
  clockIn,
  dueUnder,
  inQuiet,
  MAX_DIGEST_MINUTES,
  MAX_KEYWORDS,
  parseQuiet,
} from "../src/alerts/rules.ts";
import { alertStoresOf } from "../src/alerts/store/index.ts";
import type { NewContract, Subscription } from "../src/alerts/store/types.ts";
import { leftOutBy } from "../src/alerts/wants.ts";
import { type CommandContext, chatKey, defineCommand } from "../src/core/command.ts";
import { opt } from "../src/core/options.ts";
import type { Reply } from "../src/core/reply.ts";
import { UserError } from "../src/errors.ts";
import { sliceChars, stripControlCharacters } from "../src/strings.ts";
import { BAD_ACTOR_CHOICES, namesChains, TYPE_CHOICES } from "./shared/subscriptions.ts";

const ACTIONS = [
  { value: "show", name: "Show the rules in effect" },
  { value: "test", name: "What the last hour would have looked like" },
  { value: "minters", name: "Minter behaviors: include|exclude <list>, or clear" },
  { value: "keywords", name: "Name keywords: include|exclude <words>, or clear" },
  { value: "quiet", name: "Quiet hours: 23:00-07:00 <time zone>, or off" },
  { value: "digest", name: "A digest every N minutes, or off (each mint)" },
  { value: "reset", name: "Remove every rule" },
] as const;

type Action = (typeof ACTIONS)[number]["value"];

/** How many seen contracts /alerts test reads (the last hour of a busy chain fits). */
const TEST_LIMIT = 2_000;

const HELP = [
  "Rules for this channel's new-collection alerts, one set per chain it subscribes to (the rules belong to the subscription: /subscribe first). Anyone may see them (/alerts show) or try them (/alerts test); only people who can manage the channel may change them.",
  "minters include|exclude <behaviors>: post only mints whose minter has one of these behavior labels, or none of them (whale, creator, collector, flipper, newbie, badactor, clean (no spam history), unknown...; BEHAVIOR_WHALE works too). keywords include|exclude <words>: post only collections whose name has one of the words (whole words, any case; commas separate keywords of several words), or none of them. minters clear / keywords clear removes a list.",
  "quiet 23:00-07:00 Europe/Berlin: alerts in that window (the zone's clock, across midnight and daylight saving) are held and sent as one digest when it ends; quiet off. digest 30: one digest every 30 minutes instead of each mint; digest off. reset removes every rule. Rules apply to alerts queued from then on; the collection types and bad actors' mints are /subscribe's.",
].join("\n\n");

export default defineCommand({
  name: "alerts",
  description: "This channel's alert rules: filters, quiet hours, digest mode; show and test them",
  help: HELP,
  options: {
    action: opt.choice("What to do", ACTIONS, {
      fallback: "show",
      placeholder: "show|test|minters|keywords|quiet|digest|reset",
    }),
    value: opt.string("The rule (see /help alerts)", {
      placeholder: "rule",
      rest: true,
      maxLength: 300,
    }),
  },
  examples: [
    "/alerts show",
    "/alerts minters exclude badactor, newbie",
    "/alerts keywords include punk, ape",
    "/alerts keywords exclude airdrop",
    "/alerts quiet 23:00-07:00 Europe/Berlin",
    "/alerts digest 30",
    "/alerts test",
    "/alerts reset",
  ],
  async run(ctx, { action, value }) {
    const { platform, chat } = ctx.invocation;
    const subscription = await alertStoresOf(ctx.store).subscriptions.find(
      platform,
      chat.id,
      ctx.chain.id,
    );
    const on = namesChains(ctx) ? ` to ${ctx.chain.name}` : "";
    if (!subscription)
      throw new UserError(
        "not_subscribed",
        `This channel is not subscribed${on}: alert rules belong to a subscription. /subscribe first.`,
      );
    if (action === "show") return showReply(ctx, subscription);
    if (action === "test") return testReply(ctx, subscription);
    if (!(await ctx.invocation.canManageChannel()))
      throw new UserError(
        "not_manager",
        "Only people who can manage this channel may change its alert rules.",
      );
    const rules = change(action, value ?? "", structuredClone(subscription.rules));
    await alertStoresOf(ctx.store).subscriptions.setRules(subscription.id, rules);
    ctx.logger.info(
      { chat: chatKey(ctx.invocation), chain: subscription.chain, action, rules },
      "alert rules changed",
    );
    return {
      text: `Alert rules changed. Now:\n${describe({ ...subscription, rules }).join("\n")}`,
      tone: "success",
    };
  },
});

/** Comma-separated when there is a comma, else word by word. */
const items = (raw: string) =>
  (raw.includes(",") ? raw.split(",") : raw.split(/\s+/)).map((s) => s.trim()).filter(Boolean);

/** What people typed, without control characters or half surrogate pairs (never stored or echoed). */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
const clean = (raw: string) => stripControlCharacters(raw).replace(LONE_SURROGATE, "");

function change(action: Exclude<Action, "show" | "test">, typed: string, rules: AlertRules) {
  const raw = clean(typed);
  const words = raw.trim().split(/\s+/).filter(Boolean);
  const [first = "", ...rest] = words;
  const verb = first.toLowerCase();
  const tail = rest.join(" ");
  switch (action) {
    case "reset":
      return {};
    case "digest": {
      if (["off", "none", "each", "0"].includes(verb)) {
        delete rules.digestMinutes;
        return rules;
      }
      // Digits as typed (Number() would take 1e3, 0x1e and 30.0), then an optional unit.
      const typed = /^(\d{1,6})(?:m|min|minutes?)?$/.exec(verb)?.[1];
      const minutes = typed === undefined ? Number.NaN : Number(typed);
      if (!(minutes >= 1 && minutes <= MAX_DIGEST_MINUTES))
        throw new UserError(
          typed === undefined ? "invalid_number" : "number_out_of_range",
          `Use /alerts digest <minutes> (1 to ${MAX_DIGEST_MINUTES}), or /alerts digest off for each mint.`,
        );
      rules.digestMinutes = minutes;
      return rules;
    }
    case "quiet": {
      if (["off", "none", "clear"].includes(verb)) {
        delete rules.quiet;
        return rules;
      }
      if (!first || rest.length !== 1)
        throw new UserError(
          "invalid_schedule",
          "Use /alerts quiet 23:00-07:00 <time zone> (like Europe/Berlin or UTC), or /alerts quiet off.",
        );
      const parsed = parseQuiet(first, rest[0] ?? "");
      if ("error" in parsed) throw new UserError("invalid_schedule", sliceChars(parsed.error, 200));
      rules.quiet = parsed.quiet;
      return rules;
    }
    case "minters":
    case "keywords": {
      const usage = `Use /alerts ${action} include <list>, /alerts ${action} exclude <list>, or /alerts ${action} clear.`;
      if (verb === "clear" || verb === "off") {
        delete rules[action];
        return rules;
      }
      if ((verb !== "include" && verb !== "exclude") || !tail)
        throw new UserError("invalid_argument", usage);
      let list: string[];
      if (action === "minters") {
        // "bad actor" as one name, else the names one by one.
        const whole = tail.includes(",") ? undefined : behaviorNamed(tail);
        const names = whole ? [tail] : items(tail);
        list = names.map((name) => {
          const behavior = behaviorNamed(name);
          if (!behavior)
            throw new UserError(
              "unknown_behavior",
              `${sliceChars(name, 40)} is not a minter behavior: use ${BEHAVIOR_NAMES.join(", ")}.`,
            );
          return behavior;
        });
      } else {
        list = items(tail).map((word) => word.toLowerCase().replace(/\s+/g, " "));
        if (list.some((word) => word.length > 40))
          throw new UserError("input_too_long", "A keyword is at most 40 characters.");
      }
      list = [...new Set(list)];
      if (list.length > MAX_KEYWORDS)
        throw new UserError("too_many_items", `At most ${MAX_KEYWORDS} ${action} in a list.`);
      rules[action] = { ...rules[action], [verb]: list };
      return rules;
    }
  }
}

/** The rules in effect, in plain words, one line each. */
function describe(subscription: Pick<Subscription, "types" | "badActors" | "rules">): string[] {
  const { rules } = subscription;
  const types =
    TYPE_CHOICES.find((choice) => choice.value === subscription.types)?.name ?? subscription.types;
  const bad = BAD_ACTOR_CHOICES.find((c) => c.value === subscription.badActors)?.name;
  const list = (names: string[]) => names.join(", ");
  const behaviors = (names: string[]) => list(names.map(behaviorWords));
  const keywords = (names: string[]) => list(names.map((k) => `"${k}"`));
  const lines = [
    `• Collections: ${types} (/subscribe changes them).`,
    `• Bad actors' mints: ${bad?.toLowerCase() ?? subscription.badActors}.`,
  ];
  const { minters, keywords: words, quiet, digestMinutes } = rules;
  if (minters?.include?.length)
    lines.push(`• Only mints whose minter is: ${behaviors(minters.include)}.`);
  if (minters?.exclude?.length)
    lines.push(`• Not mints whose minter is: ${behaviors(minters.exclude)}.`);
  if (subscription.badActors === "hide" && minters?.include?.includes(BAD_ACTOR))
    lines.push("  (Bad actors' mints stay hidden: /subscribe badactors:show posts them.)");
  if (words?.include?.length)
    lines.push(`• Only collections whose name has one of: ${keywords(words.include)}.`);
  if (words?.exclude?.length)
    lines.push(`• Not collections whose name has any of: ${keywords(words.exclude)}.`);
  lines.push(
    quiet
      ? `• Quiet hours: ${quiet.from} to ${quiet.to} ${quiet.zone} time; alerts then are held and sent as one digest at ${quiet.to}.`
      : "• No quiet hours.",
  );
  lines.push(
    digestMinutes
      ? `• Delivery: one digest every ${digestMinutes} minutes.`
      : "• Delivery: each mint as it comes (a burst becomes one digest).",
  );
  return lines;
}

function showReply(ctx: CommandContext, subscription: Subscription): Reply {
  const on = namesChains(ctx) ? ` on ${ctx.chain.name}` : "";
  const now = ctx.now().getTime();
  const quiet = subscription.rules.quiet;
  return {
    title: `Alert rules${on}`,
    text: [
      ...describe(subscription),
      ...(quiet && inQuiet(quiet, now) ? ["It is quiet hours now."] : []),
    ].join("\n"),
    footer: "/help alerts shows how to change them · /alerts test tries them on the last hour",
  };
}

async function testReply(ctx: CommandContext, subscription: Subscription): Promise<Reply> {
  const outbox = alertStoresOf(ctx.store).outbox;
  const now = ctx.now().getTime();
  const seen = await outbox.seenSince(subscription.chain, now - 3_600_000, TEST_LIMIT);
  const count = { types: 0, bad: 0, minter: 0, keyword: 0 };
  const kept: NewContract[] = [];
  for (const contract of seen) {
    const by = leftOutBy(subscription, contract);
    if (by) count[by]++;
    else kept.push(contract);
  }
  const left = [
    count.types && `${count.types} for their type`,
    count.bad && `${count.bad} minted by bad actors`,
    count.minter && `${count.minter} for their minter`,
    count.keyword && `${count.keyword} for their name`,
  ].filter(Boolean);
  const { held, dueAt } = dueUnder(subscription.rules, now);
  const timing = subscription.rules.digestMinutes
    ? `They would come in digests every ${subscription.rules.digestMinutes} minutes.`
    : held
      ? ""
      : "They would come one by one (a burst as one digest).";
  const summary = [
    `Test: in the last hour ${seen.length} new collection${seen.length === 1 ? "" : "s"} ${seen.length === 1 ? "was" : "were"} seen; ${kept.length} would have been posted here${left.length ? ` (left out: ${left.join(", ")})` : ""}.`,
    timing,
    held && subscription.rules.quiet && inQuiet(subscription.rules.quiet, now)
      ? `It is quiet hours now: what comes is held until ${clockIn(dueAt, subscription.rules.quiet.zone)} ${subscription.rules.quiet.zone} time.`
      : "",
    "Nothing was sent anywhere else.",
  ]
    .filter(Boolean)
    .join(" ");
  if (kept.length === 0) return { title: "Alert rules test", text: summary };
  const chain = ctx.chain;
  const digest = digestReply(kept, null, {
    id: chain.id,
    explorer: chain.explorer,
    name: namesChains(ctx) ? chain.name : undefined,
    spam: chain.spam,
  });
  return {
    ...digest,
    title: `Test: ${digest.title ?? ""}`,
    text: [summary, digest.text].filter(Boolean).join("\n"),
    footer: "A test of this channel's alert rules (/alerts show) · newest first",
  };
}
