import type { ButtonSpec } from "../core/reply.ts";
import type { ReportKind } from "../store/types.ts";

/** A button that starts a report: it only asks for confirmation, it never reports by itself. */
export function reportButton(
  kind: ReportKind,
  target: {
    contract: string;
    tokenId?: string | undefined;
    wallet?: string | undefined;
    /** The chain the report is for, where the reply is not a command's (an alert's). */
    chain?: string | undefined;
  },
  label = kind === "spam" ? "Report spam" : "Not spam",
): ButtonSpec {
  return {
    label,
    style: kind === "spam" ? "danger" : "success",
    action: {
      command: "report",
      action: "ask",
      payload: {
        kind,
        contract: target.contract,
        tokenId: target.tokenId ?? "",
        wallet: target.wallet ?? null,
        ...(target.chain !== undefined ? { chain: target.chain } : {}),
      },
    },
  };
}
