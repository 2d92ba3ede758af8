import { z } from "zod";
import { defineAction, payloadField } from "../core/button-actions.ts";
import type { ButtonSpec } from "../core/reply.ts";
import type { ReportKind } from "../store/types.ts";
import { sliceChars } from "../strings.ts";

/** What a report button names: the kind, the collection, the token ("" for all) and the wallet. */
export const REPORT_TARGET = {
  kind: z.enum(["spam", "not_spam"]),
  contract: z.string(),
  tokenId: z.string(),
  /** The collection's name as the message showed it (issue 38: names over addresses). */
  name: payloadField.optional(z.string().max(200)),
};

/**
 * /report's first press (its handler is in commands/report.ts): the wallet is the one the message
 * was about, absent when it was about none.
 */
export const reportAsk = defineAction({
  command: "report",
  name: "ask",
  schema: z.object({ ...REPORT_TARGET, wallet: payloadField.optional(z.string()) }),
});

/** A button that starts a report: it only asks for confirmation, it never reports by itself. */
export function reportButton(
  kind: ReportKind,
  target: {
    contract: string;
    tokenId?: string | undefined;
    wallet?: string | undefined;
    /** The collection's name, when the message shows one. */
    name?: string | undefined;
    /** The chain the report is for, where the reply is not a command's (an alert's). */
    chain?: string | undefined;
  },
  label = kind === "spam" ? "Report spam" : "Not spam",
): ButtonSpec {
  return reportAsk.button(
    {
      kind,
      contract: target.contract,
      tokenId: target.tokenId ?? "",
      wallet: target.wallet,
      name: target.name?.trim() ? sliceChars(target.name.trim(), 200) : undefined,
    },
    label,
    { style: kind === "spam" ? "danger" : "success", chain: target.chain },
  );
}
