import { startFakeDiscord } from "../fakes/discord/index.ts";
import { startFakeTelegram } from "../fakes/telegram/index.ts";

/**
 * Telegram and Discord fakes with the platforms' rate limits in their own process, so a bench of
 * the bot's event loop does not count theirs: BENCH_DISCORD_CHANNELS channels made, then prints
 * where they listen and the channels' ids. A line "sends" on stdin prints how many messages the
 * two accepted, `{"sends": n}`.
 */
const channels = Number(process.env.BENCH_DISCORD_CHANNELS ?? "0");
const telegram = await startFakeTelegram({ rateLimits: true });
// Discord's documented limits: 50 requests/s per bot, 5 messages per 5 s per channel.
const discord = await startFakeDiscord({
  rateLimits: { perChannel: { limit: 5, windowMs: 5000 }, globalPerSecond: 50 },
});
const discordIds = Array.from(
  { length: channels },
  (_, i) => discord.addChannel({ name: `alerts-${i}` }).id,
);
process.stdout.write(
  `${JSON.stringify({
    telegram: { token: telegram.token, apiRoot: telegram.apiRoot },
    discord: { token: discord.token, apiBase: discord.apiBase },
    discordIds,
  })}\n`,
);
const sends = () =>
  telegram.sent.filter((call) => call.method === "sendMessage" && call.ok).length +
  discord.requestsOf("createMessage", (r) => r.status >= 200 && r.status < 300).length;
let pending = "";
process.stdin.on("data", (chunk) => {
  pending += chunk;
  for (let at = pending.indexOf("\n"); at >= 0; at = pending.indexOf("\n")) {
    const line = pending.slice(0, at).trim();
    pending = pending.slice(at + 1);
    if (line === "sends") process.stdout.write(`${JSON.stringify({ sends: sends() })}\n`);
  }
});
process.on("SIGTERM", () => {
  void Promise.all([telegram.close(), discord.close()]).then(() => process.exit(0));
});
