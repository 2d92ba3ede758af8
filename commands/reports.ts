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

const CONFIDENTIAL = { what: "the spam reports" };

/** The list and its export button; `chat` is the chat the reports were made in. */
export function reportsReply(
  reports: readonly SpamReport[],
  chat: { id: string; title?: string },
): Reply {
  const where = chat.title === undefined ? "this chat" : `“${chat.title}”`;
  if (reports.length === 0)
    return { text: `No spam reports have been made in ${where}.`, confidential: CONFIDENTIAL };
  return {
    title: `Spam reports in ${where} (${reports.length})`,
    confidential: CONFIDENTIAL,
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
        action: { command: "reports", action: "export", payload: { chat: chat.id } },
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
    const { platform, chat } = ctx.invocation;
    return reportsReply(ctx.store.reports.forChat(platform, chat.id), chat);
  },
  actions: {
    export: {
      async run(ctx, payload) {
        if (!ctx.store) throw new UserError("Spam reports are not available on this bot.");
        const { platform, chat } = ctx.invocation;
        // Under a list sent privately, the button names the group: its rights are checked anew,
        // since the person may have stopped managing it since.
        const chatId = typeof payload.chat === "string" ? payload.chat : chat.id;
        if (chatId !== chat.id && !(await ctx.invocation.canManageChannel(chatId))) {
          throw new UserError("Only people who can manage that chat may export its reports.");
        }
        const reports = ctx.store.reports.forChat(platform, chatId);
        return {
          text: `${reports.length} reports.`,
          confidential: CONFIDENTIAL,
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
