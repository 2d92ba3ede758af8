import {
  collectionName,
  contractTypeLabel,
  explorer,
  formatTimestamp,
  fullAddress,
  short,
} from "../core/format.ts";
import type { Reply } from "../core/reply.ts";
import { reportButton } from "../reports/buttons.ts";
import type { NewContract } from "../store/types.ts";

const gapLine = (note: string | null) => (note ? `Note: ${note}.` : undefined);

/** One new collection: name, address, types, minter, mint time and transaction. */
export function alertReply(
  contract: NewContract,
  note: string | null,
  explorerUrl: string,
  now: Date,
): Reply {
  const links = [{ label: "Contract", url: explorer.address(explorerUrl, contract.address) }];
  if (contract.txHash)
    links.push({ label: "Mint transaction", url: explorer.tx(explorerUrl, contract.txHash) });
  return {
    title: `New collection: ${collectionName(contract.name)}`,
    url: explorer.address(explorerUrl, contract.address),
    text: gapLine(note),
    fields: [
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
      { name: "Minted", value: formatTimestamp(contract.mintedAt, now) },
    ],
    links,
    footer: "New-collection alert · /unsubscribe to stop",
    // The wallet is the reporter's linked one (/link): an alert is about no wallet in particular.
    buttons: [reportButton("spam", { contract: contract.address })],
  };
}

/** Many new collections at once: one message listing them, not one message each. */
export function digestReply(
  contracts: NewContract[],
  note: string | null,
  explorerUrl: string,
): Reply {
  const shown = contracts.slice(0, 25);
  const more = contracts.length - shown.length;
  return {
    title: `${contracts.length} new collections`,
    url: shown[0] ? explorer.address(explorerUrl, shown[0].address) : undefined,
    text:
      [
        gapLine(note),
        more > 0
          ? `The first ${shown.length} are listed; ${more} more were minted too.`
          : undefined,
      ]
        .filter(Boolean)
        .join("\n") || undefined,
    table: {
      columns: ["Collection", "Address", "Type", "Minted"],
      rows: shown.map((contract) => [
        collectionName(contract.name),
        short(contract.address),
        contract.types.map(contractTypeLabel).join(", "),
        contract.mintedAt ? contract.mintedAt.slice(11, 16) : "",
      ]),
    },
    footer:
      "New-collection alerts, as a digest because many arrived at once · /unsubscribe to stop",
  };
}
