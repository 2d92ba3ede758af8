import type { Context } from "grammy";
import { bounded, timeoutSignal } from "../../within.ts";
import { apiSignal, type TelegramGateMembership } from "./gates.ts";

/** How long /verify waits for a group's title (a nicety: the link goes out without it). */
const WAIT_MS = 3_000;
/** A group's title is asked again after this long. */
const KEPT_MS = 10 * 60_000;

/**
 * Groups' titles for /verify's page (issue 37), given only to someone Telegram says is in the
 * group: the payload that names the group is typed by anyone, and a stranger must not learn a
 * private group's title. Asked within 3 s in all; none when Telegram does not say. A title is
 * kept 10 minutes (everyone pressing a group's button asks for the same one).
 */
export class GroupTitles {
  private readonly kept = new Map<string, { title: string | undefined; until: number }>();

  constructor(private readonly membership: TelegramGateMembership) {}

  async of(ctx: Context, groupId: string): Promise<string | undefined> {
    const userId = ctx.from?.id;
    if (userId === undefined) return undefined;
    // Not AbortSignal.timeout here: see timeoutSignal.
    const signal = timeoutSignal(WAIT_MS);
    const asked = (async () => {
      if (!(await this.membership.isMember(groupId, String(userId), signal))) return undefined;
      const known = this.kept.get(groupId);
      if (known && known.until > Date.now()) return known.title;
      const chat = await ctx.api.getChat(groupId, apiSignal(signal));
      const title = "title" in chat && chat.title ? chat.title : undefined;
      if (this.kept.size >= 1_000) this.kept.clear();
      this.kept.set(groupId, { title, until: Date.now() + KEPT_MS });
      return title;
    })();
    return bounded(asked, WAIT_MS, "the group's title").catch(() => undefined);
  }
}
