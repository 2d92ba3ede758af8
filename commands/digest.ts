import { type CommandContext, defineCommand, personKey } from "../src/core/command.ts";
import { formatTimestamp } from "../src/core/format.ts";
import { opt } from "../src/core/options.ts";
import type { Reply } from "../src/core/reply.ts";
import {
  type Cadence,
  checkTime,
  checkWeekday,
  checkZone,
  looksLikeTime,
  nextSlot,
  type Schedule,
  slotDate,
  slotTime,
} from "../src/core/schedule.ts";
import { digestStoreOf } from "../src/digests/store.ts";
import type { NewDigest } from "../src/digests/types.ts";
import { type ErrorCode, UserError } from "../src/errors.ts";
import { sliceChars } from "../src/strings.ts";
import { type DurationChoice, type MetricChoice, TOP_OPTIONS } from "./shared/choices.ts";
import { DEFAULT_DIGEST_ZONE, DEFAULT_DIGESTS_PER_CHAT, describeDigest } from "./shared/digests.ts";
import { pausedNote } from "./shared/paused.ts";
import { chainNameOf, namesChains } from "./shared/subscriptions.ts";

const ACTIONS = [
  { value: "list", name: "List this channel's digests", aliases: ["show", "ls"] },
  { value: "add", name: "Add a digest", aliases: ["new", "create"] },
  { value: "remove", name: "Remove a digest", aliases: ["rm", "delete", "del"] },
] as const;

const ADD_USAGE =
  "/digest add daily|weekly <day> HH:MM [time zone] top <volume|sales|max_price> <1d|7d|30d|365d> [chain:<id>]";

const usageError = (code: ErrorCode, message: string) =>
  new UserError(code, `${message}\nUsage: ${ADD_USAGE}`);

/** Parses "daily 09:00 Europe/Berlin top volume 1d" (what follows /digest add). */
export function parseDigestSpec(
  text: string,
): Pick<NewDigest, "cadence" | "weekday" | "time" | "zone" | "metric" | "period"> {
  const words = text.trim().split(/\s+/).filter(Boolean);
  const cadenceWord = (words.shift() ?? "").toLowerCase();
  const cadence: Cadence | undefined =
    cadenceWord === "daily" || cadenceWord === "day"
      ? "daily"
      : cadenceWord === "weekly" || cadenceWord === "week"
        ? "weekly"
        : undefined;
  if (!cadence)
    throw usageError(
      cadenceWord ? "invalid_schedule" : "missing_argument",
      cadenceWord
        ? `"${cadenceWord}" is not a schedule: say daily or weekly.`
        : "Say when: daily or weekly, and a time.",
    );
  let weekday: number | null = null;
  if (cadence === "weekly") {
    const day = checkWeekday(words.shift() ?? "");
    if (!day.ok) throw usageError(day.code, day.message);
    weekday = day.value;
  }
  const timeWord = words.shift() ?? "";
  const time = checkTime(timeWord);
  if (!time.ok)
    throw usageError(
      timeWord ? time.code : "missing_argument",
      timeWord ? time.message : "Say at what time, e.g. 09:00.",
    );
  let zone = DEFAULT_DIGEST_ZONE;
  const isTopWord = (word: string) =>
    word.toLowerCase() === "top" || TOP_OPTIONS.metric.schema.safeParse(word).success;
  if (words[0] !== undefined && !isTopWord(words[0]) && !looksLikeTime(words[0])) {
    const checked = checkZone(words.shift() ?? "");
    if (!checked.ok) throw usageError(checked.code, checked.message);
    zone = checked.value;
  }
  if (words[0]?.toLowerCase() === "top") words.shift();
  let metric: MetricChoice = TOP_OPTIONS.metric.fallback as MetricChoice;
  let period: DurationChoice = TOP_OPTIONS.duration.fallback as DurationChoice;
  if (words[0] !== undefined) {
    const parsed = TOP_OPTIONS.metric.schema.safeParse(words[0]);
    if (!parsed.success)
      throw usageError(
        "invalid_choice",
        `metric: ${parsed.error.issues[0]?.message ?? "is not valid"}.`,
      );
    metric = parsed.data;
    words.shift();
  }
  if (words[0] !== undefined) {
    const parsed = TOP_OPTIONS.duration.schema.safeParse(words[0]);
    if (!parsed.success)
      throw usageError(
        "invalid_choice",
        `period: ${parsed.error.issues[0]?.message ?? "is not valid"}.`,
      );
    period = parsed.data;
    words.shift();
  }
  if (words.length > 0)
    throw usageError("unexpected_argument", `I did not expect "${words.join(" ")}".`);
  return { cadence, weekday, time: time.value, zone, metric, period };
}

async function assertManages(ctx: CommandContext): Promise<void> {
  if (!(await ctx.invocation.canManageChannel()))
    throw new UserError(
      "not_manager",
      "Only people who can manage this channel may add or remove digests.",
    );
}

