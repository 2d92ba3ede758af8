import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer as createHttpsServer, type Server } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DiscordAdapter } from "../src/adapters/discord/index.ts";
import { DiscordHttpAdapter } from "../src/adapters/discord-http/index.ts";
import { TelegramAdapter } from "../src/adapters/telegram/index.ts";
import type { ChatAdapter } from "../src/adapters/types.ts";
import type { Runtime } from "../src/core/runtime.ts";
import { StartupError } from "../src/errors.ts";
import { silentLogger } from "../src/log.ts";
import { startSimulator } from "../src/simulator/index.ts";
import { ConnectError, checkDataServices, connect } from "../src/startup.ts";
import { type FakeDiscord, startFakeDiscord } from "./fakes/discord/index.ts";
import { type FakeTelegram, startFakeTelegram } from "./fakes/telegram/index.ts";
import { failure, freePort } from "./helpers.ts";

/**
 * Why a start failed, said at once in one plain line: the real adapters (grammY, discord.js,
 * @discordjs/rest) and the data-service check, each pointed at a loopback port nothing listens
 * on, a host name under .invalid (RFC 2606: it never resolves), a TLS server with a self-signed
 * certificate, or the fakes answering 401 to a wrong token. Started through `connect()` as bot.ts
 * starts them, with a connect timeout far longer than the test's: the cause must come first.
 */

const LONG_TIMEOUT_MS = 120_000;
const WRONG_DISCORD_TOKEN = "MTIzNDU2Nzg5MDEyMzQ1Njc4.Gabcde.not-the-right-token";
const WRONG_TELEGRAM_TOKEN = "987654321:not-the-right-token";
const NOWHERE = "http://nowhere.invalid";

/** Nothing of the runtime is used before the platform answers (the commands' menu comes after). */
const runtime = { commands: [] } as unknown as Runtime;
/** No interaction arrives: the start fails first. */
const interactions = { firstSeen: async () => true };
const logger = silentLogger();

let refusedUrl: string;
let tls: { server: Server; url: string; dir: string };
let fakeDiscord: FakeDiscord;
let fakeTelegram: FakeTelegram;

/** An HTTPS server on loopback whose certificate is self-signed (made here with openssl). */
async function selfSignedServer(): Promise<{ server: Server; url: string; dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), "bot-tls-"));
  const [key, cert] = [join(dir, "key.pem"), join(dir, "cert.pem")];
  execFileSync(
    "openssl",
    ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"].concat([
      "-subj",
      "/CN=127.0.0.1",
      "-days",
      "1",
      "-keyout",
      key,
      "-out",
      cert,
    ]),
    { stdio: "ignore" },
  );
  const server = createHttpsServer({ key: readFileSync(key), cert: readFileSync(cert) }, (_, res) =>
    res.end("{}"),
  );
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return { server, url: `https://127.0.0.1:${port}`, dir };
}

beforeAll(async () => {
  refusedUrl = `http://127.0.0.1:${await freePort()}`;
  [tls, fakeDiscord, fakeTelegram] = await Promise.all([
    selfSignedServer(),
    startFakeDiscord(),
    startFakeTelegram(),
  ]);
});

afterAll(async () => {
  await Promise.all([fakeDiscord.close(), fakeTelegram.close()]);
  await new Promise((resolve) => tls.server.close(resolve));
  rmSync(tls.dir, { recursive: true, force: true });
});

const telegram = (apiRoot: string, token = WRONG_TELEGRAM_TOKEN) =>
  new TelegramAdapter({ token, apiRoot, runtime, logger, throttle: false });
const discord = (apiUrl: string) =>
  new DiscordAdapter({ token: WRONG_DISCORD_TOKEN, apiUrl, runtime, logger });
const discordHttp = (apiUrl: string) =>
  new DiscordHttpAdapter({
    token: WRONG_DISCORD_TOKEN,
    publicKey: fakeDiscord.publicKey,
    apiUrl,
    runtime,
    logger,
    interactions,
  });

/** Starts an adapter as bot.ts does; the failure, and the lines told while it retried. */
async function start(adapter: ChatAdapter) {
  const notices: string[] = [];
  const target = {
    service: adapter.label,
    url: adapter.connectsTo ?? "",
    credential: adapter.tokenSetting,
    credentialName: "bot token",
  };
  try {
    const error = await failure(
      connect(
        target,
        LONG_TIMEOUT_MS,
        () => adapter.start(),
        (line) => notices.push(line),
      ),
    );
    return { error, notices };
  } finally {
    await adapter.stop();
  }
}

