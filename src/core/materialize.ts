import type { Logger } from "../log.ts";
import type { ActionStore } from "./actions.ts";
import { type ChartDrawer, chartable } from "./charts.ts";
import type { Invocation } from "./command.ts";
import type { RenderableReply, Reply } from "./reply.ts";

/**
 * Said in the footer of every reply that goes out while the data comes from the embedded
 * simulator (answers, alerts, digests, watch posts): its holders and sales are made up.
 */
export const SIMULATED_DATA_MARK = "simulated data";

/** Said under a reply whose buttons could not be stored, so nobody looks for them. */
const BUTTONS_LEFT_OUT = "Buttons left out: the bot cannot store them right now.";

/**
 * A reply made ready for the renderers: its chart drawn (through the render side's port) and the
 * actions behind its buttons stored, the renderers getting only their ids.
 */
export class ReplyMaterializer {
  constructor(
    private readonly options: {
      actions: ActionStore;
      charts: ChartDrawer;
      logger: Logger;
      buttonTtlSeconds: number;
      now: () => Date;
      /** Added to every reply's footer (SIMULATED_DATA_MARK on the embedded simulator). */
      mark?: string | undefined;
    },
  ) {}

  async drawChart(reply: Reply, logger: Logger): Promise<Omit<Reply, "chart">> {
    const { chart, ...rest } = reply;
    // Commands say in words why they show no chart; this only keeps an empty plot from going out.
    if (!chart || !chartable(chart)) return rest;
    return { ...rest, image: await this.options.charts.draw(chart, logger) };
  }

  /**
   * Draws the reply's chart if it still has one, stores the actions behind the reply's buttons
   * (one transaction) and gives the renderers only their ids. The buttons belong to the chat the
   * reply goes to (a confidential one's is the private chat) and count against the invoking
   * person's cap; an alert's, with nobody invoking, against the chat's. If they cannot be stored
   * (a full disk), the reply goes without buttons, with a note saying so.
   */
  async materialize(
    reply: Reply,
    target: Pick<Invocation, "platform" | "chat"> & {
      user?: Pick<Invocation["user"], "id" | "privateChatId">;
    },
  ): Promise<RenderableReply> {
    const { buttons, ...drawn } = await this.drawChart(reply, this.options.logger);
    const { mark } = this.options;
    const rest = mark ? { ...drawn, footer: joinFooter(drawn.footer, mark) } : drawn;
    if (!buttons || buttons.length === 0) return rest;
    const chatId = (reply.confidential && target.user?.privateChatId) || target.chat.id;
    const expiresAt = this.options.now().getTime() + this.options.buttonTtlSeconds * 1000;
    const userId = target.user?.id ?? `alert:${target.chat.id}`;
    let ids: string[];
    try {
      ids = await this.options.actions.putMany(
        buttons.map((button) => ({
          platform: target.platform,
          chatId,
          userId,
          action: button.action,
          expiresAt,
        })),
      );
    } catch (error) {
      this.options.logger.warn(
        { err: error, platform: target.platform, chat: chatId },
        "could not store button actions; the reply goes without buttons",
      );
      return { ...rest, footer: joinFooter(rest.footer, BUTTONS_LEFT_OUT) };
    }
    return {
      ...rest,
      buttons: buttons.map((button, i) => ({
        label: button.label,
        id: ids[i] ?? "",
        ...(button.style ? { style: button.style } : {}),
      })),
    };
  }
}

/** A footer with one more part after what it says already. */
function joinFooter(footer: string | undefined, part: string): string {
  return [footer, part].filter(Boolean).join(" · ");
}
