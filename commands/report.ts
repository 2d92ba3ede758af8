import { z } from "zod";
import {
  type Address,
  isAddressLike,
  parseAddress,
  parseEnsName,
  parseTokenId,
  quoteInput,
} from "../src/api/validate.ts";
import { defineAction } from "../src/core/button-actions.ts";
import { type CommandContext, defineCommand, personKey } from "../src/core/command.ts";
import { fullAddress, short, shortTokenId } from "../src/core/format.ts";
import { opt } from "../src/core/options.ts";
import type { Reply } from "../src/core/reply.ts";
import { UserError } from "../src/errors.ts";
import { REPORT_TARGET, reportAsk } from "../src/reports/buttons.ts";
import { attemptReport } from "../src/reports/submit.ts";
import type { ReportKind, SpamReport } from "../src/store/types.ts";
import { isOwnWallet } from "./shared/own-wallets.ts";

const KINDS = [
  { value: "spam", name: "Spam (missed by the classifier)" },
  {
    value: "not_spam",
    name: "Not spam (wrongly flagged)",
    aliases: ["notspam", "not-spam", "ham"],
  },
] as const;

const kindWords = (kind: ReportKind) => (kind === "spam" ? "spam" : "not spam");

/** The prompt's buttons: the report as it will be made, for the wallet shown; who asked. */
const reportConfirm = defineAction({
  command: "report",
  name: "confirm",
  schema: z.object({ ...REPORT_TARGET, wallet: z.string(), by: z.string() }),
});
const reportCancel = defineAction({
  command: "report",
  name: "cancel",
  schema: z.object({ by: z.string() }),
});

function assertAsker(ctx: CommandContext, payload: { by: string }): void {
  if (payload.by !== personKey(ctx.invocation)) {
    throw new UserError(
      "button_not_yours",
      "Only the person who started this report can confirm or cancel it.",
    );
  }
}

/**
 * The wallet whose view is wrong: one the person proved (the one the message was about, when it
 * is theirs), else their latest proved one. A report teaches the classifier for that wallet, so
 * a wallet taken on anyone's word would let two accounts silence a collection for another's.
 */
async function walletFor(ctx: CommandContext, given: string | null | undefined): Promise<Address> {
  const { platform, user } = ctx.invocation;
  // One read serves both cases: list() gives proved wallets first, the most recent first.
  const wallets = await ctx.store.wallets.list(platform, user.id);
  if (given) {
    const address = isAddressLike(given)
      ? parseAddress(given, "wallet address")
      : parseAddress(
          (await ctx.api.wallets.ensByName(parseEnsName(given), { signal: ctx.signal })).entity
            .resolvedAddress,
          "wallet address",
        );
    const own = wallets.find((wallet) => wallet.address.toLowerCase() === address.toLowerCase());
    // Proved, or a cold wallet that delegated all its rights to one of theirs (issue 37).
    if (await isOwnWallet(ctx, address)) return address;
    throw new UserError(
      "no_proved_wallet",
      own
        ? `Reports are made only for a wallet you proved, and ${fullAddress(address)} is not proved: prove it with /verify and try again.`
        : `Reports are made only for a wallet you proved, and ${fullAddress(address)} is not one of yours: prove it with /verify, or report without a wallet to use yours.`,
    );
  }
  const latest = wallets[0];
  if (latest?.provedAt !== undefined) return parseAddress(latest.address, "wallet address");
  throw new UserError(
    "no_proved_wallet",
    latest
      ? `Reports are made only for a proved wallet, and ${fullAddress(latest.address)} was linked on your word: prove it with /verify (you sign on the bot's page; free) and try again.`
      : "Spam is judged per wallet, so a report needs one you proved: prove yours with /verify (you sign on the bot's page; free) and try again.",
  );
}

/**
 * What is reported, in words: the collection by its name where the bot knows it (the button's,
 * else the chain's index), else its short address (issue 38).
 */
function subject(
  ctx: CommandContext,
  contract: string,
  tokenId: string,
  given?: string | undefined,
): string {
  const token = tokenId === "" ? "" : `token ${shortTokenId(tokenId, "text")} of `;
  const name = (given ?? ctx.collections.name(contract) ?? "").trim();
  return name ? `${token}${name} (${short(contract)})` : `${token}collection ${short(contract)}`;
}

interface ReportTarget {
  kind: ReportKind;
  contract: Address;
  tokenId: string;
  wallet: Address;
  feedback: string | null;
  /** The collection's name as the message the button was under showed it. */
  name?: string | undefined;
}

/** A button's target, checked as a command's arguments are (the wallet apart). */
function targetFrom(payload: {
  kind: ReportKind;
  contract: string;
  tokenId: string;
  name?: string | null | undefined;
}): Omit<ReportTarget, "wallet"> {
  return {
    kind: payload.kind,
    contract: parseAddress(payload.contract, "contract address"),
    tokenId: payload.tokenId !== "" ? parseTokenId(payload.tokenId) : "",
    feedback: null,
    ...(payload.name ? { name: payload.name } : {}),
  };
}

