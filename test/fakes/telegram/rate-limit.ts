/**
 * Telegram's sending limits, which it does not publish exactly; the FAQ gives about one message a
 * second per chat, 20 a minute per group and 30 a second overall. The fake enforces them strictly
 * (no bursts) so that a bot that respects them passes against the real thing too.
 */
export interface RateLimits {
  perChatPerSecond: number;
  perGroupPerMinute: number;
  globalPerSecond: number;
}

export const TELEGRAM_RATE_LIMITS: RateLimits = {
  perChatPerSecond: 1,
  perGroupPerMinute: 20,
  globalPerSecond: 30,
};

interface Window {
  times: number[];
  size: number;
  spanMs: number;
}

function waitMs(window: Window, now: number): number {
  while (window.times.length > 0 && window.times[0]! <= now - window.spanMs) window.times.shift();
  if (window.times.length < window.size) return 0;
  return window.times[0]! + window.spanMs - now;
}

export class SendRateLimiter {
  private readonly global: Window;
  private readonly chats = new Map<string, Window>();
  private readonly groups = new Map<string, Window>();

  constructor(
    private readonly limits: RateLimits,
    private readonly now: () => number,
  ) {
    this.global = { times: [], size: limits.globalPerSecond, spanMs: 1000 };
  }

  private windows(chatKey: string, isGroup: boolean): Window[] {
    let chat = this.chats.get(chatKey);
    if (!chat) {
      chat = { times: [], size: this.limits.perChatPerSecond, spanMs: 1000 };
      this.chats.set(chatKey, chat);
    }
    const windows = [this.global, chat];
    if (isGroup) {
      let group = this.groups.get(chatKey);
      if (!group) {
        group = { times: [], size: this.limits.perGroupPerMinute, spanMs: 60_000 };
        this.groups.set(chatKey, group);
      }
      windows.push(group);
    }
    return windows;
  }

  /** Whole seconds to wait before a send to this chat is allowed (0: now), as `retry_after`. */
  retryAfter(chatKey: string, isGroup: boolean): number {
    const now = this.now();
    const wait = Math.max(...this.windows(chatKey, isGroup).map((w) => waitMs(w, now)));
    return wait <= 0 ? 0 : Math.ceil(wait / 1000);
  }

  record(chatKey: string, isGroup: boolean): void {
    const now = this.now();
    for (const window of this.windows(chatKey, isGroup)) window.times.push(now);
  }
}