describe("a platform that cannot be reached or refuses the token: the cause in one line, at once", () => {
  it.concurrent.each([
    [
      "Telegram",
      () => telegram(NOWHERE),
      `Cannot reach Telegram at ${NOWHERE}: DNS lookup failed for nowhere.invalid (no such host name)`,
    ],
    [
      "Discord (gateway)",
      () => discord(`${NOWHERE}/api`),
      `Cannot reach Discord at ${NOWHERE}/api: DNS lookup failed for nowhere.invalid (no such host name)`,
    ],
    [
      "Discord (HTTP interactions)",
      () => discordHttp(`${NOWHERE}/api`),
      `Cannot reach Discord at ${NOWHERE}/api: DNS lookup failed for nowhere.invalid (no such host name)`,
    ],
  ])("%s: a host name that does not resolve", async (_, make, line) => {
    const { error, notices } = await start(make());
    expect(error).toBeInstanceOf(ConnectError);
    expect(error.message).toBe(line);
    expect(notices).toEqual([]);
  });

  it.concurrent("Telegram: connection refused, naming the address and port", async () => {
    const { error } = await start(telegram(refusedUrl));
    const hostPort = refusedUrl.slice("http://".length);
    expect(error.message).toBe(
      `Cannot reach Telegram at ${refusedUrl}: connection refused by ${hostPort} (nothing listening there)`,
    );
  });

  it.concurrent("Discord (gateway): connection refused", async () => {
    const { error } = await start(discord(`${refusedUrl}/api`));
    expect(error.message).toMatch(
      /: connection refused by 127\.0\.0\.1:\d+ \(nothing listening there\)$/,
    );
  });

  it.concurrent("Discord (HTTP interactions): a self-signed certificate is a TLS failure", async () => {
    const { error } = await start(discordHttp(`${tls.url}/api`));
    expect(error).toBeInstanceOf(ConnectError);
    expect(error.message).toBe(
      `Cannot reach Discord at ${tls.url}/api: TLS failure: its certificate is self-signed (DEPTH_ZERO_SELF_SIGNED_CERT)`,
    );
  });

  it.concurrent("Telegram: a wrong token is named by its setting, never shown", async () => {
    const { error } = await start(telegram(fakeTelegram.apiRoot));
    expect(error.message).toBe(
      "Telegram rejected the bot token (401 Unauthorized): check TELEGRAM_BOT_TOKEN",
    );
  });

  it.concurrent.each([
    ["gateway", () => discord(fakeDiscord.apiBase)],
    ["HTTP interactions", () => discordHttp(fakeDiscord.apiBase)],
  ])("Discord (%s): a wrong token", async (_, make) => {
    const { error } = await start(make());
    expect(error.message).toBe(
      "Discord rejected the bot token (401 Unauthorized): check DISCORD_TOKEN",
    );
    expect(String(error.stack)).not.toContain(WRONG_DISCORD_TOKEN);
  });

  it("Telegram dropping the connection: told at once while the start tries again, then connected", async () => {
    const fake = await startFakeTelegram();
    try {
      // The first try and its two quick network retries (src/adapters/telegram/requests.ts).
      fake.failNext("getMe", "disconnect", { times: 3 });
      const adapter = telegram(fake.apiRoot, fake.token);
      const notices: string[] = [];
      const target = { service: "Telegram", url: fake.apiRoot, credential: "TELEGRAM_BOT_TOKEN" };
      await connect(
        target,
        LONG_TIMEOUT_MS,
        () => adapter.start(),
        (line) => notices.push(line),
      );
      await adapter.stop();
      const hostPort = fake.apiRoot.slice("http://".length);
      expect(notices).toEqual([
        `Cannot reach Telegram at ${fake.apiRoot}: connection to ${hostPort} closed before an answer (ECONNRESET); trying again for up to 120 s`,
      ]);
    } finally {
      await fake.close();
    }
  });
});

describe("the data service, checked once before the platforms", () => {
  it("a refused API key stops the start, naming API_KEY and not the key", async () => {
    const simulator = await startSimulator({
      port: 0,
      apiKey: "the-right-key",
      chains: ["ethereum"],
    });
    try {
      const notices: string[] = [];
      const error = await failure(
        checkDataServices(
          [{ name: "Ethereum", baseUrl: simulator.urlOf("ethereum"), apiKey: "a-wrong-key" }],
          5_000,
          logger,
          (line) => notices.push(line),
        ),
      );
      expect(error).toBeInstanceOf(StartupError);
      expect(error.message).toBe(
        "The data service rejected the API key (401 Unauthorized): check API_KEY",
      );
      expect(notices).toEqual([]);
    } finally {
      await simulator.close();
    }
  });

  it("a host name that does not resolve, or a certificate not to be trusted, stops it", async () => {
    const errors = await Promise.all(
      [NOWHERE, tls.url].map((baseUrl) =>
        failure(
          checkDataServices([{ name: "Ethereum", baseUrl, apiKey: "k" }], 5_000, logger, () => {}),
        ),
      ),
    );
    expect(errors.map((error) => error.message)).toEqual([
      `Cannot reach the data service at ${NOWHERE}: DNS lookup failed for nowhere.invalid (no such host name)`,
      `Cannot reach the data service at ${tls.url}: TLS failure: its certificate is self-signed (DEPTH_ZERO_SELF_SIGNED_CERT)`,
    ]);
  });

  it("a service not up yet is told in one line, and the start goes on", async () => {
    const notices: string[] = [];
    await checkDataServices(
      [{ name: "Ethereum", baseUrl: refusedUrl, apiKey: "k" }],
      5_000,
      logger,
      (line) => notices.push(line),
    );
    const hostPort = refusedUrl.slice("http://".length);
    expect(notices).toEqual([
      `Cannot reach the data service at ${refusedUrl}: connection refused by ${hostPort} (nothing listening there); starting anyway, commands will fail until it answers`,
    ]);
  });
});
