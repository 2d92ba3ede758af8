import { chatKey, type Invocation, type Platform, personKey } from "./command.ts";
import {
  type KeyedLimiter,
  type Limit,
  type LimiterFactory,
  RateLimiter,
  type Admission as Taken,
} from "./rate-limit.ts";
import { type RenderableReply, userErrorReply } from "./reply.ts";

/**
 * Whether an invocation may run now: the person's limit first, then the group's. One member runs
 * out long before the group does, so others can still ask. Each overrun is refused once; the
 * commands after it within the same wait get a quiet refusal, so a flood is not answered by a
 * flood.
 *
 * The limiters are this process's own unless `limiters` builds others (shared over Redis, so a
 * person's limit holds across every instance of the bot).
 */
export class Admission {
  private readonly limiter: KeyedLimiter;
  private readonly chatLimiters: Partial<Record<Platform, KeyedLimiter>> = {};

  constructor(
    perPerson: Limit,
    perChat: Partial<Record<Platform, Limit>> | undefined,
    monotonic?: () => number,
    limiters?: LimiterFactory,
  ) {
    const build: LimiterFactory =
      limiters ?? ((_scope, limit) => new RateLimiter(limit.burst, limit.perMinute, monotonic));
    this.limiter = build("person", perPerson);
    for (const [platform, limit] of Object.entries(perChat ?? {})) {
      if (limit) this.chatLimiters[platform as Platform] = build(`chat:${platform}`, limit);
    }
  }

  /** undefined when the invocation may run, else the refusal to answer with. */
  async admit(invocation: Invocation): Promise<RenderableReply | undefined> {
    // The console's only person is the bot's operator: there is nobody to protect the service from.
    if (invocation.platform === "console") return undefined;
    const chatLimiter =
      invocation.chat.kind === "private" ? undefined : this.chatLimiters[invocation.platform];
    // Both in one step where the limiters can (one Redis round trip): the chat's token is still
    // taken only when the person's was.
    const both = chatLimiter
      ? this.limiter.takeThen?.(personKey(invocation), chatLimiter, chatKey(invocation))
      : undefined;
    const [person, together] = both ? await both : [await this.limiter.take(personKey(invocation))];
    if (!person.allowed) return refusal(person, "You are sending commands quickly");
    if (!chatLimiter) return undefined;
    const chat = together ?? (await chatLimiter.take(chatKey(invocation)));
    if (!chat.allowed) return refusal(chat, "This chat is sending me many commands");
    return undefined;
  }
}

function refusal(taken: Taken & { allowed: false }, what: string): RenderableReply {
  const reply = userErrorReply(`${what}: try again in ${Math.ceil(taken.waitMs / 1000)} s.`);
  return taken.repeated ? { ...reply, quiet: true } : reply;
}
