import type { Chain } from "../chains.ts";
import { type Refused, refuse } from "./refusal.ts";

/** How a person is told about each field of the bot's message that was changed. */
const FIELD_WORDS: Record<string, string> = {
  version: "Version",
  statement: "statement",
  issuedAt: "Issued At time",
  expirationTime: "Expiration Time",
  notBefore: "Not Before time",
  requestId: "Request ID",
  resources: "Resources",
};

const SIGN_AS_SHOWN =
  "Press Connect wallet again and sign the message as your wallet shows it, unchanged.";

/**
 * Why a message that is not the one issued is refused, in the words of its first changed field:
 * another site (scheme, domain, URI), another chain, an older challenge's nonce, another address,
 * a changed or removed field; the same fields around other spacing or line breaks.
 */
export function changed(
  tools: typeof import("./proof.ts"),
  message: string,
  issued: string,
  domain: string,
  chain: Chain & { chainId: number },
): Refused {
  const spacing = (text: string) => text.replace(/\s+/g, " ").trim();
  if (spacing(message) === spacing(issued))
    return refuse(
      "bad_message",
      `This is not the message the bot asked to sign: its spacing or line breaks were changed. ${SIGN_AS_SHOWN}`,
    );
  const given = tools.readSiweMessage(message);
  if (!given.address || !given.nonce || given.chainId === undefined)
    return refuse("bad_message", "This is not the message the bot asked to sign.");
  const difference = tools.changedField(tools.readSiweMessage(issued), given);
  if (!difference) return refuse("bad_message", "This is not the message the bot asked to sign.");
  switch (difference.field) {
    case "scheme":
    case "domain":
    case "uri":
      return refuse(
        "wrong_domain",
        `This message is for another site: only messages for ${domain} are accepted here.`,
      );
    case "chainId":
      return refuse(
        "wrong_chain",
        `This message is for chain ${given.chainId}, not ${chain.name} (${chain.chainId}).`,
      );
    case "nonce":
      return refuse(
        "stale_nonce",
        "This message was already used or replaced by a newer one. Press Connect wallet again.",
      );
    case "address":
      return refuse("bad_message", "This is not the message the bot asked to sign.");
    default: {
      const words = FIELD_WORDS[difference.field] ?? difference.field;
      return refuse(
        "bad_message",
        `This is not the message the bot asked to sign: its ${words} was ${difference.removed ? "removed" : "changed"}. ${SIGN_AS_SHOWN}`,
      );
    }
  }
}