/** Records the report (once per person and target), applies the per-person limit, and sends it. */
export async function submitReport(ctx: CommandContext, target: ReportTarget): Promise<Reply> {
  const { reports } = ctx.store;
  const { platform, chat, user } = ctx.invocation;
  const now = ctx.now().getTime();
  const what = subject(ctx, target.contract, target.tokenId, target.name);
  const already = (earlier: SpamReport): Reply => ({
    text: `You already reported ${what} as ${kindWords(target.kind)} for this wallet (status: ${earlier.status}). It counts once.`,
    tone: "info",
    replaceOriginal: true,
  });
  const chain = ctx.chain.id;
  const earlier = await reports.findSame({ platform, userId: user.id, chain, ...target });
  if (earlier) return already(earlier);
  const made = await reports.countSince(platform, user.id, now - 3_600_000);
  if (made >= ctx.settings.reportsPerHour) {
    throw new UserError(
      "rate_limited",
      `You have made ${made} reports in the last hour, the most allowed. Try again later.`,
    );
  }
  const { report, created } = await reports.create(
    {
      chain,
      platform,
      chatId: chat.id,
      userId: user.id,
      userName: user.name,
      wallet: target.wallet,
      contract: target.contract,
      tokenId: target.tokenId,
      kind: target.kind,
      feedback: target.feedback,
    },
    now,
  );
  // A second press that passed the check above while the first was being recorded.
  if (!created) return already(report);
  const outcome = await attemptReport(ctx.api, reports, report, ctx.logger, () =>
    ctx.now().getTime(),
  );
  const note = target.feedback ? ` Note: ${quoteInput(target.feedback, 200)}.` : "";
  const by = `Reported as ${kindWords(target.kind)} by ${user.name}: ${what}, for wallet ${fullAddress(target.wallet)}.${note}`;
  switch (outcome.status) {
    case "sent":
      return { text: by, tone: "success", replaceOriginal: true };
    case "queued":
      return {
        text: `${by}\nThe data service is busy, so the report is queued and will be sent automatically.`,
        tone: "info",
        replaceOriginal: true,
      };
    case "unknown":
      return {
        text: `${by}\nWhether the data service got it is unknown: ${outcome.reason}. It is not sent again automatically, so it cannot count twice; /reports shows it as "outcome unknown".`,
        tone: "warning",
        replaceOriginal: true,
      };
    case "unsupported":
      return {
        text: `The data service does not take not-spam reports at the address this bot knows. Your report of ${what} is kept on record as unsupported.`,
        tone: "warning",
        replaceOriginal: true,
      };
    case "failed":
      return {
        text: `The data service refused the report of ${what}: ${outcome.reason}.`,
        tone: "error",
        replaceOriginal: true,
      };
  }
}

export default defineCommand({
  name: "report",
  description: "Report an NFT as spam or not spam for a wallet",
  help: "Spam is classified per wallet. Give the kind, the NFT (contract and token id, or a link; no token id means the whole collection) and the wallet, which must be one you proved with /verify; without a wallet, your latest proved one is used. A note after the NFT (and the wallet, if given) is sent as feedback: a word that is no wallet (no address, name.eth or link) starts the note. The buttons under /wallet, /nft and alerts do the same with a confirmation.",
  options: {
    kind: opt.choice("spam or not_spam", KINDS, { required: true, placeholder: "spam|not_spam" }),
    item: opt.nft("Collection (name, symbol, address) or an OpenSea/Etherscan item link", {
      required: true,
    }),
    token_id: opt.tokenId("Token id (leave out for the whole collection)"),
    wallet: opt.wallet(
      "The wallet whose view is wrong, one you proved (default: your latest proved)",
    ),
    note: opt.string("Feedback for the data service", {
      placeholder: "note…",
      maxLength: 500,
      rest: true,
    }),
  },
  examples: [
    "/report spam 0xBC4CA0EdA7647A8aB7C2061c2E118A18a936f13D 1",
    "/report not_spam 0xBC4CA0EdA7647A8aB7C2061c2E118A18a936f13D",
  ],
  requiresPerson: true,
  // Reports teach the spam classifier: none on a chain without one (buttons included).
  requiresSpam: true,
  async run(ctx, { kind, item, token_id, wallet, note }) {
    if (item.tokenId !== undefined && token_id !== undefined && item.tokenId !== token_id) {
      throw new UserError(
        "conflicting_arguments",
        `The link names token ${item.tokenId} but you also gave ${token_id}: give one.`,
      );
    }
    const reply = await submitReport(ctx, {
      kind,
      contract: item.contract,
      tokenId: token_id ?? item.tokenId ?? "",
      wallet: await walletFor(ctx, wallet ?? null),
      feedback: note ?? null,
    });
    return { ...reply, replaceOriginal: false };
  },
  actions: {
    /** First press: say exactly what would be reported, for which wallet, and ask. */
    ask: reportAsk.handle({
      async run(ctx, payload) {
        const target = targetFrom(payload);
        const wallet = await walletFor(ctx, payload.wallet ?? null);
        // Only the person who asked may confirm or cancel (on Telegram the prompt is public).
        const asker = personKey(ctx.invocation);
        // The target as it was given, with the wallet found and the token id as checked.
        const confirmed = { ...payload, wallet, tokenId: target.tokenId, by: asker };
        return {
          title: `Report as ${kindWords(target.kind)}?`,
          text: `${subject(ctx, target.contract, target.tokenId, payload.name ?? undefined)}, for wallet ${fullAddress(wallet)}. Reports teach the spam classifier: please report only what you are sure of.`,
          private: true,
          buttons: [
            reportConfirm.button(confirmed, "Confirm report", { style: "danger" }),
            reportCancel.button({ by: asker }, "Cancel", { style: "secondary" }),
          ],
        };
      },
    }),
    confirm: reportConfirm.handle({
      async run(ctx, payload) {
        assertAsker(ctx, payload);
        const target = targetFrom(payload);
        return submitReport(ctx, {
          ...target,
          wallet: parseAddress(payload.wallet, "wallet address"),
        });
      },
    }),
    cancel: reportCancel.handle({
      async run(ctx, payload) {
        assertAsker(ctx, payload);
        return { text: "Cancelled: nothing was reported.", replaceOriginal: true };
      },
    }),
  },
});
