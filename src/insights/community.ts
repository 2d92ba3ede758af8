import type { CommandContext } from "../core/command.ts";
import { UserError } from "../errors.ts";
import type { InsightsService } from "./service.ts";
import type { Community } from "./types.ts";

export function insightsOf(ctx: CommandContext): InsightsService {
  if (!ctx.insights)
    throw new UserError("feature_unavailable", "Insights are not available on this bot.");
  return ctx.insights;
}

/**
 * The community an invocation speaks for: a Discord server, a Telegram group, or the console's
 * simulated community; refused elsewhere. Only its managers get anything.
 */
export async function communityOf(ctx: CommandContext, what: string): Promise<Community> {
  const insights = insightsOf(ctx);
  const { platform, chat, guild } = ctx.invocation;
  let community: Community | undefined;
  if (platform === "discord" && guild)
    // The interaction names the channel, not the server: the server goes untitled.
    community = { platform, id: guild.id, channelId: chat.id };
  else if (platform === "telegram" && chat.kind === "group")
    community = { platform, id: chat.id, channelId: chat.id, title: chat.title };
  else if (insights.isSimulated({ platform, id: "console" }))
    community = { platform, id: "console", channelId: chat.id, title: "the simulated community" };
  if (!community)
    throw new UserError(
      "wrong_chat_kind",
      `Insights are a community's: use /${what} in a Discord server's channel or a Telegram group, as one of its managers.`,
    );
  const manages = ctx.invocation.canManageCommunity ?? (() => ctx.invocation.canManageChannel());
  if (!(await manages()))
    throw new UserError(
      "not_manager",
      `Only people who can manage this ${platform === "telegram" ? "group" : "server"} see its insights.`,
    );
  return community;
}
