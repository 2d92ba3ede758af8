/**
 * The words a manager types for a gate's criteria (`/gate add`), read into GateCriterion[]. The
 * values inside a clause (counts, amounts, days, behavior names) are read in
 * src/gates/criteria-values.ts; each criterion in plain words, for /gate list, /gate test and the
 * log, is src/gates/describe.ts's (both re-exported here).
 *
 * Grammar (any case; criteria separated by commas or " and ", all of them must pass):
 *
 *   holds <N> <collection> [on <chain>]      at least N NFTs of the collection, wallets added up;
 *                                            the collection by name, address (or the bot's short
 *                                            form 0x1234…abcd) or link (OpenSea, Etherscan…)
 *   behavior <name>[,<name>…] [on <chain>]   some wallet's behavior label is one of these (names
 *                                            separated by commas, "or" or "and")
 *   not behavior <name>[,<name>…] [on …]     some wallet's behavior label is none of these
 *   volume <X> [on <chain>]                  NFT purchase volume at least X (the chain's currency)
 *   avgprice <X> [on <chain>]                average NFT purchase price at least X
 *   collections <N> [on <chain>]             owns NFTs of at least N collections
 *   lastpurchase <D>d [on <chain>]           bought an NFT within the last D days
 *
 * The four spend words of one chain make one SpendCriterion: one wallet must pass them all. A
 * comma or "and" only separates criteria when a criterion's word follows it, so behavior lists
 * (`collector,whale`) and names with "and" in them (`Cats and Dogs`) stay whole.
 *
 * Collection names shown later come from the resolver (the collection index), never from what
 * was typed: a criterion cannot carry markup or a mention into a reply.
 */

import { quoteInput, toChecksumAddress } from "../api/validate.ts";
import { KNOWN_CHAINS } from "../chains.ts";
import type { CommandContext } from "../core/command.ts";
import { checkCollectionArg, isLinked } from "../core/links.ts";
import { UserError } from "../errors.ts";
import { cutText, stripControlCharacters } from "../strings.ts";
import { amountOf, behaviorsOf, countOf, daysOf } from "./criteria-values.ts";
import { chainWords } from "./describe.ts";
import type { BehaviorCriterion, GateCriterion, HoldsCriterion, SpendCriterion } from "./types.ts";

export { GATE_BEHAVIOR_NAMES, MAX_COUNT, MAX_DAYS } from "./criteria-values.ts";
export { chainWords, describeCriterion } from "./describe.ts";

export interface CriteriaContext {
  /** The chain a criterion without `on <chain>` reads (the invocation's). */
  chain: string;
  /**
   * A collection's name, short form or address into its checksummed address and name, on a
   * chain; throws UserError (naming what was typed) when it knows none.
   */
  resolveCollection(q: string, chain: string): Promise<{ address: string; name?: string }>;
  /** The chains the bot serves; when given, `on <chain>` must name one of them. */
  chains?: readonly string[];
}

/** At most this many criteria per gate (the spend words of one chain count as one). */
export const MAX_CRITERIA = 5;

/** Criteria people can paste from /help; on the simulator, the demo wallet passes each. */
export const CRITERIA_EXAMPLES = [
  "holds 1 Azuki",
  "holds 1 0xBC4CA0EdA7647A8aB7C2061c2E118A18a936f13D",
  "holds 1 https://opensea.io/collection/azuki",
  "behavior collector,whale",
  "not behavior flipper",
  "volume 10 and lastpurchase 30d",
  "holds 1 Azuki, not behavior flipper, avgprice 0.5",
] as const;

/** What one can type, for refusals. */
const WHAT_TO_TYPE =
  'Type criteria such as `holds 1 Azuki`, `behavior collector,whale`, `not behavior flipper`, `volume 10`, `avgprice 0.5`, `collections 5` or `lastpurchase 30d`, separated by commas or "and".';

const KEYWORDS = [
  "holds",
  "hold",
  "behavior",
  "behaviour",
  "not",
  "volume",
  "avgprice",
  "collections",
  "lastpurchase",
] as const;
const STARTS_CRITERION = new RegExp(`^(?:${KEYWORDS.join("|")})(?:\\s|$)`, "i");

const CHAIN_ALIASES: Record<string, string> = {
  eth: "ethereum",
  mainnet: "ethereum",
  matic: "polygon",
  arb: "arbitrum",
  op: "optimism",
};

