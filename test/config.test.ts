import { describe, expect, it } from "vitest";
import { ConfigError, dataServiceRefusal, parseConfig, secretsOf } from "../src/config.ts";
import { FAKE_DISCORD_TOKEN } from "./fakes/discord/index.ts";
import { startFakeTelegram } from "./fakes/telegram/index.ts";

/** Tokens of the real shapes: Discord's three dot-separated parts, Telegram's id:35 characters. */
const DISCORD = "MTIzNDU2Nzg5MDEyMzQ1Njc4.Gabcde.t0ken";
const TELEGRAM = `123456789:${"t0ken".padEnd(35, "x")}`;

describe("config", () => {
  it("gives every setting a sensible default with an empty environment", () => {
    const config = parseConfig({});
    expect(config.api.baseUrl).toBeUndefined();
    expect(config.api.timeoutMs).toBe(10_000);
    expect(config.api.reportNotSpamPath).toBe(
      "/wallets/v1beta2/{wallet}/report_not_spam/{contract}",
    );
    expect(config.cache.ttlSeconds.top).toBe(900);
    expect(config.cache.ttlSeconds.ownership).toBe(300);
    expect(config.cache.ttlSeconds.contracts).toBeLessThan(60);
    expect(config.dataDir).toBe("./data");
    expect(config.logLevel).toBe("info");
    // One person's sustained rate stays well under a Telegram group's 20 messages a minute.
    expect(config.rateLimit).toEqual({ burst: 8, perMinute: 10 });
    expect(config.chatRateLimit).toEqual({ burst: 20, perMinute: 20 });
    expect(config.api.maxBodyBytes).toBe(8 * 1024 * 1024);
    expect(config.api.budget).toEqual({ perSecond: 20, burst: 40, maxWaitMs: 2000 });
    expect(config.cache.maxBytes).toBe(4 * 1024 * 1024);
    expect(config.cache.maxEntryBytes).toBe(256 * 1024);
    // The collection index follows the top lists' freshness.
    expect(config.collectionIndexRefreshMs).toBe(900_000);
    expect(parseConfig({ COLLECTION_INDEX_REFRESH_S: "0" }).collectionIndexRefreshMs).toBe(0);
  });

  it("derives the cache's per-answer cap from its size unless set", () => {
    expect(parseConfig({ CACHE_MAX_BYTES: "160000" }).cache.maxEntryBytes).toBe(10_000);
    expect(parseConfig({ CACHE_MAX_ENTRY_BYTES: "5000" }).cache.maxEntryBytes).toBe(5000);
  });

  it("parses values and strips a trailing slash from URLs", () => {
    const config = parseConfig({
      API_BASE_URL: "https://api.example.com/",
      API_TIMEOUT_MS: "2500",
      LOG_LEVEL: "debug",
    });
    expect(config.api.baseUrl).toBe("https://api.example.com");
    expect(config.api.timeoutMs).toBe(2500);
    expect(config.logLevel).toBe("debug");
  });

  it.each([
    [{ API_TIMEOUT_MS: "soon" }, /API_TIMEOUT_MS/],
    [{ API_BASE_URL: "ftp://x" }, /API_BASE_URL/],
    [{ LOG_LEVEL: "loud" }, /LOG_LEVEL/],
    [{ API_REPORT_NOT_SPAM_PATH: "/no/placeholders" }, /API_REPORT_NOT_SPAM_PATH/],
    [{ API_RETRY_MIN_DELAY_MS: "9000", API_RETRY_MAX_DELAY_MS: "10" }, /API_RETRY_MIN_DELAY_MS/],
    [{ TELEGRAM_WEBHOOK_URL: "https://bot.example.com/hook" }, /TELEGRAM_WEBHOOK_SECRET/],
    [{ CACHE_MAX_BYTES: "100000", CACHE_MAX_ENTRY_BYTES: "200000" }, /CACHE_MAX_ENTRY_BYTES/],
    [{ API_BUDGET_PER_SECOND: "0" }, /API_BUDGET_PER_SECOND/],
    [{ COLLECTION_INDEX_REFRESH_S: "5" }, /COLLECTION_INDEX_REFRESH_S: must be 0/],
  ])("stops on %j naming the variable", (env, variable) => {
    expect(() => parseConfig(env)).toThrow(ConfigError);
    expect(() => parseConfig(env)).toThrow(variable);
  });

  describe("Redis (REDIS_URL, optional)", () => {
    it("is off by default; keys start with nftbot: unless REDIS_KEY_PREFIX says otherwise", () => {
      expect(parseConfig({}).redis).toEqual({
        url: undefined,
        keyPrefix: "nftbot:",
        localTtlSeconds: 5,
        localMaxBytes: 1024 * 1024,
        commandTimeoutMs: 500,
        breakerCoolingMs: 10_000,
      });
      const config = parseConfig({
        REDIS_URL: "rediss://cache.example:6380/2",
        REDIS_KEY_PREFIX: "bot-a:",
        REDIS_CACHE_LOCAL_TTL_S: "2",
      });
      expect(config.redis).toMatchObject({
        url: "rediss://cache.example:6380/2",
        keyPrefix: "bot-a:",
        localTtlSeconds: 2,
      });
      expect(parseConfig({ REDIS_URL: "redis://127.0.0.1" }).redis.url).toBe("redis://127.0.0.1");
    });

    it.each(["http://cache.example:6379", "127.0.0.1:6379", "redis://", "postgres://db.example/x"])(
      "refuses REDIS_URL=%s, saying what it must be",
      (url) => {
        expect(() => parseConfig({ REDIS_URL: url })).toThrow(
          "Invalid setting REDIS_URL: must be a redis:// or rediss:// URL with a host",
        );
      },
    );

    it("never quotes the URL (it may hold a password), and redacts its password from logs", () => {
      try {
        parseConfig({ REDIS_URL: "http://:hunter22@cache.example" });
        expect.unreachable();
      } catch (error) {
        expect((error as Error).message).not.toContain("hunter22");
      }
      const config = parseConfig({ REDIS_URL: "redis://bot:hunter22@cache.example" });
      expect(secretsOf(config)).toContain("hunter22");
    });

    it.each([
      [{ REDIS_KEY_PREFIX: "has space" }, /REDIS_KEY_PREFIX: must be 1 to 64 characters/],
      [{ REDIS_CACHE_LOCAL_TTL_S: "0" }, /REDIS_CACHE_LOCAL_TTL_S: must be at least 1/],
    ])("stops on %j", (env, message) => {
      expect(() => parseConfig(env)).toThrow(message);
    });
  });

  it("bounds what an HTTP client may make the server hold, each bound its own setting", () => {
    expect(parseConfig({}).http.limits).toEqual({
      headersTimeoutMs: 10_000,
      requestTimeoutMs: 15_000,
      keepAliveTimeoutMs: 5_000,
      maxConnections: 1_000,
      unauthenticatedBodyBytes: 16 * 1024 * 1024,
    });
    expect(
      parseConfig({
        HTTP_HEADERS_TIMEOUT_MS: "2000",
        HTTP_REQUEST_TIMEOUT_MS: "3000",
        HTTP_KEEP_ALIVE_TIMEOUT_MS: "65000",
        HTTP_MAX_CONNECTIONS: "200",
        HTTP_UNAUTHENTICATED_BODY_BYTES: "1048576",
      }).http.limits,
    ).toEqual({
      headersTimeoutMs: 2_000,
      requestTimeoutMs: 3_000,
      keepAliveTimeoutMs: 65_000,
      maxConnections: 200,
      unauthenticatedBodyBytes: 1024 * 1024,
    });
    // Less than one interaction of the largest size read could never be verified.
    expect(() => parseConfig({ HTTP_UNAUTHENTICATED_BODY_BYTES: "1000" })).toThrow(
      /HTTP_UNAUTHENTICATED_BODY_BYTES: must be at least 262144/,
    );
    expect(() => parseConfig({ HTTP_MAX_CONNECTIONS: "0" })).toThrow(/HTTP_MAX_CONNECTIONS/);
  });

  it.each([
    ["x", "one character"],
    ["s3cr3t", "six characters"],
    ["abcdefghijklmno", "fifteen characters"],
  ])("refuses a webhook secret that is guessable: %j (%s)", (secret) => {
    try {
      parseConfig({ TELEGRAM_WEBHOOK_SECRET: secret, TELEGRAM_WEBHOOK_URL: "https://x.example" });
      expect.unreachable();
    } catch (error) {
      expect((error as Error).message).toMatch(/TELEGRAM_WEBHOOK_SECRET: must be 16 to 256/);
      expect((error as Error).message).not.toContain(secret);
    }
  });

  it("takes a webhook secret of 16 characters of Telegram's alphabet", () => {
    const secret = "abcdefghijklm_-9";
    expect(
      parseConfig({ TELEGRAM_WEBHOOK_SECRET: secret, TELEGRAM_WEBHOOK_URL: "https://x.example" })
        .telegram.webhook?.secret,
    ).toBe(secret);
  });

  it("never echoes a secret's value", () => {
    const secret = "super secret value with spaces";
    try {
      parseConfig({ TELEGRAM_WEBHOOK_SECRET: secret, TELEGRAM_WEBHOOK_URL: "https://x.example" });
      expect.unreachable();
    } catch (error) {
      expect((error as Error).message).toMatch(/TELEGRAM_WEBHOOK_SECRET/);
      expect((error as Error).message).not.toContain(secret);
    }
  });

  describe("one HTTP port: HTTP_PORT, with METRICS_PORT and TELEGRAM_WEBHOOK_PORT as its older names", () => {
    const webhook = {
      TELEGRAM_WEBHOOK_URL: "https://bot.example.com/telegram/hook",
      TELEGRAM_WEBHOOK_SECRET: "s3cr3t-webhook-token",
    };

    it("serves a free loopback port unless set (the /verify page needs it), is off at 0, and takes any of its names", () => {
      expect(parseConfig({}).http).toMatchObject({ port: 0, host: "127.0.0.1" });
      for (const name of ["HTTP_PORT", "METRICS_PORT", "TELEGRAM_WEBHOOK_PORT"])
        expect(parseConfig({ [name]: "0" }).http.port).toBeUndefined();
      expect(parseConfig({ HTTP_PORT: "9464" }).http.port).toBe(9464);
      expect(parseConfig({ METRICS_PORT: "9464", METRICS_HOST: "10.0.0.2" }).http).toMatchObject({
        port: 9464,
        host: "10.0.0.2",
        variable: "METRICS_PORT",
      });
      expect(parseConfig({ ...webhook, TELEGRAM_WEBHOOK_PORT: "8000" }).http.port).toBe(8000);
      expect(parseConfig({ HTTP_PORT: "9464", METRICS_PORT: "9464" }).http.port).toBe(9464);
    });

    it("serves the webhook on 8443 and every interface by default, at the URL's path", () => {
      const config = parseConfig(webhook);
      expect(config.http).toMatchObject({ port: 8443, host: "0.0.0.0" });
      expect(config.telegram.webhook).toEqual({
        url: "https://bot.example.com/telegram/hook",
        secret: "s3cr3t-webhook-token",
        path: "/telegram/hook",
      });
      // An .env from the older example: METRICS_PORT=0 and METRICS_HOST=127.0.0.1 beside a webhook.
      expect(
        parseConfig({ ...webhook, METRICS_PORT: "0", METRICS_HOST: "127.0.0.1" }).http,
      ).toMatchObject({ port: 8443, host: "0.0.0.0" });
      expect(parseConfig({ ...webhook, HTTP_HOST: "127.0.0.1" }).http.host).toBe("127.0.0.1");
    });

    it("a webhook secret without its URL is no webhook", () => {
      expect(
        parseConfig({ TELEGRAM_WEBHOOK_SECRET: "s3cr3t-webhook-token" }).telegram.webhook,
      ).toBeUndefined();
    });

    it.each([
      [{ HTTP_PORT: "9000", METRICS_PORT: "9464" }],
      [{ METRICS_PORT: "9464", TELEGRAM_WEBHOOK_PORT: "8443" }],
      [{ HTTP_PORT: "9000", TELEGRAM_WEBHOOK_PORT: "8443" }],
    ])("refuses two different ports: %j", (env) => {
      expect(() => parseConfig(env)).toThrow(ConfigError);
      for (const name of Object.keys(env)) expect(() => parseConfig(env)).toThrow(name);
      expect(() => parseConfig(env)).toThrow(/set HTTP_PORT only/);
    });
  });

  it("DATABASE_URL: PostgreSQL URLs only, refused clearly and without repeating the password", () => {
    expect(parseConfig({}).databaseUrl).toBeUndefined();
    expect(parseConfig({}).databaseSchema).toBe("public");
    for (const url of ["postgres://u:p@db:5432/bot", "postgresql://db/bot"])
      expect(parseConfig({ DATABASE_URL: url }).databaseUrl).toBe(url);
    for (const url of [
      "mysql://u:hunter2@db/bot",
      "sqlite:///data/bot.sqlite",
      "hunter2",
      "postgres://",
    ]) {
      const refusal = (() => {
        try {
          parseConfig({ DATABASE_URL: url });
        } catch (error) {
          return error;
        }
        return undefined;
      })();
      expect(refusal).toBeInstanceOf(ConfigError);
      expect((refusal as Error).message).toMatch(
        /^Invalid setting DATABASE_URL: must be a PostgreSQL URL starting with postgres:\/\/ or postgresql:\/\//,
      );
      expect((refusal as Error).message).not.toContain("hunter2");
    }
    expect(parseConfig({ DATABASE_SCHEMA: "bot_1" }).databaseSchema).toBe("bot_1");
    expect(() => parseConfig({ DATABASE_SCHEMA: 'x"; DROP' })).toThrow(/DATABASE_SCHEMA/);
  });

  describe("Discord over HTTP interactions: DISCORD_PUBLIC_KEY", () => {
    const key = `${"a".repeat(32)}0123456789ABCDEF0123456789abcdef`;

    it("selects HTTP mode (no gateway) when set beside DISCORD_TOKEN, gateway mode otherwise", () => {
      expect(parseConfig({ DISCORD_TOKEN: DISCORD }).discord.mode).toBe("gateway");
      const config = parseConfig({ DISCORD_TOKEN: DISCORD, DISCORD_PUBLIC_KEY: key });
      expect(config.discord).toMatchObject({ mode: "http", publicKey: key, token: DISCORD });
    });

    it("serves the endpoint on 8443 and every interface unless HTTP_PORT / HTTP_HOST say otherwise", () => {
      const both = { DISCORD_TOKEN: DISCORD, DISCORD_PUBLIC_KEY: key };
      expect(parseConfig(both).http).toMatchObject({ port: 8443, host: "0.0.0.0" });
      expect(
        parseConfig({ ...both, HTTP_PORT: "8080", HTTP_HOST: "127.0.0.1" }).http,
      ).toMatchObject({ port: 8080, host: "127.0.0.1" });
    });

    it.each([
      ["abc", /DISCORD_PUBLIC_KEY: must be the application's public key: 64 hexadecimal/],
      [`${key}00`, /DISCORD_PUBLIC_KEY: must be the application's public key: 64 hexadecimal/],
      [`${key.slice(0, 63)}g`, /DISCORD_PUBLIC_KEY: must be the application's public key/],
    ])("refuses a key that is not 64 hex characters (%s), without quoting it", (value, message) => {
      expect(() => parseConfig({ DISCORD_TOKEN: DISCORD, DISCORD_PUBLIC_KEY: value })).toThrow(
        message,
      );
      try {
        parseConfig({ DISCORD_TOKEN: DISCORD, DISCORD_PUBLIC_KEY: value });
      } catch (error) {
        expect((error as Error).message).not.toContain(value);
      }
    });

    it("needs DISCORD_TOKEN (alerts and registration use REST)", () => {
      expect(() => parseConfig({ DISCORD_PUBLIC_KEY: key })).toThrow(
        /Invalid setting DISCORD_TOKEN: required when DISCORD_PUBLIC_KEY is set/,
      );
    });

    it("PUBLIC_URL is an http(s) URL, kept without its trailing slash", () => {
      expect(parseConfig({ PUBLIC_URL: "https://bot.example.com/" }).http.publicUrl).toBe(
        "https://bot.example.com",
      );
      expect(() => parseConfig({ PUBLIC_URL: "bot.example.com" })).toThrow(/PUBLIC_URL/);
    });
  });

  describe("bot tokens: refused at start when not of the platform's shape, never quoted", () => {
    it.each([
      ["DISCORD_TOKEN", "abc"],
      ["DISCORD_TOKEN", "Bot MTIzNDU2Nzg5MDEyMzQ1Njc4.Gabcde.abcdef"],
      ["DISCORD_TOKEN", "MTIzNDU2Nzg5MDEyMzQ1Njc4.Gabcde"],
      ["DISCORD_TOKEN", "MTIzNDU2Nzg5MDEyMzQ1Njc4..abcdef"],
    ])("%s=%s: three dot-separated parts expected", (variable, value) => {
      expect(() => parseConfig({ [variable]: value })).toThrow(
        /^Invalid setting DISCORD_TOKEN: must be .*three parts of A-Z, a-z, 0-9, _ and -, separated by dots/,
      );
      expect(() => parseConfig({ [variable]: value })).toThrow(/Reset Token/);
      try {
        parseConfig({ [variable]: value });
      } catch (error) {
        expect((error as Error).message).not.toContain(value);
      }
    });

    it.each([
      ["TELEGRAM_BOT_TOKEN", "abc"],
      ["TELEGRAM_BOT_TOKEN", "123456789:tooshort"],
      ["TELEGRAM_BOT_TOKEN", `bot123456789:${"a".repeat(35)}`],
      ["TELEGRAM_BOT_TOKEN", `123456789:${"a".repeat(34)}!`],
    ])("%s=%s: <digits>:<35 characters> expected", (variable, value) => {
      expect(() => parseConfig({ [variable]: value })).toThrow(
        /^Invalid setting TELEGRAM_BOT_TOKEN: must be .*<digits>:<35 characters of A-Z, a-z, 0-9, _ and ->/,
      );
      expect(() => parseConfig({ [variable]: value })).toThrow(/BotFather/);
      try {
        parseConfig({ [variable]: value });
      } catch (error) {
        expect((error as Error).message).not.toContain(value.slice(-10));
      }
    });

    it("takes tokens of the real shapes, the test fakes' included", async () => {
      const telegram = await startFakeTelegram();
      try {
        for (const token of [FAKE_DISCORD_TOKEN, DISCORD]) {
          expect(parseConfig({ DISCORD_TOKEN: token }).discord.token).toBe(token);
        }
        for (const token of [telegram.token, TELEGRAM]) {
          expect(parseConfig({ TELEGRAM_BOT_TOKEN: token }).telegram.token).toBe(token);
        }
      } finally {
        await telegram.close();
      }
    });
  });

  describe("made-up data and real chats (issue 34, item 9)", () => {
    const refusal = (variables: Record<string, string>) =>
      dataServiceRefusal(parseConfig(variables));
    it("a chat token without a data service is refused, naming what to set", () => {
      for (const token of ["DISCORD_TOKEN", "TELEGRAM_BOT_TOKEN"]) {
        const value =
          token === "DISCORD_TOKEN"
            ? "MTIzNDU2Nzg5MDEyMzQ1Njc4.Gabcde.secret-token-value"
            : `123456:${"secret-token-value".padEnd(35, "x")}`;
        const line = refusal({ [token]: value });
        expect(line).toMatch(new RegExp(`${token} is set but API_BASE_URL is not`));
        expect(line).toMatch(/API_BASE_URL with API_KEY/);
        expect(line).toMatch(/DATA_SERVICE=simulator/);
        expect(line).not.toContain("secret-token-value");
        expect(line).not.toContain("\n");
      }
    });
    it("the console, a data service, or DATA_SERVICE=simulator start", () => {
      expect(refusal({})).toBeUndefined();
      expect(refusal({ DATA_SERVICE: "simulator" })).toBeUndefined();
      expect(
        refusal({ DISCORD_TOKEN: DISCORD, API_BASE_URL: "https://api.example.com" }),
      ).toBeUndefined();
      expect(
        refusal({ TELEGRAM_BOT_TOKEN: TELEGRAM, CHAINS: "base=https://base.example.com" }),
      ).toBeUndefined();
      expect(refusal({ DISCORD_TOKEN: DISCORD, DATA_SERVICE: "simulator" })).toBeUndefined();
      expect(parseConfig({ DATA_SERVICE: "simulator" }).simulated).toBe(true);
    });
    it("DATA_SERVICE takes only simulator, and not beside a data-service URL", () => {
      expect(() => parseConfig({ DATA_SERVICE: "yes" })).toThrow(
        "Invalid setting DATA_SERVICE: must be simulator",
      );
      expect(() =>
        parseConfig({ DATA_SERVICE: "simulator", API_BASE_URL: "https://api.example.com" }),
      ).toThrow(/DATA_SERVICE: simulator serves made-up data, but API_BASE_URL/);
    });
  });
});
