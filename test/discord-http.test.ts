/**
 * Discord over HTTP interactions, end to end on loopback: the fake Discord POSTs signed
 * interactions to the bot's HTTP host and takes its HTTP answers as the callbacks; what comes after
 * (deferred answers, uploads, alerts) reaches the fake's REST server through @discordjs/rest.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { DiscordHttpAdapter, INTERACTIONS_PATH } from "../src/adapters/discord-http/index.ts";
import { defineCommand } from "../src/core/command.ts";
import { UserError } from "../src/errors.ts";
import { HttpHost } from "../src/http/host.ts";
import { type Logger, silentLogger } from "../src/log.ts";
import type { UpdateDedup } from "../src/store/types.ts";
import { SourceUpdateDedup } from "../src/store/updates.ts";
import { serveDiscordHttp } from "./discord-helpers.ts";
import {
  DEFAULT_USER,
  type FakeDiscord,
  MEMBER_PERMISSIONS,
  PERMISSION,
  type RecordedRequest,
  startFakeDiscord,
} from "./fakes/discord/index.ts";
import { capturingLogger, freePort, type RuntimeSetup, startRuntime } from "./helpers.ts";

let countRuns = 0;
/** Counts its runs: a replayed request must not add one. */
const countCommand = defineCommand({
  name: "countme",
  description: "Counts",
  options: {},
  examples: [],
  run: async () => {
    countRuns++;
    return { text: `run ${countRuns}` };
  },
});

let adminRuns = 0;
const adminCommand = defineCommand({
  name: "adminonly",
  description: "Changes channel settings",
  options: {},
  examples: [],
  requiresManageChannel: true,
  run: async () => {
    adminRuns++;
    return { text: "changed" };
  },
});

/** A refusal that comes after the answer was deferred. */
const slowRefusal = defineCommand({
  name: "slowrefusal",
  description: "Refuses, slowly",
  options: {},
  examples: [],
  run: async () => {
    await new Promise((resolve) => setTimeout(resolve, 200));
    throw new UserError("invalid_argument", "No, after some thought.");
  },
});

/** An answer that takes longer than Discord waits for the HTTP response (3 s) with room to spare. */
const slowAnswer = defineCommand({
  name: "slowanswer",
  description: "Answers after 2.6 s",
  options: {},
  examples: [],
  run: async () => {
    await new Promise((resolve) => setTimeout(resolve, 2600));
    return { text: "finally" };
  },
});

let t: RuntimeSetup;
let fake: FakeDiscord;
let adapter: DiscordHttpAdapter;
let host: HttpHost;
let endpoint: string;

async function serve(
  options: { deferAfterMs?: number; logger?: Logger; interactions?: UpdateDedup } = {},
): Promise<void> {
  ({ adapter, host, endpoint } = await serveDiscordHttp(fake, t.runtime, t.store.updates, options));
}

beforeEach(async () => {
  adminRuns = 0;
  countRuns = 0;
  t = await startRuntime({}, {}, [adminCommand, slowRefusal, slowAnswer, countCommand]);
  fake = await startFakeDiscord();
  await serve();
});

afterEach(async () => {
  await adapter.stop();
  await host.close();
  await fake.close();
  await t.close();
});

type Embed = { title?: string; description?: string; image?: { url?: string } };
const dataOf = (request: RecordedRequest) => {
  const body = request.body as { data?: Record<string, unknown> } & Record<string, unknown>;
  return (body.data ?? body) as Record<string, unknown>;
};
const embedOf = (request: RecordedRequest) =>
  ((dataOf(request).embeds as Embed[] | undefined) ?? [])[0] ?? {};
const typeOf = (request: RecordedRequest) => (request.body as { type: number }).type;
type Rows = { components: { custom_id: string; label: string }[] }[];
const buttonsOf = (request: RecordedRequest) =>
  ((dataOf(request).components as Rows | undefined) ?? []).flatMap((row) => row.components);