/** A chain as typed after "on": an id, a name or a common short form; undefined when none. */
function chainNamed(word: string): string | undefined {
  const key = word.trim().toLowerCase();
  if (KNOWN_CHAINS[key]) return key;
  if (CHAIN_ALIASES[key]) return CHAIN_ALIASES[key];
  for (const [id, chain] of Object.entries(KNOWN_CHAINS))
    if (chain.name.toLowerCase() === key) return id;
  return undefined;
}

/**
 * Splits on commas and " and ", gluing back a piece that does not start a criterion to the one
 * before it, with the separator it had.
 */
function clausesOf(text: string): string[] {
  const parts = text.split(/(\s*,\s*|\s+and\s+)/i);
  const clauses: string[] = [];
  for (let i = 0; i < parts.length; i += 2) {
    const piece = (parts[i] ?? "").trim();
    const separator = i > 0 ? (parts[i - 1] ?? "") : "";
    const last = clauses.length - 1;
    // A separator at the very end is a slip; two in a row leave a criterion out.
    if (piece === "" && i === parts.length - 1 && last >= 0) continue;
    if (last >= 0 && piece !== "" && !STARTS_CRITERION.test(piece))
      clauses[last] += `${separator}${piece}`;
    else clauses.push(piece);
  }
  return clauses;
}

/** "… on base": the chain, and the clause without it; `named` says whether the chain must be. */
function splitChain(clause: string, ctx: CriteriaContext, strict: boolean) {
  const match = /^(.*\S)\s+on\s+(\S+)$/i.exec(clause);
  if (!match?.[1] || !match[2]) return { body: clause, chain: ctx.chain, named: false };
  const chain = chainNamed(match[2]);
  if (!chain) {
    // "holds 1 Art on Chain" may be a name; elsewhere "on" can only introduce a chain.
    if (!strict) return { body: clause, chain: ctx.chain, named: false };
    throw new UserError(
      "unknown_chain",
      `${quoteInput(match[2], 30)} is not a chain I know: write on ${knownChainList(ctx)}.`,
    );
  }
  return { body: match[1], chain, named: true };
}

function knownChainList(ctx: CriteriaContext): string {
  const ids = ctx.chains ?? Object.keys(KNOWN_CHAINS);
  return ids.length <= 1 ? (ids[0] ?? "") : `${ids.slice(0, -1).join(", ")} or ${ids.at(-1)}`;
}

function checkServed(chain: string, ctx: CriteriaContext): void {
  if (ctx.chains && !ctx.chains.includes(chain))
    throw new UserError(
      "unknown_chain",
      `This bot does not serve ${chainWords(chain)}: write on ${knownChainList(ctx)}, or leave the chain out.`,
    );
}

/** Typed text that must never reach a reply or a lookup: controls and chat markup. */
const MARKUP = /[\u0000-\u001f\u007f-\u009f<>`*|\\[\]{}@]/u;

type SpendField = "volumeGte" | "priceAvgGte" | "collectionsGte" | "lastPurchaseDaysLte";
const SPEND_WORD: Record<SpendField, string> = {
  volumeGte: "volume",
  priceAvgGte: "avgprice",
  collectionsGte: "collections",
  lastPurchaseDaysLte: "lastpurchase",
};

/** A clause read, with the collection left to look up. */
type Read =
  | { kind: "holds"; min: number; collection: string; chain: string; named: boolean }
  | { kind: "behavior"; criterion: BehaviorCriterion }
  | { kind: "spend"; chain: string; field: SpendField; value: string | number };

function readClause(clause: string, ctx: CriteriaContext): Read {
  const [word = "", ...rest] = clause.split(/\s+/);
  const keyword = word.toLowerCase();
  if (keyword === "holds" || keyword === "hold") {
    const { body, chain, named } = splitChain(clause, ctx, false);
    const match = /^\S+\s+(\S+)(?:\s+([\s\S]*))?$/.exec(body);
    const min = countOf(match?.[1], "The number of NFTs", "holds 1 Azuki");
    const collection = (match?.[2] ?? "").trim();
    if (!collection)
      throw new UserError(
        "missing_argument",
        "Say which collection after the number: its name, address or link, e.g. `holds 1 Azuki`.",
      );
    return { kind: "holds", min, collection, chain, named };
  }
  if (keyword === "not" || keyword === "behavior" || keyword === "behaviour") {
    const { body, chain } = splitChain(clause, ctx, true);
    const words = body.split(/\s+/);
    const next = words[1]?.toLowerCase();
    // "not behavior flipper", and as people also say it, "behavior not flipper".
    const notFirst = keyword === "not";
    const notAfter = !notFirst && next === "not";
    const not = notFirst || notAfter;
    if (notFirst && next !== "behavior" && next !== "behaviour")
      throw new UserError(
        "invalid_criteria",
        "After `not`, write `behavior` and the names, e.g. `not behavior flipper`.",
      );
    const list = body.replace(not ? /^\S+\s+\S+\s*/ : /^\S+\s*/, "");
    const example = not ? "not behavior flipper" : "behavior collector,whale";
    return {
      kind: "behavior",
      criterion: { kind: "behavior", chain, behaviors: behaviorsOf(list, example), not },
    };
  }
  const field = (Object.keys(SPEND_WORD) as SpendField[]).find((f) => SPEND_WORD[f] === keyword);
  if (!field) {
    throw new UserError(
      "invalid_criteria",
      `${quoteInput(clause, 40)} is not a criterion I know. ${WHAT_TO_TYPE}`,
    );
  }
  const { body, chain } = splitChain(clause, ctx, true);
  const value = body.slice(word.length).trim();
  if (rest.length === 0 || !value)
    throw new UserError(
      "missing_argument",
      `Give a number after ${keyword}, e.g. \`${exampleOf(field)}\`.`,
    );
  switch (field) {
    case "volumeGte":
      return { kind: "spend", chain, field, value: amountOf(value, "The volume", "volume 10") };
    case "priceAvgGte":
      return {
        kind: "spend",
        chain,
        field,
        value: amountOf(value, "The average price", "avgprice 0.5"),
      };
    case "collectionsGte":
      return {
        kind: "spend",
        chain,
        field,
        value: countOf(value, "The number of collections", "collections 5"),
      };
    case "lastPurchaseDaysLte":
      return { kind: "spend", chain, field, value: daysOf(value) };
  }
}

