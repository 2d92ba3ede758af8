import type { Contract } from "../src/api/schemas.ts";
import { NFT_CONTRACT_TYPES } from "../src/api/schemas.ts";
import { defineCommand } from "../src/core/command.ts";
import {
  collectionName,
  contractTypeLabel,
  formatCount,
  relativeTime,
  short,
} from "../src/core/format.ts";
import { countNewContracts, type NewContracts } from "../src/core/new-contracts.ts";
import { opt } from "../src/core/options.ts";
import type { Reply } from "../src/core/reply.ts";
import { bounded } from "../src/within.ts";

const CONTRACT_TYPE_CHOICES = [
  { value: "all", name: "All NFT types", types: NFT_CONTRACT_TYPES, aliases: ["any", "nft"] },
  { value: "erc721", name: "ERC-721", types: ["TYPE_ERC721"], aliases: ["721", "erc-721"] },
  { value: "erc1155", name: "ERC-1155", types: ["TYPE_ERC1155"], aliases: ["1155", "erc-1155"] },
] as const;

type ContractTypeChoice = (typeof CONTRACT_TYPE_CHOICES)[number]["value"];

function minted(contract: Contract, now: Date): string {
  const iso = contract.mintEvent?.blockTimestamp;
  const date = iso ? new Date(iso) : undefined;
  return date && !Number.isNaN(date.getTime()) ? relativeTime(date, now) : "n/a";
}

/** Pages of 500 read at most when counting the last hour's contracts, and how long the reply waits. */
const COUNT_PAGES = 4;
const COUNT_WAIT_MS = 3_000;
const HOUR_MS = 3_600_000;
/** A mint dated this far past our clock still counts (clocks differ); later ones are bad data. */
const SKEW_MS = 5 * 60_000;

/** What the footer says was measured: the last hour's new contracts on the chain. */
function footerOf(kind: string, chain: string, hour: NewContracts | undefined): string {
  if (!hour) return "Newest first";
  const { count, capped } = hour;
  const number = count === 0 ? "no" : `${capped ? "more than " : ""}${formatCount(String(count))}`;
  const plural = capped || count !== 1 ? "s" : "";
  return `Newest first · ${number} new ${kind} contract${plural} in the last hour on ${chain}`;
}

function contractsReply(
  type: ContractTypeChoice,
  contracts: Contract[],
  now: Date,
  footer: string,
): Reply {
  const label = CONTRACT_TYPE_CHOICES.find((choice) => choice.value === type)?.name ?? type;
  const title = type === "all" ? "Newest NFT contracts" : `Newest ${label} contracts`;
  if (contracts.length === 0) {
    return { title, text: "The data service lists no contracts of this type yet.", footer };
  }
  return {
    title,
    table: {
      columns: ["Name", "Address", "Types", "Minted"],
      rows: contracts.map((contract) => [
        collectionName(contract.name),
        short(contract.address),
        contract.types.map(contractTypeLabel).join(", ") || "n/a",
        minted(contract, now),
      ]),
    },
    footer,
  };
}

export default defineCommand({
  name: "contracts",
  description: "The newest NFT contracts (new collections)",
  help: "Lists the most recently minted NFT contracts, newest first. Choose erc721 (TYPE_ERC721 only), erc1155, or all (ERC-721, ERC-1155, legacy ERC-721 and CryptoPunks).",
  options: {
    type: opt.choice("Which contract type", CONTRACT_TYPE_CHOICES, {
      fallback: "all",
      placeholder: "erc721|erc1155|all",
    }),
    limit: opt.integer("How many (1-25)", { min: 1, max: 25, fallback: 10, placeholder: "limit" }),
  },
  examples: ["/contracts", "/contracts erc721 5", "/contracts erc1155 limit:20"],
  async run(ctx, { type, limit }) {
    const contractTypes = CONTRACT_TYPE_CHOICES.find((choice) => choice.value === type)!.types;
    const now = ctx.now();
    const { contracts } = await ctx.api.foundational.contracts(
      { sortDirection: "SORT_DIRECTION_DESC", contractTypes, limit },
      { signal: ctx.signal },
    );
    ctx.collections.remember(
      contracts.map((contract) => ({
        address: contract.address,
        name: contract.name,
        symbol: contract.symbol,
      })),
      "contracts",
    );
    // After the list (one failure is the list's), bounded: what the footer says was measured.
    // A count that is slow leaves the footer without it, never the list waiting for it.
    const hour = await bounded(
      countNewContracts(
        ctx.api,
        { since: now.getTime() - HOUR_MS, until: now.getTime() + SKEW_MS },
        { contractTypes, pages: COUNT_PAGES, call: { signal: ctx.signal } },
      ),
      COUNT_WAIT_MS,
      "the new contracts' count",
    ).catch(() => undefined);
    const kind = type === "all" ? "NFT" : type === "erc721" ? "ERC-721" : "ERC-1155";
    return contractsReply(type, contracts, now, footerOf(kind, ctx.chain.name, hour));
  },
});
