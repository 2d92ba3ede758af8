import { z } from "zod";
import { defineAction } from "../src/core/button-actions.ts";
import { defineCommand } from "../src/core/command.ts";
import { type CsvColumn, toCsv } from "../src/core/csv.ts";
import { fullAddress, short } from "../src/core/format.ts";
import type { Reply } from "../src/core/reply.ts";
import { UserError } from "../src/errors.ts";
import type { SpamReport } from "../src/store/types.ts";

const SHOWN = 15;

const CSV_COLUMNS: readonly CsvColumn<SpamReport>[] = [
  { header: "id", value: (r) => String(r.id), numeric: true },
  { header: "createdAt", value: (r) => new Date(r.createdAt).toISOString() },
  { header: "platform", value: (r) => r.platform },
  { header: "chatId", value: (r) => r.chatId, numeric: true },
  { header: "userId", value: (r) => r.userId, numeric: true },
  { header: "userName", value: (r) => r.userName },
  { header: "kind", value: (r) => r.kind },
  { header: "wallet", value: (r) => fullAddress(r.wallet) },
  { header: "contract", value: (r) => fullAddress(r.contract) },
  { header: "tokenId", value: (r) => r.tokenId, numeric: true },
  { header: "feedback", value: (r) => r.feedback ?? "" },
  { header: "status", value: (r) => r.status },
  { header: "attempts", value: (r) => String(r.attempts), numeric: true },
  { header: "serviceAnswer", value: serviceAnswer },
  { header: "chain", value: (r) => r.chain },
];

/**
 * What the data service answered, in words: "accepted" for a report it took (its answer is an
 * empty object), else what it said or why there was no answer ("timeout: …", "the bot stopped
 * during the call"); empty while the call is under way.
 */
function serviceAnswer(report: SpamReport): string {
  const said = report.upstream ?? "";
  if (report.status !== "sent") return said;
  return said === "" || said === "{}" || said === "null" ? "accepted" : `accepted: ${said}`;
}

/** "No spam reports", "1 spam report", "3 spam reports". */
const spamReports = (n: number) =>
  n === 0 ? "No spam reports" : `${n} spam report${n === 1 ? "" : "s"}`;

export function reportsCsv(reports: readonly SpamReport[]): string {
  return toCsv(CSV_COLUMNS, reports);
}

const UNKNOWN_NOTE =
  "outcome unknown: the bot stopped or timed out during the call; not re-sent to avoid a double report.";

const CONFIDENTIAL = { what: "the spam reports" };

/**
 * The list as CSV. Under a list sent privately (a confidential reply), `chat` names the group
 * whose list it is; a button stored without it exports the chat it is pressed in.
 */
const reportsExport = defineAction({
  command: "reports",
  name: "export",
  schema: z.object({ chat: z.string().optional() }),
});

/** The list and its export button; `chat` is the chat the reports were made in. */
function reportsReply(
  reports: readonly SpamReport[],
  chat: { id: string; title?: string },
  /** The collection's name where the chain's index knows it (issue 38: names over addresses). */
  nameOf: (contract: string) => string | undefined,
): Reply {
  const where = chat.title === undefined ? "this chat" : `“${chat.title}”`;
  if (reports.length === 0)
    return { text: `No spam reports have been made in ${where}.`, confidential: CONFIDENTIAL };
  const shown = reports.slice(0, SHOWN);
  return {
    title: `Spam reports in ${where} (${reports.length})`,
    confidential: CONFIDENTIAL,
    table: {
      columns: ["When", "Who", "Kind", "Collection", "Token", "Status"],
      rows: shown.map((r) => [
        new Date(r.createdAt).toISOString().slice(0, 16).replace("T", " "),
        r.userName,
        r.kind === "spam" ? "spam" : "not spam",
        nameOf(r.contract) ?? short(r.contract),
        r.tokenId === "" ? "all" : r.tokenId,
        r.status === "unknown" ? "outcome unknown" : r.status,
      ]),
    },
    ...(shown.some((r) => r.status === "unknown") ? { text: UNKNOWN_NOTE } : {}),
    footer:
      reports.length > SHOWN
        ? `The newest ${SHOWN} are shown; the CSV has all ${reports.length}.`
        : "Newest first",
    buttons: [reportsExport.button({ chat: chat.id }, "Export CSV", { style: "secondary" })],
  };
}

export default defineCommand({
  name: "reports",
  description: "The spam reports made in this chat (for people who manage it), exportable as CSV",
  options: {},
  chainless: true,
  examples: ["/reports"],
  requiresManageChannel: true,
  requiresPerson: true,
  async run(ctx) {
    const { platform, chat } = ctx.invocation;
    return reportsReply(await ctx.store.reports.forChat(platform, chat.id), chat, (contract) =>
      ctx.collections.name(contract),
    );
  },
  actions: {
    export: reportsExport.handle({
      async run(ctx, payload) {
        const { platform, chat } = ctx.invocation;
        // Under a list sent privately, the button names the group: its rights are checked anew,
        // since the person may have stopped managing it since.
        const chatId = payload.chat ?? chat.id;
        if (chatId !== chat.id && !(await ctx.invocation.canManageChannel(chatId))) {
          throw new UserError(
            "not_manager",
            "Only people who can manage that chat may export its reports.",
          );
        }
        const reports = await ctx.store.reports.forChat(platform, chatId);
        return {
          text: `${spamReports(reports.length)}.`,
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
    }),
  },
});
