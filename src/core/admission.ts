import { chatKey, type Invocation, type Platform, personKey } from "./command.ts";
import { RateLimiter, type Admission as Taken } from "./rate-limit.ts";
import { type RenderableReply, userErrorReply } from "./reply.ts";

type Limit = { burst: number; perMinute: number };

/**
 * Whether an invocation may run now: the person's limit first, then the group's. One member runs
 * out long before the group does, so others can still ask. Each overrun is refused once; the
 * commands after it within the same wait get a quiet refusal, so a flood is not answered by a
 * flood.
 */
export class Admission {
  private readonly limiter: RateLimiter;
  private readonly chatLimiters: Partial<Record<Platform, RateLimiter>> = {};

  constructor(
    perPerson: Limit,
    perChat: Partial<Record<Platform, Limit>> | undefined,
    monotonic?: () => number,
  ) {
    this.limiter = new RateLimiter(perPerson.burst, perPerson.perMinute, monotonic);
    for (const [platform, limit] of Object.entries(perChat ?? {})) {
      if (limit)
        this.chatLimiters[platform as Platform] = new RateLimiter(
          limit.burst,
          limit.perMinute,
          monotonic,
        );
    }
  }

  /** undefined when the invocation may run, else the refusal to answer with. */
  admit(invocation: Invocation): RenderableReply | undefined {
    // The console's only person is the bot's operator: there is nobody to protect the service from.
    if (invocation.platform === "console") return undefined;
    const person = this.limiter.take(personKey(invocation));
    if (!person.allowed) return refusal(person, "You are sending commands quickly");
    const chatLimiter = this.chatLimiters[invocation.platform];
    if (!chatLimiter || invocation.chat.kind === "private") return undefined;
    const chat = chatLimiter.take(chatKey(invocation));
    if (!chat.allowed) return refusal(chat, "This chat is sending me many commands");
    return undefined;
  }
}

function refusal(taken: Taken & { allowed: false }, what: string): RenderableReply {
  const reply = userErrorReply(`${what}: try again in ${Math.ceil(taken.waitMs / 1000)} s.`);
  return taken.repeated ? { ...reply, quiet: true } : reply;
}
