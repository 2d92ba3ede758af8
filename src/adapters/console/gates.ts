import type { GateMembership, GateTarget } from "../membership.ts";

/**
 * Gates on the console (issue 38): the console is a simulated community that the person at the
 * keyboard manages, so /gate add, list, remove and log work there as in a Discord server. Its
 * roles exist only on screen: giving one or taking it back is printed, marked, between the
 * answers. The person runs the bot, so they may give any role (no Discord hierarchy to apply).
 */
export function consoleGateMembership(say: (text: string) => void): GateMembership {
  const roleOf = (target: GateTarget) =>
    target.platform === "console" ? `@${target.roleName}` : "the gate's role";
  return {
    platform: "console",
    async check(target) {
      if (target.platform !== "console")
        return { ok: false, reason: "The console's gates give a role of its own." };
      return { ok: true, target };
    },
    async mayGive() {
      return { ok: true };
    },
    // The console's one chat is its community: a proof there meets its gates.
    async guildOf(chatId) {
      return chatId;
    },
    async grant(target) {
      say(
        `You were given the role ${roleOf(target)} in the console's simulated community: a proved wallet passes its gate (/gate list).`,
      );
      return { ok: true };
    },
    async revoke(target) {
      say(
        `The role ${roleOf(target)} was taken back: your proved wallets no longer pass its gate (/gate test <wallet> says why).`,
      );
      return { ok: true };
    },
  };
}
