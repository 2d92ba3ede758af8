import { defineCommand } from "../src/core/command.ts";
import { fullAddress, short } from "../src/core/format.ts";
import type { Reply } from "../src/core/reply.ts";
import { UserError } from "../src/errors.ts";
import type { SpamReport } from "../src/store/reports.ts";

const SHOWN = 15;

/** RFC 4180: quote every field, double the quotes inside; a leading =+-@ cannot become a formula. */
function csvField(value: string): string {
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return `"${safe.replace(/"/g, '""')}"`;
}

export function reportsCsv(reports: readonly SpamReport[]): string {
  const header = [
    "id",
    "createdAt",
    "platform",
    "chatId",
    "userId",
    "userName",
    "kind",
    "wallet",
    "contract",
    "tokenId",
    "feedback",
    "status",
    "attempts",
    "upstream",
  ];
  const rows = reports.map((r) =>
    [
      String(r.id),
      new Date(r.createdAt).toISOString(),
      r.platform,
      r.chatId,
      r.userId,
      r.userName,
      r.kind,
      fullAddress(r.wallet),
      fullAddress(r.contract),
      r.tokenId,
      r.feedback ?? "",
      r.status,
      String(r.attempts),
      r.upstream ?? "",
    ]
      .map(csvField)
      .join(","),
  );
  return `${[header.join(","), ...rows].join("\r\n")}\r\n`;
}

export function reportsReply(reports: readonly SpamReport[]): Reply {
  if (reports.length === 0) return { text: "No spam reports have been made in this chat." };
  return {
    title: `Spam reports in this chat (${reports.length})`,
    table: {
      columns: ["When", "Who", "Kind", "Collection", "Token", "Status"],
      rows: reports
        .slice(0, SHOWN)
        .map((r) => [
          new Date(r.createdAt).toISOString().slice(0, 16).replace("T", " "),
          r.userName,
          r.kind === "spam" ? "spam" : "not spam",
          short(r.contract),
          r.tokenId === "" ? "all" : r.tokenId,
          r.status,
        ]),
    },
    footer:
      reports.length > SHOWN
        ? `The newest ${SHOWN} are shown; the CSV has all ${reports.length}.`
        : "Newest first",
    buttons: [
      {
        label: "Export CSV",
        style: "secondary",
        action: { command: "reports", action: "export", payload: {} },
      },
    ],
  };
}

export default defineCommand({
  name: "reports",
  description: "The spam reports made in this chat (for people who manage it), exportable as CSV",
  options: {},
  examples: ["/reports"],
  requiresManageChannel: true,
  requiresPerson: true,
  async run(ctx) {
    if (!ctx.store) throw new UserError("Spam reports are not available on this bot.");
    return {
      ...reportsReply(ctx.store.reports.forChat(ctx.invocation.platform, ctx.invocation.chat.id)),
      private: true,
    };
  },
  actions: {
    export: {
      async run(ctx) {
        if (!ctx.store) throw new UserError("Spam reports are not available on this bot.");
        const reports = ctx.store.reports.forChat(ctx.invocation.platform, ctx.invocation.chat.id);
        return {
          text: `${reports.length} reports.`,
          private: true,
          files: [
            {
              name: "spam-reports.csv",
              contentType: "text/csv",
              data: new TextEncoder().encode(reportsCsv(reports)),
            },
          ],
        };
      },
    },
  },
});