function exampleOf(field: SpendField): string {
  return {
    volumeGte: "volume 10",
    priceAvgGte: "avgprice 0.5",
    collectionsGte: "collections 5",
    lastPurchaseDaysLte: "lastpurchase 30d",
  }[field];
}

/** A name from the resolver as it may be shown: no controls, not endless. */
function shownName(name: string | undefined): string | undefined {
  const clean = name === undefined ? "" : stripControlCharacters(name).trim();
  return clean ? cutText(clean, 60) : undefined;
}

/**
 * Reads a gate's criteria. Throws UserError, with what to type, on anything it cannot read, a
 * duplicate, more than MAX_CRITERIA, or a collection the resolver does not know.
 */
export async function parseCriteria(text: string, ctx: CriteriaContext): Promise<GateCriterion[]> {
  const trimmed = text.trim();
  if (!trimmed)
    throw new UserError("missing_argument", `Give the gate's criteria. ${WHAT_TO_TYPE}`);
  if (trimmed.length > 1000)
    throw new UserError(
      "input_too_long",
      `That is too long for a gate's criteria. ${WHAT_TO_TYPE}`,
    );
  if (/\u0000/.test(trimmed))
    throw new UserError(
      "invalid_characters",
      `The criteria hold characters I cannot read. ${WHAT_TO_TYPE}`,
    );
  const clauses = clausesOf(trimmed);
  if (clauses.some((c) => c.length === 0))
    throw new UserError(
      "invalid_criteria",
      `One of the criteria is empty (two commas in a row?). ${WHAT_TO_TYPE}`,
    );

  const reads = clauses.map((clause) => readClause(clause, ctx));
  // How many criteria this makes, before any lookup: the spend words of a chain count once.
  const spendChains = new Set(reads.flatMap((r) => (r.kind === "spend" ? [r.chain] : [])));
  const count = reads.filter((r) => r.kind !== "spend").length + spendChains.size;
  if (count > MAX_CRITERIA)
    throw new UserError(
      "too_many_items",
      `A gate takes at most ${MAX_CRITERIA} criteria (volume, avgprice, collections and lastpurchase together count as one): this has ${count}. Make two gates, or drop some.`,
    );

  const criteria: GateCriterion[] = [];
  const spends = new Map<string, SpendCriterion>();
  const behaviorSides = new Set<string>();
  for (const read of reads) {
    if (read.kind === "behavior") {
      const c = read.criterion;
      checkServed(c.chain, ctx);
      const side = `${c.chain}:${c.not}`;
      if (behaviorSides.has(side))
        throw new UserError(
          "duplicate_criterion",
          `Two "${c.not ? "not behavior" : "behavior"}" criteria: put the names in one list, e.g. \`${c.not ? "not behavior flipper,badactor" : "behavior collector,whale"}\`.`,
        );
      behaviorSides.add(side);
      criteria.push(c);
    } else if (read.kind === "spend") {
      checkServed(read.chain, ctx);
      let spend = spends.get(read.chain);
      if (!spend) {
        spend = { kind: "spend", chain: read.chain };
        spends.set(read.chain, spend);
        criteria.push(spend);
      }
      if (spend[read.field] !== undefined)
        throw new UserError(
          "duplicate_criterion",
          `${SPEND_WORD[read.field]} is there twice: give it once, e.g. \`${exampleOf(read.field)}\`.`,
        );
      if (read.field === "volumeGte" || read.field === "priceAvgGte")
        spend[read.field] = String(read.value);
      else spend[read.field] = Number(read.value);
    } else {
      criteria.push(await holdsOf(read, ctx));
    }
  }
  const holds = criteria.filter((c): c is HoldsCriterion => c.kind === "holds");
  for (const [i, c] of holds.entries()) {
    if (holds.slice(0, i).some((o) => o.chain === c.chain && o.contract === c.contract))
      throw new UserError(
        "duplicate_criterion",
        `${c.name ?? c.contract} is there twice: give it once, with the number of NFTs needed (e.g. \`holds 2 ${c.name ?? c.contract}\`).`,
      );
  }
  return criteria;
}

