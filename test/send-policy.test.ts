import { describe, expect, it } from "vitest";
import { backoffMs, sendStep } from "../src/outbound/policy.ts";
import type { SendFailure } from "../src/outbound/types.ts";

describe("send policy", () => {
  it("a rate limit waits exactly its Retry-After and never counts a try", () => {
    expect(sendStep({ kind: "rate_limited", retryAfterMs: 4_500 }, 7)).toEqual({
      step: "retry",
      afterMs: 4_500,
      countsTry: false,
      reason: "rate limited",
    });
    expect(sendStep({ kind: "rate_limited", retryAfterMs: -1 }, 0)).toMatchObject({ afterMs: 0 });
  });

  it("a transient failure backs off, doubling with each try, and counts it", () => {
    const step = (attempts: number) =>
      sendStep({ kind: "transient", reason: "502" }, attempts, { baseMs: 1_000, jitter: false });
    expect(step(0)).toEqual({ step: "retry", afterMs: 1_000, countsTry: true, reason: "502" });
    expect(step(3)).toMatchObject({ afterMs: 8_000 });
    expect(step(40)).toMatchObject({ afterMs: 15 * 60_000 });
    for (let i = 0; i < 50; i++) {
      const jittered = backoffMs(2, { baseMs: 1_000 });
      expect(jittered).toBeGreaterThanOrEqual(3_000);
      expect(jittered).toBeLessThanOrEqual(5_000);
    }
  });

  it("a move is followed; a refusal pauses with the platform's reason", () => {
    expect(sendStep({ kind: "moved", newChatId: "-100123" }, 0)).toEqual({
      step: "follow",
      newChatId: "-100123",
      reason: "the chat moved to -100123",
    });
    expect(
      sendStep({ kind: "permanent", reason: "Telegram: Forbidden: bot was kicked" }, 2),
    ).toEqual({ step: "pause", reason: "Telegram: Forbidden: bot was kicked" });
  });

  it("a kind it does not know is refused loudly, never retried silently", () => {
    const unknown = { kind: "exploded" } as unknown as SendFailure;
    expect(() => sendStep(unknown, 0)).toThrow(/no send step/);
  });
});