/** "24 Nov 2026 09:00 Europe/Berlin (in 14 hours)": when the digest posts next, in its zone. */
function nextPost(ctx: CommandContext, schedule: Schedule): string {
  const next = nextSlot(schedule, ctx.now().getTime());
  const relative = /\((.+)\)$/.exec(formatTimestamp(new Date(next).toISOString(), ctx.now()))?.[1];
  const local = `${slotDate({ ...schedule, cadence: "daily" }, next)} ${slotTime(schedule, next)} ${schedule.zone}`;
  return relative ? `${local} (${relative})` : local;
}

/** Adds a digest on the invocation's chain (the runtime's chain option, else the chat's). */
async function add(ctx: CommandContext, spec: string | undefined): Promise<Reply> {
  await assertManages(ctx);
  const parsed = parseDigestSpec(spec ?? "");
  const cap = ctx.settings.digestsPerChat ?? DEFAULT_DIGESTS_PER_CHAT;
  const { platform, chat } = ctx.invocation;
  const digest = await digestStoreOf(ctx.store).add(
    {
      platform,
      chatId: chat.id,
      chain: ctx.chain.id,
      ...parsed,
      createdBy: personKey(ctx.invocation),
      createdAt: ctx.now().getTime(),
    },
    cap,
  );
  if (digest === "full")
    return {
      text: `This channel already has ${cap} digests, the most it may have. /digest remove <number> makes room.`,
      tone: "warning",
    };
  const on = namesChains(ctx) ? ` on ${ctx.chain.name}` : "";
  return {
    text: `Digest ${digest.id} added${on}: ${describeDigest(digest)}, with the number of new collections minted in the last 24 hours. Next post: ${nextPost(ctx, digest)}.`,
    tone: "success",
  };
}

async function list(ctx: CommandContext): Promise<Reply> {
  const { platform, chat } = ctx.invocation;
  const digests = await digestStoreOf(ctx.store).forChat(platform, chat.id);
  if (digests.length === 0)
    return { text: `This channel has no scheduled digest. Add one: ${command.examples[0]}` };
  return {
    title: "Scheduled digests",
    fields: digests.map((digest) => {
      const paused = pausedNote(digest, ctx.now());
      return {
        name: `Digest ${digest.id}`,
        value: `${describeDigest(digest)}${namesChains(ctx) ? `, on ${chainNameOf(ctx, digest.chain)}` : ""}. ${paused ? `${paused.charAt(0).toUpperCase()}${paused.slice(1)}.` : `Next: ${nextPost(ctx, digest)}.`}`,
      };
    }),
    footer: "/digest remove <number> removes one",
  };
}

async function remove(ctx: CommandContext, spec: string | undefined): Promise<Reply> {
  await assertManages(ctx);
  const raw = (spec ?? "").trim().replace(/^#/, "");
  if (!/^\d{1,12}$/.test(raw))
    throw new UserError(
      raw ? "invalid_number" : "missing_argument",
      raw
        ? `"${raw}" is not a digest number: /digest list shows them.`
        : "Say which digest: /digest remove <number> (/digest list shows them).",
    );
  const { platform, chat } = ctx.invocation;
  const removed = await digestStoreOf(ctx.store).remove(platform, chat.id, Number(raw));
  return removed
    ? { text: `Digest ${raw} removed: it will not be posted again.`, tone: "success" }
    : { text: `This channel has no digest ${raw}. /digest list shows them.`, tone: "warning" };
}

const command = defineCommand({
  name: "digest",
  description:
    "Scheduled digests: the top collections and the day's new collections, daily or weekly",
  help: "Posts the top collections (as /top, with its chart) and the number of collections minted in the last 24 hours, at a time of day in a time zone (an IANA name such as Europe/Berlin; default UTC), daily or weekly. A post missed while the bot was down comes once when it starts again, with its date. Only people who can manage the channel add or remove digests.",
  options: {
    action: opt.choice("add, list or remove", ACTIONS, {
      fallback: "list",
      placeholder: "add|list|remove",
    }),
    spec: opt.string(
      "add: daily|weekly [day] HH:MM [time zone] top <metric> <period>; remove: the digest's number",
      { placeholder: "schedule|number", rest: true },
    ),
  },
  examples: [
    "/digest add daily 09:00 top volume 1d",
    "/digest add weekly mon 09:00 Europe/Berlin top sales 7d",
    "/digest list",
    "/digest remove 1",
  ],
  async run(ctx, { action, spec }) {
    if (action === "add") return add(ctx, spec);
    if (action === "remove") return remove(ctx, spec);
    // "/digest frobnicate": not an action, so the text parser passed it on.
    if (spec?.trim())
      throw new UserError(
        "unknown_subcommand",
        `"${sliceChars(spec.trim(), 40)}" is not something /digest does: use add, list or remove. Example: ${command.examples[0]}`,
      );
    return list(ctx);
  },
});

export default command;