async function holdsOf(
  read: Extract<Read, { kind: "holds" }>,
  ctx: CriteriaContext,
): Promise<HoldsCriterion> {
  const checked = checkCollectionArg(read.collection);
  if (!checked.ok) throw new UserError(checked.code, checked.message);
  const value = checked.value;
  let chain = read.chain;
  let query: string;
  if (isLinked(value)) {
    if (value.chain && read.named && value.chain !== chain)
      throw new UserError(
        "chain_mismatch",
        `That link is on ${chainWords(value.chain)}, and you wrote on ${chain}: leave "on ${chain}" out, or paste a link of ${chainWords(chain)}.`,
      );
    chain = value.chain ?? chain;
    query = value.linked;
  } else if (typeof value === "string") {
    query = value;
  } else {
    if (MARKUP.test(value.lookup))
      throw new UserError(
        "invalid_characters",
        `${quoteInput(read.collection, 40)} has characters no collection name has: write the name plainly, or paste the contract address (0x…).`,
      );
    query = value.lookup;
  }
  checkServed(chain, ctx);
  const found = await ctx.resolveCollection(query, chain);
  const name = shownName(found.name);
  return {
    kind: "holds",
    chain,
    contract: toChecksumAddress(found.address),
    ...(name ? { name } : {}),
    min: read.min,
  };
}

/**
 * resolveCollection for a command: on the invocation's chain, the bot's collection index (names,
 * symbols, short forms, as every collection option reads them), refreshed once on a miss; on
 * another served chain, addresses only (its index is not the invocation's).
 */
export function collectionResolverFor(
  ctx: Pick<CommandContext, "chain" | "resolver" | "collections" | "onChain">,
): CriteriaContext["resolveCollection"] {
  return async (q, chain) => {
    const isAddress = /^0x[0-9a-f]{40}$/i.test(q);
    // A criterion `on base` from a chat on ethereum: base's own index and resolver (issue 38).
    const there = chain === ctx.chain.id ? ctx : ctx.onChain?.(chain);
    if (!there) {
      if (isAddress) return { address: toChecksumAddress(q) };
      throw new UserError(
        "collection_names_unavailable",
        `To name a collection on ${chainWords(chain)}, paste its contract address (0x…) or a link, or run the command with chain:${chain}.`,
      );
    }
    const resolution = isAddress
      ? { kind: "found" as const, value: q }
      : await there.resolver.collection(q);
    if (resolution.kind !== "found") {
      // The choices as a sentence of their own: "It could be Azuki (0xED5A…C544) or Beanz (…)."
      const labels = resolution.choices.map((c) => c.label);
      const options =
        labels.length > 1 ? `${labels.slice(0, -1).join(", ")} or ${labels.at(-1)}` : labels[0];
      const text = !options
        ? resolution.text
        : resolution.text.includes("Did you mean one of these?")
          ? resolution.text.replace("Did you mean one of these?", `Did you mean ${options}?`)
          : resolution.kind === "choose"
            ? `${resolution.text} It could be ${options}.`
            : resolution.text;
      throw new UserError(
        resolution.kind === "choose" ? "ambiguous_name" : "unknown_collection",
        text,
      );
    }
    const name = there.collections.name(resolution.value);
    return { address: toChecksumAddress(resolution.value), ...(name ? { name } : {}) };
  };
}
