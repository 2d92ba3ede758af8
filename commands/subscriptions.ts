import { defineCommand } from "../src/core/command.ts";
import { formatTimestamp } from "../src/core/format.ts";
import { TYPE_CHOICES } from "./shared/subscriptions.ts";

export default defineCommand({
  name: "subscriptions",
  description: "This channel's alert subscription, and any pause with its reason",
  options: {},
  examples: ["/subscriptions"],
  async run(ctx) {
    const { platform, chat } = ctx.invocation;
    const subscription = await ctx.store.subscriptions.find(platform, chat.id);
    if (!subscription)
      return { text: "This channel has no alert subscription. /subscribe starts one." };
    const now = ctx.now();
    const what =
      TYPE_CHOICES.find((choice) => choice.value === subscription.types)?.name ??
      subscription.types;
    return {
      title: "New-collection alerts",
      fields: [
        { name: "Collections", value: what, inline: true },
        {
          name: "Since",
          value: formatTimestamp(new Date(subscription.createdAt).toISOString(), now),
          inline: true,
        },
        {
          name: "Status",
          value:
            subscription.pausedAt === null
              ? "active"
              : `paused ${formatTimestamp(new Date(subscription.pausedAt).toISOString(), now)}: ${subscription.pauseReason ?? "unknown reason"}. /subscribe again to resume.`,
        },
      ],
    };
  },
});
