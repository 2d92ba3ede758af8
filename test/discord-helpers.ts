import type { DiscordAdapter, DiscordAdapterOptions } from "../src/adapters/discord/index.ts";
import {
  DiscordHttpAdapter,
  type DiscordHttpAdapterOptions,
  INTERACTION_REPLAY_WINDOW_MS,
  INTERACTIONS_PATH,
} from "../src/adapters/discord-http/index.ts";
import type { Runtime } from "../src/core/runtime.ts";
import { HttpHost } from "../src/http/host.ts";
import { silentLogger } from "../src/log.ts";
import type { Store } from "../src/store/types.ts";
import { SourceUpdateDedup } from "../src/store/updates.ts";
import type { FakeDiscord } from "./fakes/discord/index.ts";
import { freePort } from "./helpers.ts";

// Apart from test/helpers.ts: the Discord libraries load only in the files that use Discord, and
// discord.js (the gateway) only when a gateway adapter is made.

/** The real gateway adapter (discord.js) on the fake, registering its commands in the fake's guild. */
export async function discordAdapterFor(
  fake: FakeDiscord,
  runtime: Runtime,
  options: Partial<DiscordAdapterOptions> = {},
): Promise<DiscordAdapter> {
  const { DiscordAdapter } = await import("../src/adapters/discord/index.ts");
  return new DiscordAdapter({
    token: fake.token,
    runtime,
    logger: silentLogger(),
    apiUrl: fake.apiBase,
    guildId: fake.guildId,
    registerOnStart: true,
    ...options,
  });
}

/**
 * The real HTTP-interactions adapter on the fake, started, its routes on a new loopback host:
 * interactions ids kept in `updates` as the bot keeps them; `endpoint` is where the fake posts.
 */
export async function serveDiscordHttp(
  fake: FakeDiscord,
  runtime: Runtime,
  updates: Store["updates"],
  options: Partial<DiscordHttpAdapterOptions> = {},
): Promise<{ adapter: DiscordHttpAdapter; host: HttpHost; endpoint: string }> {
  const adapter = new DiscordHttpAdapter({
    token: fake.token,
    publicKey: fake.publicKey,
    runtime,
    logger: silentLogger(),
    apiUrl: fake.apiBase,
    guildId: fake.guildId,
    registerOnStart: true,
    interactions: new SourceUpdateDedup(updates, {
      source: "discord",
      windowMs: INTERACTION_REPLAY_WINDOW_MS,
    }),
    ...options,
  });
  await adapter.start();
  const host = new HttpHost(silentLogger());
  for (const route of adapter.routes) host.mount(route);
  const port = await freePort();
  await host.listen(port, "127.0.0.1");
  return { adapter, host, endpoint: `http://127.0.0.1:${port}${INTERACTIONS_PATH}` };
}
