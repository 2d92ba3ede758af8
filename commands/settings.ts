import { chainList } from "../src/chains.ts";
import { chainNamed } from "../src/core/chain-option.ts";
import { chatKey, defineCommand } from "../src/core/command.ts";
import { opt } from "../src/core/options.ts";
import type { Reply } from "../src/core/reply.ts";

const SETTINGS = [{ value: "chain", name: "Default chain" }] as const;

/**
 * The chat's settings: today its default chain, what commands read when they name none. For
 * people who manage the chat (Discord hides the command from the others).
 */
export default defineCommand({
  name: "settings",
  description: "This chat's settings: /settings chain <id> sets the default chain",
  help: "For people who manage the chat. Without arguments, shows this chat's settings. /settings chain <id> makes that chain the default of every command here that names none; /settings chain default goes back to the bot's first chain.",
  options: {
    setting: opt.choice("The setting to change", SETTINGS, { placeholder: "chain" }),
    value: opt.string("Its new value (a chain id, or default)", {
      placeholder: "value",
      maxLength: 40,
    }),
  },
  examples: ["/settings", "/settings chain ethereum"],
  chainless: true,
  requiresManageChannel: true,
  async run(ctx, { setting, value }) {
    const { platform, chat } = ctx.invocation;
    const first = ctx.chains[0] ?? ctx.chain;
    if (setting === undefined) {
      if (value !== undefined) return usageReply();
      const stored = (await ctx.store.chatSettings.get(platform, chat.id)).chain;
      const current = ctx.chains.find((chain) => chain.id === stored);
      return {
        title: "Settings of this chat",
        fields: [
          {
            name: "Default chain",
            value: current
              ? `${current.name} (${current.id})`
              : `${first.name} (${first.id}), the bot's first`,
          },
          { name: "Chains served", value: chainList(ctx.chains) },
        ],
        footer: "/settings chain <id> changes the default",
      };
    }
    if (value === undefined) return usageReply();
    const reset = value.trim().toLowerCase() === "default";
    // An unknown chain: the message lists those served, and nothing is stored.
    const chain = reset ? undefined : chainNamed(ctx.chains, value);
    await ctx.store.chatSettings.setChain(platform, chat.id, chain?.id, ctx.now().getTime());
    ctx.logger.info({ chat: chatKey(ctx.invocation), chain: chain?.id ?? null }, "chat chain set");
    const shown = chain ?? first;
    return {
      text: `Commands here now read ${shown.name} (${shown.id}) unless they name another chain.`,
      tone: "success",
    };
  },
});

function usageReply(): Reply {
  return {
    text: "Use /settings to see this chat's settings, or /settings chain <id> to change its default chain.",
    tone: "warning",
    private: true,
  };
}
