import { formatTimestamp } from "../../src/core/format.ts";

/**
 * How a watch or digest paused by a refusing chat is shown: since when, the platform's reason,
 * and what resumes it (the runtime resumes a chat's paused watches and digests once the bot is
 * used there; a chat that still refuses pauses them again).
 */
export function pausedNote(
  thing: { pausedAt: number | null; pauseReason: string | null },
  now: Date,
): string | undefined {
  if (thing.pausedAt === null) return undefined;
  const since = formatTimestamp(new Date(thing.pausedAt).toISOString(), now);
  return `paused ${since}: the chat refused the bot (${thing.pauseReason ?? "no reason given"}); using the bot here resumes it`;
}
