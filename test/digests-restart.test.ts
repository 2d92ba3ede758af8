/**
 * Scheduled digests across restarts: bots built as `npm start` builds them (embedded simulator,
 * console chat), one after another on one DATA_DIR, with the clock injected. A slot posts once
 * however many times the bot starts after it; a slot whose time passed while no bot ran is posted
 * once at the next start, saying so with its date; older missed slots are not posted.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough, Writable } from "node:stream";
import { afterAll, describe, expect, it } from "vitest";
import { type Bot, createBot } from "../src/bot.ts";
import { parseConfig } from "../src/config.ts";
import { digestStoreOf } from "../src/digests/store.ts";
import { silentLogger } from "../src/log.ts";

const dataDir = mkdtempSync(join(tmpdir(), "bot-digests-"));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

async function until(check: () => boolean, what: string, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** A bot on the shared DATA_DIR whose clock reads `now`; its console output is collected. */
async function startBot(now: number) {
  const input = new PassThrough();
  const printed: string[] = [];
  const output = new Writable({
    write(chunk, _encoding, callback) {
      printed.push(String(chunk));
      callback();
    },
  });
  const config = parseConfig({
    DATA_DIR: dataDir,
    SIMULATOR_MINT_INTERVAL_MS: "0",
    DIGEST_TICK_MS: "50",
    API_BUDGET_PER_SECOND: "100000",
    API_BUDGET_BURST: "100000",
  });
  const bot: Bot = await createBot(config, {
    logger: silentLogger(),
    input,
    output,
    now: () => now,
  });
  await bot.start();
  await until(() => bot.poller.isLeader, "the poller lease");
  const digests = () =>
    printed.filter((text) => text.startsWith("[alert]") && text.includes("digest for"));
  return {
    bot,
    digests,
    async type(line: string): Promise<string> {
      const before = printed.length;
      input.write(`${line}\n`);
      await until(() => printed.length > before, `an answer to ${line}`);
      return printed.slice(before).join("");
    },
    /** A few of the scheduler's ticks, and one more awaited. */
    async settle(): Promise<void> {
      await new Promise((resolve) => setTimeout(resolve, 300));
      await bot.digests.tick();
    },
    async stop() {
      input.end();
      await bot.finished;
      await bot.stop();
    },
  };
}

describe("digests across restarts", () => {
  it("posts a slot once across restarts, and a missed slot once at start, late, with its date", async () => {
    // Monday 23 Nov 2026, 08:00 in Berlin.
    const first = await startBot(Date.parse("2026-11-23T07:00:00Z"));
    expect(await first.type("/digest add daily 09:00 Europe/Berlin top volume 1d")).toContain(
      "added",
    );
    await first.settle();
    expect(first.digests()).toEqual([]);
    await first.stop();

    // 09:00:05 Berlin: the slot is due.
    const second = await startBot(Date.parse("2026-11-23T08:00:05Z"));
    await until(() => second.digests().length > 0, "the 09:00 digest");
    await second.settle();
    expect(second.digests()).toHaveLength(1);
    expect(second.digests()[0]).toContain("Daily digest for 23 Nov 2026");
    expect(second.digests()[0]).not.toContain("posted late");
    expect(second.digests()[0]).toContain("New collections minted");
    await second.stop();

    // Restarted after the slot was posted: not again.
    const third = await startBot(Date.parse("2026-11-23T08:30:00Z"));
    await third.settle();
    expect(third.digests()).toEqual([]);
    await third.stop();

    // Down over Tuesday's and Wednesday's 09:00; started Wednesday 10:00 Berlin: Wednesday's
    // slot, once, late; Tuesday's is not posted.
    const fourth = await startBot(Date.parse("2026-11-25T09:00:00Z"));
    await until(() => fourth.digests().length > 0, "the missed digest");
    await fourth.settle();
    expect(fourth.digests()).toHaveLength(1);
    expect(fourth.digests()[0]).toContain(
      "Daily digest for 25 Nov 2026 (posted late: the bot was down at 09:00)",
    );
    expect(await fourth.bot.metrics.registry.metrics()).toMatch(
      /^bot_digests_total\{outcome="late"\} 1$/m,
    );
    await fourth.stop();

    const fifth = await startBot(Date.parse("2026-11-25T09:30:00Z"));
    await fifth.settle();
    expect(fifth.digests()).toEqual([]);
    // The store holds one sent run per posted slot, and none for Tuesday.
    const [digest] = await digestStoreOf(fifth.bot.store).all();
    expect(
      (await digestStoreOf(fifth.bot.store).runs(digest?.id ?? 0)).map((run) => [
        new Date(run.slot).toISOString(),
        run.status,
      ]),
    ).toEqual([
      ["2026-11-25T08:00:00.000Z", "sent"],
      ["2026-11-23T08:00:00.000Z", "sent"],
    ]);
    await fifth.stop();
  });
});
