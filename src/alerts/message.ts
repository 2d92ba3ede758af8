import {
  behaviorLabel,
  collectionName,
  contractTypeLabel,
  explorer,
  formatTimestamp,
  fullAddress,
  short,
} from "../core/format.ts";
import type { Reply } from "../core/reply.ts";
import { reportButton } from "../reports/buttons.ts";
import { BAD_ACTOR, NOT_BAD_ACTOR } from "./minters.ts";
import type { NewContract } from "./store/types.ts";

/** The minter's behavior label in words, as alerts show it (short: a digest's column). */
export function minterWords(label: string | undefined, form: "long" | "short" = "long"): string {
  const long = form === "long";
  if (label === undefined) return "unknown";
  if (label === BAD_ACTOR) return long ? "Bad actor (has minted spam collections)" : "Bad actor";
  if (label === NOT_BAD_ACTOR) return long ? "No history of spam mints" : "No spam history";
  if (label === "BEHAVIOR_UNSPECIFIED") return long ? "No label (new to NFTs)" : "No label";
  return behaviorLabel(label);
}

const likelySpam = (contract: NewContract) => contract.minterBehavior === BAD_ACTOR;

/**
 * A digest row's minter in two columns of one kind each: its behavior label ("unknown" when the
 * lookup could only tell it is no bad actor), and a note on what its history means for the mint.
 */
function minterCells(label: string | undefined): [behavior: string, note: string] {
  if (label === BAD_ACTOR) return [minterWords(label, "short"), "⚠ Likely spam"];
  if (label === NOT_BAD_ACTOR) return ["unknown", minterWords(label, "short")];
  return [minterWords(label, "short"), ""];
}

/** When it was minted, in ms; a contract without a mint time sorts last. */
const mintTime = (contract: NewContract) => {
  const ms = Date.parse(contract.mintedAt ?? "");
  return Number.isNaN(ms) ? Number.NEGATIVE_INFINITY : ms;
};

/** Newest first (a stable sort: those minted at once keep their order). */
const newestFirst = (contracts: readonly NewContract[]) =>
  [...contracts].sort((a, b) => {
    const [x, y] = [mintTime(a), mintTime(b)];
    return x === y ? 0 : y > x ? 1 : -1;
  });

const SPAM_LINE =
  "Likely spam: its minter has a history of minting spam collections (shown because this channel chose badactors:show).";

const gapLine = (note: string | null) => (note ? `Note: ${note}.` : undefined);

/**
 * The chain an alert is about: its explorer (the links), its name (shown when the bot serves
 * several chains, undefined otherwise) and whether the data service detects spam there (the
 * report button; default yes). A bare string is an explorer URL of the one chain.
 */
export interface AlertChain {
  /** The chain's id, carried by the report button so the report goes to that chain's service. */
  id?: string | undefined;
  explorer: string;
  name?: string | undefined;
  spam?: boolean | undefined;
}

const asChain = (chain: string | AlertChain): AlertChain =>
  typeof chain === "string" ? { explorer: chain } : chain;

/** " on Base" when the chain is to be named. */
const onChain = (chain: AlertChain) => (chain.name ? ` on ${chain.name}` : "");

/** One new collection: name, chain, address, types, minter, mint time and transaction. */
export function alertReply(
  contract: NewContract,
  note: string | null,
  where: string | AlertChain,
  now: Date,
): Reply {
  const chain = asChain(where);
  const explorerUrl = chain.explorer;
  const links = [{ label: "Contract", url: explorer.address(explorerUrl, contract.address) }];
  if (contract.txHash)
    links.push({ label: "Mint transaction", url: explorer.tx(explorerUrl, contract.txHash) });
  const spam = likelySpam(contract);
  return {
    title: `${spam ? "Likely spam: new" : "New"} collection${onChain(chain)}: ${collectionName(contract.name)}`,
    url: explorer.address(explorerUrl, contract.address),
    text: [gapLine(note), spam ? SPAM_LINE : undefined].filter(Boolean).join("\n") || undefined,
    fields: [
      ...(chain.name ? [{ name: "Chain", value: chain.name, inline: true }] : []),
      { name: "Address", value: fullAddress(contract.address) },
      {
        name: "Type",
        value: contract.types.map(contractTypeLabel).join(", ") || "unknown",
        inline: true,
      },
      {
        name: "Minter",
        value: contract.minter ? fullAddress(contract.minter) : "unknown",
        inline: true,
      },
      { name: "Minter behavior", value: minterWords(contract.minterBehavior), inline: true },
      { name: "Minted", value: formatTimestamp(contract.mintedAt, now) },
    ],
    links,
    footer: "New-collection alert · /unsubscribe to stop",
    // The wallet is the reporter's linked one (/link): an alert is about no wallet in particular.
    // Where the service detects no spam, there is nothing to report to.
    buttons:
      chain.spam === false
        ? []
        : [
            reportButton("spam", {
              contract: contract.address,
              chain: chain.id,
              ...(contract.name ? { name: contract.name } : {}),
            }),
          ],
  };
}

/** Many new collections at once: one message listing them, not one message each. */
export function digestReply(
  contracts: NewContract[],
  note: string | null,
  where: string | AlertChain,
  /** Why a digest: many at once (default), or the channel's rules held them. */
  why: "burst" | "rules" = "burst",
): Reply {
  const chain = asChain(where);
  const explorerUrl = chain.explorer;
  const shown = newestFirst(contracts).slice(0, 25);
  const more = contracts.length - shown.length;
  return {
    title: `${contracts.length} new collections${onChain(chain)}`,
    url: shown[0] ? explorer.address(explorerUrl, shown[0].address) : undefined,
    text:
      [
        gapLine(note),
        more > 0
          ? `The newest ${shown.length} are listed; ${more} more were minted too.`
          : undefined,
      ]
        .filter(Boolean)
        .join("\n") || undefined,
    table: {
      columns: ["Collection", "Address", "Type", "Minter", "Note", "Minted"],
      rows: shown.map((contract) => [
        collectionName(contract.name),
        short(contract.address),
        contract.types.map(contractTypeLabel).join(", "),
        ...minterCells(contract.minterBehavior),
        contract.mintedAt ? contract.mintedAt.slice(11, 16) : "",
      ]),
    },
    footer:
      why === "rules"
        ? "New-collection alerts, newest first, as a digest by this channel's rules (/alerts show) · /unsubscribe to stop"
        : "New-collection alerts, newest first, as a digest because many arrived at once · /unsubscribe to stop",
  };
}

/**
 * The one line a channel gets when alerts are not posted there because its members reported
 * the contracts as spam (once per channel and contract).
 */
export function suppressedReply(
  suppressed: readonly { contract: NewContract; reporters: number }[],
): Reply {
  const names = suppressed.map(
    ({ contract }) => `${collectionName(contract.name)} (${short(contract.address)})`,
  );
  const first = suppressed[0];
  if (suppressed.length === 1 && first)
    return {
      text: `Not posted here: ${names[0]}, which ${first.reporters} members of this channel reported as spam.`,
    };
  const listed =
    names.length > 3
      ? `${names.slice(0, 3).join(", ")} and ${names.length - 3} more`
      : names.join(", ");
  return {
    text: `Not posted here: ${listed}, which members of this channel reported as spam.`,
  };
}
