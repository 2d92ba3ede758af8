import { PermissionFlagsBits } from "discord-api-types/v10";

/**
 * The channel permissions the bot needs, each with what it is for: the one list the invite link
 * (`npm run register`, docs/discord.md) and its test are computed from. Alerts, digests and
 * watches are posted into the channel on the bot's own account, so they need every one of them;
 * gates (/gate) give and take a role, which needs Manage Roles (and the bot's role above it).
 * Nothing reads messages or members: no Read Message History, no privileged intent.
 */
export const BOT_PERMISSIONS = [
  ["ViewChannel", "View Channel", "reach a channel it posts alerts, digests and watches to"],
  ["SendMessages", "Send Messages", "post those alerts, digests and watches"],
  [
    "SendMessagesInThreads",
    "Send Messages in Threads",
    "post them in a thread someone subscribed from",
  ],
  ["EmbedLinks", "Embed Links", "every message of the bot is an embed"],
  ["AttachFiles", "Attach Files", "charts (PNG) and CSV exports"],
  ["ManageRoles", "Manage Roles", "give a gate's role to the people who pass it, and take it back"],
] as const satisfies readonly (readonly [keyof typeof PermissionFlagsBits, string, string])[];

/** The permission integer of the invite link: the flags above, or-ed. */
export function botPermissions(): bigint {
  return BOT_PERMISSIONS.reduce((sum, [flag]) => sum | PermissionFlagsBits[flag], 0n);
}

/** The link that adds the bot to a server with its slash commands and the permissions above. */
export function inviteUrl(applicationId: string): string {
  const query = new URLSearchParams({
    client_id: applicationId,
    scope: "bot applications.commands",
    permissions: botPermissions().toString(),
  });
  return `https://discord.com/oauth2/authorize?${query.toString()}`;
}