/** Posts an interaction and returns its accepted callback (the HTTP answer). */
async function post(payload: Parameters<FakeDiscord["postInteraction"]>[1]) {
  const delivery = await fake.postInteraction(endpoint, payload);
  expect(delivery.status).toBe(200);
  expect(delivery.callback?.status).toBe(204);
  return delivery.callback as RecordedRequest;
}

/** The message that answered a command: the HTTP answer, or the edit after a deferral. */
async function answerOf(payload: Parameters<FakeDiscord["postInteraction"]>[1]) {
  const callback = await post(payload);
  return typeOf(callback) === 5 ? fake.waitForOriginalEdit(payload, 10_000) : callback;
}

describe("verification before parsing", () => {
  const now = () => Math.floor(Date.now() / 1000);

  it("answers a signed PING with PONG", async () => {
    const delivery = await fake.postInteraction(endpoint, fake.ping());
    expect(delivery).toMatchObject({ status: 200, body: { type: 1 } });
  });

  it("refuses with 401: no signature, no timestamp, bad hex, another key's signature, a changed body", async () => {
    const ping = fake.ping();
    const body = JSON.stringify(ping);
    const ts = String(now());
    const good = fake.sign(ts, body);
    const refused = async (headers: Record<string, string>, sent = body) => {
      const response = await fetch(endpoint, {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body: sent,
      });
      await response.text();
      return response.status;
    };
    // The signed request itself passes: each refusal below is for its one change.
    expect(await refused({ "x-signature-timestamp": ts, "x-signature-ed25519": good })).toBe(200);
    expect(await refused({ "x-signature-timestamp": ts })).toBe(401);
    expect(await refused({ "x-signature-ed25519": good })).toBe(401);
    expect(await refused({ "x-signature-timestamp": ts, "x-signature-ed25519": "zz" })).toBe(401);
    expect(
      await refused({
        "x-signature-timestamp": ts,
        "x-signature-ed25519": `${good.slice(0, 126)}x0`,
      }),
    ).toBe(401);
    const other = await startFakeDiscord();
    try {
      const forged = other.sign(ts, body);
      expect(await refused({ "x-signature-timestamp": ts, "x-signature-ed25519": forged })).toBe(
        401,
      );
    } finally {
      await other.close();
    }
    const changed = body.replace('"type":1', '"type": 1');
    expect(
      await refused({ "x-signature-timestamp": ts, "x-signature-ed25519": good }, changed),
    ).toBe(401);
    // The timestamp is signed too: the same signature with another timestamp fails.
    const later = String(now() + 1);
    expect(await refused({ "x-signature-timestamp": later, "x-signature-ed25519": good })).toBe(
      401,
    );
  });

  it("refuses timestamps more than 5 minutes old or ahead, and takes one 4 minutes off", async () => {
    const status = async (timestamp: number) =>
      (await fake.postInteraction(endpoint, fake.ping(), { timestamp: String(timestamp) })).status;
    expect(await status(now() - 6 * 60)).toBe(401);
    expect(await status(now() + 6 * 60)).toBe(401);
    expect(await status(now() - 4 * 60)).toBe(200);
    expect(await status(now() + 4 * 60)).toBe(200);
  });

  it("a captured request sent again within the signature window is answered but never runs again", async () => {
    const payload = fake.slashCommand("countme");
    const body = JSON.stringify(payload);
    const ts = String(now());
    const headers = {
      "content-type": "application/json",
      "x-signature-timestamp": ts,
      "x-signature-ed25519": fake.sign(ts, body),
    };
    const send = async () => {
      const response = await fetch(endpoint, { method: "POST", headers, body });
      return { status: response.status, answer: (await response.json()) as unknown };
    };
    const first = await send();
    expect(first).toMatchObject({ status: 200, answer: { type: 4 } });
    expect(JSON.stringify(first.answer)).toContain("run 1");
    for (const _ of [1, 2]) {
      const again = await send();
      expect(again.status).toBe(200);
      expect(again.answer).toMatchObject({ type: 4, data: { flags: 64 } });
      expect(JSON.stringify(again.answer)).toContain("already handled");
    }
    expect(countRuns).toBe(1);
    // Another instance sharing the store refuses it too.
    const other = new DiscordHttpAdapter({
      token: fake.token,
      publicKey: fake.publicKey,
      runtime: t.runtime,
      logger: silentLogger(),
      apiUrl: fake.apiBase,
      interactions: new SourceUpdateDedup(t.store.updates, { source: "discord" }),
    });
    await other.start();
    const otherHost = new HttpHost(silentLogger());
    for (const route of other.routes) otherHost.mount(route);
    const port = await freePort();
    await otherHost.listen(port, "127.0.0.1");
    try {
      const response = await fetch(`http://127.0.0.1:${port}${INTERACTIONS_PATH}`, {
        method: "POST",
        headers,
        body,
      });
      expect(response.status).toBe(200);
      expect(JSON.stringify(await response.json())).toContain("already handled");
      expect(countRuns).toBe(1);
    } finally {
      await other.stop();
      await otherHost.close();
    }
  });

  it("when the store cannot say, the interaction still runs, and this instance refuses its replay", async () => {
    await adapter.stop();
    await host.close();
    await serve({
      interactions: {
        firstSeen: async () => {
          throw new Error("SQLITE_FULL: database or disk is full");
        },
      },
    });
    const payload = fake.slashCommand("countme");
    const body = JSON.stringify(payload);
    const ts = String(now());
    const headers = { "x-signature-timestamp": ts, "x-signature-ed25519": fake.sign(ts, body) };
    const send = async () =>
      JSON.stringify(await (await fetch(endpoint, { method: "POST", headers, body })).json());
    expect(await send()).toContain("run 1");
    expect(await send()).toContain("already handled");
    expect(countRuns).toBe(1);
  });

  it("when the store hangs (a frozen database), the interaction still runs within Discord's 3 s, and this instance refuses its replay", async () => {
    await adapter.stop();
    await host.close();
    await serve({ interactions: { firstSeen: () => new Promise<boolean>(() => {}) } });
    const payload = fake.slashCommand("countme");
    const body = JSON.stringify(payload);
    const ts = String(now());
    const headers = { "x-signature-timestamp": ts, "x-signature-ed25519": fake.sign(ts, body) };
    const send = async () =>
      JSON.stringify(
        await (
          await fetch(endpoint, {
            method: "POST",
            headers,
            body,
            signal: AbortSignal.timeout(2_900),
          })
        ).json(),
      );
    expect(await send()).toContain("run 1");
    expect(await send()).toContain("already handled");
    expect(countRuns).toBe(1);
  });

  it("the time spent asking the store comes out of the deferral: a slow store and a slow command are still acknowledged within Discord's 3 s", async () => {
    await adapter.stop();
    await host.close();
    // The store answers just under its 1 s bound; the command takes 2.6 s.
    await serve({
      interactions: {
        firstSeen: () => new Promise<boolean>((resolve) => setTimeout(() => resolve(true), 900)),
      },
    });
    const payload = fake.slashCommand("slowanswer");
    const started = performance.now();
    const posted = await fake.postInteraction(endpoint, payload);
    const ackMs = performance.now() - started;
    expect(posted.status).toBe(200);
    expect((posted.body as { type: number }).type).toBe(5);
    // 2 s of deferral counted from when the request came, not from after the store's answer.
    expect(ackMs).toBeLessThan(2_600);
    const edit = await fake.waitForOriginalEdit(payload, 10_000);
    expect(JSON.stringify(edit.body)).toContain("finally");
  });

  it("a signed interaction whose id is no Discord id (letters, 79 digits, past 64 bits) gets 400 and runs nothing", async () => {
    for (const id of ["abc", "1".repeat(79), "9999999999999999999", ""]) {
      const posted = await fake.postInteraction(endpoint, { ...fake.slashCommand("countme"), id });
      expect(posted.status, id).toBe(400);
    }
    expect(countRuns).toBe(0);
  });

  it("a forged command runs nothing; a body over the bound is not read; only POST", async () => {
    const payload = fake.slashCommand(
      "adminonly",
      {},
      { memberPermissions: PERMISSION.ManageChannels },
    );
    const forged = await fake.postInteraction(endpoint, payload, { signature: "ab".repeat(64) });
    expect(forged.status).toBe(401);
    expect(adminRuns).toBe(0);
    expect(fake.requestsOf("interactionCallback")).toHaveLength(0);

    const huge = `{"type":1,"pad":"${"x".repeat(300 * 1024)}"}`;
    const ts = String(now());
    const big = await fetch(endpoint, {
      method: "POST",
      headers: { "x-signature-timestamp": ts, "x-signature-ed25519": fake.sign(ts, huge) },
      body: huge,
    });
    expect(big.status).toBe(413);
    expect((await fetch(endpoint)).status).toBe(405);
    expect((await fake.postInteraction(endpoint, fake.ping())).status).toBe(200);
  });
});

