import { defineCommand } from "../src/core/command.ts";
import { communityOf, insightsOf } from "../src/insights/community.ts";

export default defineCommand({
  name: "dashboard",
  description: "A private link to your community's insights page (managers)",
  help: "For the people who manage a Discord server or Telegram group: a link, for you alone, to the bot's page of this community's insights, member table (sortable, searchable, CSV), gates with their logs, and this chat's subscriptions, digests and watches. The link works once, within 10 minutes, and opens a session of one hour in that browser. The page only shows; changes are made with commands.",
  options: {},
  examples: ["/dashboard"],
  requiresPerson: true,
  async run(ctx) {
    // Refused (with why) where the bot has no insights or the person manages nothing here.
    const community = await communityOf(ctx, "dashboard");
    const link = await insightsOf(ctx).links.create(
      community,
      ctx.invocation.user.id,
      ctx.chain.id,
    );
    const minutes = Math.max(1, Math.round((link.expiresAt - ctx.now().getTime()) / 60_000));
    return {
      title: `Insights page of ${community.title ?? "this community"}`,
      text: `Open the link below: it works once, for you alone, for ${minutes} minutes, and keeps you signed in on that browser for an hour. It shows members' wallets: do not share it.`,
      links: [{ label: link.url, url: link.url }],
      confidential: { what: "your insights page link" },
    };
  },
});
