import type { DurationChoice, MetricChoice } from "../../commands/shared/choices.ts";
import { topAnswer } from "../../commands/top.ts";
import type { ApiClient } from "../api/client.ts";
import type { Chain } from "../chains.ts";
import { formatCount } from "../core/format.ts";
import type { KnownCollections } from "../core/known-collections.ts";
import { countNewContracts } from "../core/new-contracts.ts";
import type { Reply } from "../core/reply.ts";
import { describeSchedule, slotDate, slotTime } from "../core/schedule.ts";
import type { Digest } from "./types.ts";

/** Collections in a digest's top list (one page of /top). */
export const DIGEST_TOP_LIMIT = 10;
/** Pages of 500 read at most when counting the day's new collections. */
const COUNT_PAGES = 10;

/**
 * A digest's post for one slot, from what was fetched: the /top answer (with its chart and page
 * buttons) under a title naming the slot's date, and the number of collections minted in the 24
 * hours before the slot. `late`: the slot's time passed while the bot was down, which the title
 * says.
 */
export function digestReply(input: {
  digest: Digest;
  slot: number;
  late: boolean;
  top: Reply;
  minted: { count: number; capped: boolean };
  /** The chain's name, when the bot serves several. */
  chainName?: string | undefined;
}): Reply {
  const { digest, slot, late, top, minted } = input;
  const kind = digest.cadence === "weekly" ? "Weekly" : "Daily";
  const lateNote = late ? ` (posted late: the bot was down at ${slotTime(digest, slot)})` : "";
  const on = input.chainName ? ` on ${input.chainName}` : "";
  const window = late ? `the 24 hours before ${slotTime(digest, slot)}` : "the last 24 hours";
  const count = `${minted.capped ? "more than " : ""}${formatCount(String(minted.count))}`;
  return {
    ...top,
    title: `${kind} digest for ${slotDate(digest, slot)}${lateNote}`,
    text: [
      `New collections minted${on} in ${window}: ${count}.`,
      `${top.title ?? "Top collections"}:${top.text ? ` ${top.text}` : ""}`,
    ].join("\n"),
    footer: `Digest ${digest.id}, ${describeSchedule(digest)} · /digest list`,
    replaceOriginal: false,
  };
}

/** Fetches what a digest shows (the top list and the day's count) and builds its post. */
export async function digestPost(input: {
  digest: Digest;
  slot: number;
  late: boolean;
  api: ApiClient;
  /** The digest's chain: its id and the symbol its amounts are in. */
  chain: Pick<Chain, "id" | "symbol">;
  /** The chain's collection index (names for addresses the top list leaves unnamed). */
  collections?: KnownCollections | undefined;
  /** The chain's name, when the bot serves several. */
  chainName?: string | undefined;
}): Promise<Reply> {
  const { digest, api } = input;
  const [top, minted] = await Promise.all([
    topAnswer(
      { chain: input.chain, api, collections: input.collections, background: true },
      digest.metric as MetricChoice,
      digest.period as DurationChoice,
      DIGEST_TOP_LIMIT,
      0,
    ),
    countNewContracts(
      api,
      { since: input.slot - 86_400_000, until: input.slot },
      { pages: COUNT_PAGES, call: { background: true } },
    ),
  ]);
  return digestReply({
    digest,
    slot: input.slot,
    late: input.late,
    top,
    minted,
    chainName: input.chainName,
  });
}
