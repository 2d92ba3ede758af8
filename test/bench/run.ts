import { writeFile } from "node:fs/promises";
import { cpus } from "node:os";
import { benchAlertFanOut } from "./alerts.bench.ts";
import { benchCharts } from "./charts.bench.ts";
import { benchProcess } from "./process.bench.ts";
import { markdownTable } from "./report.ts";
import { benchColdNft, benchDispatch } from "./runtime.bench.ts";

/** Runs every benchmark in one process, prints the figures and writes bench-results.md. */
async function main(): Promise<void> {
  const sections: string[] = [
    "# Benchmark results",
    "",
    `Node ${process.version}, ${cpus().length} cores (${cpus()[0]?.model ?? "unknown"}), ${new Date().toISOString()}.`,
    "Figures from one run; ratios compare measurements taken in that same run.",
    "",
  ];
  const suites: [string, () => Promise<{ name: string; value: string }[]>][] = [
    ["Process (compiled bot, fresh children)", benchProcess],
    ["Warm commands through the production wiring", () => benchDispatch()],
    ["Warm commands, scaled-out wiring (PostgreSQL + Redis)", () => benchDispatch(true)],
    ["Charts (800x400 PNG)", benchCharts],
    [
      "Cold /nft vs its two GETs made bare in parallel, service on loopback with no latency",
      () => benchColdNft(0),
    ],
    [
      "Cold /nft vs its two GETs made bare in parallel, service answering in 20 ms",
      () => benchColdNft(20),
    ],
    [
      "Cold /nft vs its two GETs made bare in parallel, service answering in 20 ms, scaled-out wiring (PostgreSQL + Redis)",
      () => benchColdNft(20, true),
    ],
    [
      "Alerts: one mint to 1,000 Telegram chats + 1,000 Discord channels (subscribed interleaved)",
      () => benchAlertFanOut({ telegramChats: 1000, discordChannels: 1000, order: "interleaved" }),
    ],
    [
      "Alerts: one mint to 1,000 Telegram chats + 1,000 Discord channels (subscribed platform by platform)",
      () => benchAlertFanOut({ telegramChats: 1000, discordChannels: 1000, order: "by-platform" }),
    ],
  ];
  // One table for the whole run, a row per figure, so results compare at a glance.
  const all: { suite: string; name: string; value: string }[] = [];
  for (const [title, run] of suites) {
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
  await writeFile("bench-results.md", sections.join("\n"));
  process.stdout.write("written: bench-results.md\n");
}

void main();
