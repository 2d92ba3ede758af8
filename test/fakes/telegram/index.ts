export type { UploadedFile } from "./body.ts";
export { EntityParseError, type ParsedHtml, parseTelegramHtml } from "./html.ts";
export { type RateLimits, TELEGRAM_RATE_LIMITS } from "./rate-limit.ts";
export {
  type AdminRights,
  anonymousAdmin,
  channelBot,
  channelChat,
  type FailOptions,
  type FakeFailure,
  type FakeTelegram,
  type FakeTelegramOptions,
  groupChat,
  type MediaPermissions,
  type MemberStatus,
  type NewUpdate,
  type PendingJoinRequest,
  privateChat,
  type RecordedCall,
  startFakeTelegram,
  supergroupChat,
  type TelegramErrorBody,
  telegramErrors,
  user,
} from "./server.ts";
