import { TelegramAdapter, type TelegramAdapterOptions } from "../src/adapters/telegram/index.ts";
import type { Runtime } from "../src/core/runtime.ts";
import { silentLogger } from "../src/log.ts";
import type { FakeTelegram } from "./fakes/telegram/index.ts";

// Apart from test/helpers.ts: grammY and its plugins load only in the files that use Telegram.

/** The real Telegram adapter on a fake Bot API, unthrottled, with quiet logs; tests override the rest. */
export function telegramAdapterFor(
  fake: FakeTelegram,
  runtime: Runtime,
  options: Partial<TelegramAdapterOptions> = {},
): TelegramAdapter {
  return new TelegramAdapter({
    token: fake.token,
    apiRoot: fake.apiRoot,
    botInfo: fake.botInfo,
    runtime,
    logger: silentLogger(),
    throttle: false,
    ...options,
  });
}
