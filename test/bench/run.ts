import { writeFile } from "node:fs/promises";
import { cpus } from "node:os";
import { benchAlertFanOut, benchScaleOutFanOut } from "./alerts.bench.ts";
import { benchCharts } from "./charts.bench.ts";
import { benchColdNft } from "./cold-nft.bench.ts";
import { benchDispatchDuringFanOut } from "./dispatch-fanout.bench.ts";
import { benchEmbeddedStart } from "./embedded.bench.ts";
import { benchGateway } from "./gateway.bench.ts";
import { benchSlowBodies } from "./http.bench.ts";
import { benchInsights } from "./insights.bench.ts";
import { benchChartLoadAlone, benchFirstAnswer, benchProcess } from "./process.bench.ts";
import { markdownTable } from "./report.ts";
import { benchDispatch } from "./runtime.bench.ts";
import { benchVerify } from "./verify.bench.ts";

/**
 * Runs every benchmark in one process, prints the figures and writes bench-results.md. Names after
 * `npm run bench --` run only the suites with those keys (`npm run bench -- fanout3`) and only
 * print their figures; an unknown name lists the keys.
 */
async function main(): Promise<void> {
  const sections: string[] = [
    "# Benchmark results",
    "",
    `Node ${process.version}, ${cpus().length} cores (${cpus()[0]?.model ?? "unknown"}), ${new Date().toISOString()}.`,
    "Figures from one run; ratios compare measurements taken in that same run.",
    "",
  ];
  // [key for `npm run bench -- key`, title, run]
  const suites: [string, string, () => Promise<{ name: string; value: string }[]>][] = [
    [
      "process",
      "Process (compiled bot, fresh children); with BENCH_COMPARE_DIR, the start figures side by side with that checkout",
      benchProcess,
    ],
    [
      "chart-load",
      "The bot and its chart painter over 240 chart commands (compiled bot, console); with BENCH_COMPARE_DIR, side by side with that checkout",
      benchChartLoadAlone,
    ],
    [
      "first-answer",
      "Start to first answer and idle RSS (compiled bot, console, data service out of process); with BENCH_COMPARE_DIR, side by side with that checkout",
      benchFirstAnswer,
    ],
    [
      "embedded",
      "`npm start` with no settings (console, embedded simulator), fresh children; with BENCH_COMPARE_DIR, side by side with that checkout",
      benchEmbeddedStart,
    ],
    [
      "gateway10k",
      "Discord gateway with 10,000 guilds of 20 channels, 15 roles, 10 emojis, 2 stickers (compiled bot): before (Guilds intent, default caches) → now (no intent, no caches)",
      benchGateway,
    ],
    ["dispatch", "Warm commands through the production wiring", () => benchDispatch()],
    [
      "dispatch-fanout",
      "Warm commands, 16 in flight, while one mint fans out to 1,000 Telegram chats + 1,000 Discord channels, beside the same with no fan-out",
      () => benchDispatchDuringFanOut("child"),
    ],
    [
      "dispatch-fanout-fakes-here",
      "Warm commands, 16 in flight, during a fan-out to 2,000 chats, the platform fakes in the bot's process (their share of the loop)",
      () => benchDispatchDuringFanOut("in-process"),
    ],
    [
      "dispatch-shared",
      "Warm commands, scaled-out wiring (PostgreSQL + Redis)",
      () => benchDispatch(true),
    ],
    ["charts", "Charts (800x400 PNG)", benchCharts],
    [
      "verify",
      "Proving a wallet (/verify), the server's part: link, open, challenge, proof",
      benchVerify,
    ],
    [
      "insights",
      "Insights: 10,000 members with 15,000 proved wallets, the background reads of every wallet beside warm commands (production wiring, simulator in its own process)",
      benchInsights,
    ],
    [
      "http-slow-bodies",
      "HTTP host: 1,500 connections each stalling 1 byte short of a 256 KiB Discord interaction (compiled bot)",
      benchSlowBodies,
    ],
    [
      "cold-nft",
      "Cold /nft vs its three GETs made bare in parallel, service on loopback with no latency; with BENCH_COMPARE_DIR, side by side with that checkout",
      () => benchColdNft(0),
    ],
    [
      "cold-nft-20ms",
      "Cold /nft vs its three GETs made bare in parallel, service answering in 20 ms; with BENCH_COMPARE_DIR, side by side with that checkout",
      () => benchColdNft(20),
    ],
    [
      "cold-nft-shared",
      "Cold /nft vs its three GETs made bare in parallel, service answering in 20 ms, scaled-out wiring (PostgreSQL + Redis); with BENCH_COMPARE_DIR, side by side with that checkout",
      () => benchColdNft(20, true),
    ],
    [
      "fanout",
      "Alerts: one mint to 1,000 Telegram chats + 1,000 Discord channels (subscribed interleaved)",
      () => benchAlertFanOut({ telegramChats: 1000, discordChannels: 1000, order: "interleaved" }),
    ],
    [
      "fanout-by-platform",
      "Alerts: one mint to 1,000 Telegram chats + 1,000 Discord channels (subscribed platform by platform)",
      () => benchAlertFanOut({ telegramChats: 1000, discordChannels: 1000, order: "by-platform" }),
    ],
    [
      "fanout3",
      "Alerts: fan-out with 3 instances (compiled processes) on PostgreSQL + Redis, one mint to 1,000 Telegram chats + 1,000 Discord channels",
      () => benchScaleOutFanOut({ telegramChats: 1000, discordChannels: 1000, instances: 3 }),
    ],
    [
      "fanout3-kill",
      "Alerts: fan-out with 3 instances (compiled processes) on PostgreSQL + Redis, the delivering one killed (SIGKILL) mid fan-out",
      () =>
        benchScaleOutFanOut({
          telegramChats: 1000,
          discordChannels: 1000,
          instances: 3,
          stopLeader: "kill",
        }),
    ],
    [
      "fanout3-stop",
      "Alerts: fan-out with 3 instances (compiled processes) on PostgreSQL + Redis, the delivering one stopped (SIGSTOP) mid fan-out, as a dead instance on another host looks",
      () =>
        benchScaleOutFanOut({
          telegramChats: 1000,
          discordChannels: 1000,
          instances: 3,
          stopLeader: "stop",
          timeoutMs: 90_000,
        }),
    ],
  ];
  const wanted = process.argv.slice(2);
  const unknown = wanted.filter((key) => !suites.some(([k]) => k === key));
  if (unknown.length > 0) {
    process.stderr.write(
      `unknown benchmark ${unknown.join(", ")}; the keys: ${suites.map(([k]) => k).join(", ")}\n`,
    );
    process.exitCode = 2;
    return;
  }
  const chosen = wanted.length === 0 ? suites : suites.filter(([key]) => wanted.includes(key));
  // One table for the whole run, a row per figure, so results compare at a glance.
  const all: { suite: string; name: string; value: string }[] = [];
  for (const [, title, run] of chosen) {
    process.stdout.write(`running: ${title}…\n`);
    const rows = await run();
    process.stdout.write(`${markdownTable(title, rows)}\n`);
    all.push(...rows.map((row) => ({ suite: title, ...row })));
  }
  sections.push(
    "| suite | measure | value |",
    "|---|---|---|",
    ...all.map((row) => `| ${row.suite} | ${row.name} | ${row.value} |`),
    "",
  );
  // A run of some suites does not overwrite a whole run's table.
  if (wanted.length > 0) return;
  await writeFile("bench-results.md", sections.join("\n"));
  process.stdout.write("written: bench-results.md\n");
}

void main();
