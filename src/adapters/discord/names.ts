import type { REST } from "@discordjs/rest";
import { type APIGuild, type APIUser, Routes } from "discord-api-types/v10";
import { bounded } from "../../within.ts";

/** Names change rarely; a page asked for again within this long uses the name read before. */
const KEPT_MS = 10 * 60_000;
/** A name is a nicety: a read that takes longer is given up (the page names no server). */
const BOUND_MS = 3_000;
/** At most this many servers' names are kept (the oldest go first). */
const MAX_KEPT = 1_000;

/**
 * The names /verify's page shows (issue 37): a server's and the bot's own, read through REST (the
 * gateway client keeps no guilds, and an HTTP interaction carries no names), kept 10 minutes. A
 * failed or slow read gives no name, never an error.
 */
export class DiscordNames {
  private readonly kept = new Map<string, { name: string | undefined; until: number }>();

  constructor(private readonly rest: () => REST) {}

  guild(guildId: string): Promise<string | undefined> {
    return this.read(`guild:${guildId}`, async () => {
      const guild = (await this.rest().get(Routes.guild(guildId))) as APIGuild;
      return guild.name;
    });
  }

  bot(): Promise<string | undefined> {
    return this.read("bot", async () => {
      const me = (await this.rest().get(Routes.user("@me"))) as APIUser;
      return me.global_name ?? me.username;
    });
  }

  /** Both, for an interaction in `guildId` (none in a private chat). */
  async of(guildId: string | undefined): Promise<{ placeName?: string; botName?: string }> {
    const [placeName, botName] = await Promise.all([
      guildId ? this.guild(guildId) : undefined,
      this.bot(),
    ]);
    return { ...(placeName ? { placeName } : {}), ...(botName ? { botName } : {}) };
  }

  private async read(key: string, fetch: () => Promise<string>): Promise<string | undefined> {
    const now = Date.now();
    const kept = this.kept.get(key);
    if (kept && now < kept.until) return kept.name;
    const name = await bounded(fetch(), BOUND_MS, "a name").catch(() => undefined);
    if (this.kept.size >= MAX_KEPT) this.kept.delete(this.kept.keys().next().value as string);
    // A failed read is tried again sooner: a name missing for 10 minutes would read as none.
    this.kept.set(key, { name, until: now + (name === undefined ? 30_000 : KEPT_MS) });
    return name;
  }
}