describe("commands, buttons and autocomplete on the runtime", () => {
  it("answers a quick command in the HTTP response (type 4), within every Discord check", async () => {
    const callback = await post(fake.slashCommand("whois", { query: t.sim.fixtures.walletEns }));
    expect(typeOf(callback)).toBe(4);
    expect(embedOf(callback).title).toBe(t.sim.fixtures.walletEns);
    expect(dataOf(callback).allowed_mentions).toEqual({ parse: [] });
    expect(dataOf(callback).flags).toBeUndefined();
  });

  it("defers a slow command (type 5) and edits @original through REST", async () => {
    await adapter.stop();
    await host.close();
    await serve({ deferAfterMs: 20 });
    t.sim.setFaults({ latencyMs: 300 });
    const payload = fake.slashCommand("stats", { collection: t.sim.fixtures.collection });
    const callback = await post(payload);
    expect(callback.body).toEqual({ type: 5 });
    const edit = await fake.waitForOriginalEdit(payload, 10_000);
    expect(edit.path).toBe(`/webhooks/${fake.applicationId}/${payload.token}/messages/@original`);
    expect(edit.headers.authorization).toBeUndefined();
    expect(embedOf(edit).title).toMatch(/stats/i);
  });

  it("with the default 2 s budget, an answer that takes 2.6 s is acknowledged within Discord's 3 s, then edited in", async () => {
    const payload = fake.slashCommand("slowanswer");
    const started = Date.now();
    // post() checks the fake took the answer as a callback: it refuses one later than 3 s (10062).
    expect((await post(payload)).body).toEqual({ type: 5 });
    expect(Date.now() - started).toBeLessThan(2500);
    const edit = await fake.waitForOriginalEdit(payload, 10_000);
    expect(embedOf(edit).description).toBe("finally");
  });

  it("a refusal that comes after deferring replaces the public 'thinking' with an ephemeral follow-up", async () => {
    await adapter.stop();
    await host.close();
    await serve({ deferAfterMs: 20 });
    const payload = fake.slashCommand("slowrefusal");
    expect((await post(payload)).body).toEqual({ type: 5 });
    const followUp = await fake.waitForFollowUp(payload, 10_000);
    expect(dataOf(followUp).flags).toBe(64);
    expect(embedOf(followUp).description).toMatch(/after some thought/);
    expect(fake.requestsOf("deleteWebhookMessage", (r) => r.status === 204)).toHaveLength(1);
  });

  it("a chart is uploaded: deferred, then @original edited with the PNG as a multipart attachment", async () => {
    const payload = fake.slashCommand("owners", { collection: t.sim.fixtures.collection });
    expect((await post(payload)).body).toEqual({ type: 5 });
    const edit = await fake.waitForOriginalEdit(payload, 10_000);
    expect(edit.headers["content-type"]).toMatch(/^multipart\/form-data/);
    expect(embedOf(edit).image?.url).toBe("attachment://owners.png");
    const file = edit.files.find((f) => f.filename === "owners.png");
    expect([...(file?.data.subarray(0, 4) ?? [])]).toEqual([0x89, 0x50, 0x4e, 0x47]);
    expect(dataOf(edit).attachments).toMatchObject([{ id: 0, filename: "owners.png" }]);
    const message = fake.message((edit.response as { id: string }).id);
    expect(message?.embeds[0]?.image?.url).toMatch(/^https:\/\/cdn\.discordapp\.com\//);
  });

  it("an edit that races Discord taking in the acknowledgement (no message yet) is tried again, not lost", async () => {
    const payload = fake.slashCommand("owners", { collection: t.sim.fixtures.collection });
    const delivered = await fake.postInteraction(endpoint, payload, { ackDelayMs: 300 });
    expect(delivered.body).toEqual({ type: 5 });
    const edit = await fake.waitForOriginalEdit(payload, 10_000);
    expect(embedOf(edit).image?.url).toBe("attachment://owners.png");
  });

  it("an edit Discord refuses is logged without the interaction's token", async () => {
    const { logger, lines } = capturingLogger();
    await adapter.stop();
    await host.close();
    await serve({ logger });
    // Another application's interaction: the fake refuses its webhook edits (403 Missing Access).
    const payload = {
      ...fake.slashCommand("owners", { collection: t.sim.fixtures.collection }),
      application_id: "100000000000000999",
    };
    expect((await post(payload)).body).toEqual({ type: 5 });
    await fake.waitFor((r) => r.route === "editWebhookMessage" && r.status === 403, 10_000);
    await vi.waitFor(() => expect(lines.join("")).toMatch(/discord interaction failed/));
    const logged = lines.join("");
    expect(logged).toMatch(/Missing Access/);
    expect(logged).toContain("<interaction token>");
    expect(logged).not.toContain(payload.token);
    expect(logged).not.toContain(encodeURIComponent(payload.token));
  });

  it("refusals are ephemeral: a bad argument, a member without Manage Channels", async () => {
    const bad = await post(fake.slashCommand("nft", { item: "0x12", token_id: "1" }));
    expect(dataOf(bad).flags).toBe(64);
    expect(embedOf(bad).description).toMatch(/is not a valid contract address/);
    const denied = await post(
      fake.slashCommand("adminonly", {}, { memberPermissions: MEMBER_PERMISSIONS }),
    );
    expect(dataOf(denied).flags).toBe(64);
    expect(adminRuns).toBe(0);
    const allowed = await post(
      fake.slashCommand(
        "adminonly",
        {},
        { memberPermissions: MEMBER_PERMISSIONS | PERMISSION.ManageChannels },
      ),
    );
    expect(embedOf(allowed).description).toBe("changed");
    expect(adminRuns).toBe(1);
  });

  it("buttons: a private prompt (type 4, ephemeral), then Confirm updates it in place (type 7)", async () => {
    // The person's own wallet, proved: reports are made for no other.
    const { address } = await t.prove({
      platform: "discord",
      user: { id: DEFAULT_USER.id, name: "tester" },
    });
    t.sim.giveNft(address);
    const answer = await post(fake.slashCommand("wallet", { wallet: address, spam: "exclude" }));
    const spam = buttonsOf(answer).find((b) => b.label === "Spam #1");
    const prompt = await post(fake.buttonClick(spam?.custom_id ?? ""));
    expect(prompt.body).toMatchObject({ type: 4, data: { flags: 64 } });
    const confirm = buttonsOf(prompt).find((b) => b.label === "Confirm report");
    const done = await post(fake.buttonClick(confirm?.custom_id ?? ""));
    expect(typeOf(done)).toBe(7);
    expect(embedOf(done).description).toMatch(/Reported as spam by /);
    expect(t.sim.reports).toHaveLength(1);
  });

  it("a slow button is deferred (type 6) and its answer follows through REST", async () => {
    const answer = await answerOf(
      fake.slashCommand("audience", { collection: t.sim.fixtures.collection }),
    );
    const sample = buttonsOf(answer).find((b) => b.label === "Sample wallets");
    await adapter.stop();
    await host.close();
    await serve({ deferAfterMs: 20 });
    t.sim.setFaults({ latencyMs: 300 });
    const click = fake.buttonClick(sample?.custom_id ?? "");
    expect((await post(click)).body).toEqual({ type: 6 });
    const page = await fake.waitFor(
      (r) =>
        (r.route === "createFollowUp" || r.route === "editWebhookMessage") &&
        r.params.token === click.token &&
        r.status === 200,
      10_000,
    );
    expect(embedOf(page).title).toMatch(/Sample wallets/);
  });

  it("an expired or forged button is refused privately", async () => {
    const callback = await post(fake.buttonClick("AAAAAAAAAAAAAAAAAAAAAA"));
    expect(callback.body).toMatchObject({ type: 4, data: { flags: 64 } });
    expect(embedOf(callback).description).toMatch(/expired/);
  });

  it("autocomplete answers up to 25 collections (type 8)", async () => {
    await post(fake.slashCommand("top", { metric: "volume", duration: "30d", limit: 25 }));
    await post(fake.slashCommand("top", { metric: "sales", duration: "30d", limit: 25 }));
    const callback = await post(fake.autocomplete("audience", { collection: "" }, "collection"));
    const body = callback.body as { type: number; data: { choices: { value: string }[] } };
    expect(body.type).toBe(8);
    expect(body.data.choices).toHaveLength(25);
    for (const choice of body.data.choices) expect(choice.value).toMatch(/^0x[0-9a-fA-F]{40}$/);
  });
});

describe("no gateway, alerts through REST", () => {
  it("never opens a gateway connection", async () => {
    await post(fake.slashCommand("help"));
    expect(fake.gatewayFrames).toHaveLength(0);
    expect(fake.requestsOf("getGatewayBot")).toHaveLength(0);
    expect(adapter.healthy()).toBe(true);
  });

  it("posts an alert with an enforced nonce: the same alert sent twice is one message", async () => {
    await adapter.sendToChat(fake.channelId, { text: "Minted" }, "alert-key-1");
    await adapter.sendToChat(fake.channelId, { text: "Minted" }, "alert-key-1");
    const sends = fake.requestsOf("createMessage", (r) => r.status === 200);
    expect(sends).toHaveLength(2);
    expect(sends[0]?.body).toMatchObject({ nonce: "alert-key-1", enforce_nonce: true });
    expect(sends[0]?.headers.authorization).toBe(`Bot ${fake.token}`);
    expect(
      fake.messages(fake.channelId).filter((m) => m.embeds[0]?.description === "Minted"),
    ).toHaveLength(1);
  });

  it("a channel that is gone pauses (permanent); a server error is retried (transient)", async () => {
    fake.failChannel(fake.channelId, { status: 404, code: 10003 });
    const gone = await adapter.sendToChat(fake.channelId, { text: "x" }).catch((e: unknown) => e);
    expect(adapter.classifySendError(gone)).toMatchObject({ kind: "permanent" });
    expect(adapter.classifySendError(new Error("socket hang up"))).toMatchObject({
      kind: "transient",
    });
  });
});

describe("start and stop", () => {
  it("refuses to start with a public key that is not the application's", async () => {
    const other = await startFakeDiscord();
    try {
      const wrong = new DiscordHttpAdapter({
        token: fake.token,
        publicKey: other.publicKey,
        runtime: t.runtime,
        logger: silentLogger(),
        apiUrl: fake.apiBase,
        interactions: new SourceUpdateDedup(t.store.updates, { source: "discord" }),
      });
      await expect(wrong.start()).rejects.toThrow(/DISCORD_PUBLIC_KEY is not the public key/);
      expect(wrong.healthy()).toBe(false);
    } finally {
      await other.close();
    }
  });

  it("registers the commands at start when asked", () => {
    expect(fake.commands(fake.guildId).map((c) => c.name)).toContain("whois");
  });

  it("once stopping, refuses interactions with 503 (another instance takes them) and is unhealthy", async () => {
    await adapter.stop();
    expect(adapter.healthy()).toBe(false);
    const delivery = await fake.postInteraction(endpoint, fake.slashCommand("help"));
    expect(delivery.status).toBe(503);
  });
});
