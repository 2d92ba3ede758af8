import type { Logger } from "../log.ts";
import type { ActionStore } from "./actions.ts";
import { type ChartDrawer, chartable } from "./charts.ts";
import type { Invocation } from "./command.ts";
import type { ButtonAction, ButtonSpec, RenderableReply, Reply } from "./reply.ts";

/**
 * Buttons whose actions were stored while the command still read its data, by the very spec
 * object the reply carries: where they were stored, the action as stored (with its chain) and,
 * once stored, their id (undefined when the store failed: the reply then stores them itself, or
 * goes without).
 */
export type EarlyButtons = Map<
  ButtonSpec,
  { chatId: string; userId: string; action: ButtonAction; id: Promise<string | undefined> }
>;

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

  /**
   * Starts storing `buttons`' actions (as `action` gives them: with the chain) for a reply to
   * `target`, recording each in `into`; materialize() takes their ids from there. The store runs
   * on the next turn of the event loop, so the reads the command started first are sent before
   * SQLite's synchronous commit, and the commit happens while they are in flight.
   */
  storeEarly(
    buttons: readonly ButtonSpec[],
    target: Pick<Invocation, "platform" | "chat" | "user">,
    action: (button: ButtonSpec) => ButtonAction,
    into: EarlyButtons,
  ): void {
    const fresh = buttons.filter((button) => !into.has(button));
    if (fresh.length === 0) return;
    const chatId = target.chat.id;
    const userId = target.user.id;
    const expiresAt = this.options.now().getTime() + this.options.buttonTtlSeconds * 1000;
    const actions = fresh.map(action);
    const stored = new Promise<void>((resolve) => setImmediate(resolve))
      .then(() =>
        this.options.actions.putMany(
          actions.map((stored) => ({
            platform: target.platform,
            chatId,
            userId,
            action: stored,
            expiresAt,
          })),
        ),
      )
      .then(
        (ids) => ids,
        (error: unknown) => {
          this.options.logger.warn(
            { err: error, platform: target.platform, chat: chatId },
            "could not store button actions ahead of the reply; storing them with it",
          );
          return undefined;
        },
      );
    for (const [i, button] of fresh.entries())
      into.set(button, {
        chatId,
        userId,
        action: actions[i] as ButtonAction,
        id: stored.then((ids) => ids?.[i]),
      });
  }

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
   * (a full disk), the reply goes without buttons, with a note saying so. Buttons in `early`
   * stored for the same chat and person already (storeEarly) are not stored again.
   */
  async materialize(
    reply: Reply,
    target: Pick<Invocation, "platform" | "chat"> & {
      user?: Pick<Invocation["user"], "id" | "privateChatId">;
    },
    early?: EarlyButtons,
  ): Promise<RenderableReply> {
    const { buttons, ...drawn } = await this.drawChart(reply, this.options.logger);
    const { mark } = this.options;
    const rest = mark ? { ...drawn, footer: joinFooter(drawn.footer, mark) } : drawn;
    if (!buttons || buttons.length === 0) return rest;
    const chatId = (reply.confidential && target.user?.privateChatId) || target.chat.id;
    const expiresAt = this.options.now().getTime() + this.options.buttonTtlSeconds * 1000;
    const userId = target.user?.id ?? `alert:${target.chat.id}`;
    // Those stored ahead for this chat and person; the rest (or all, the early store having
    // failed) are stored now, in one transaction.
    const ids: (string | undefined)[] = await Promise.all(
      buttons.map((button) => {
        const ahead = early?.get(button);
        return ahead && ahead.chatId === chatId && ahead.userId === userId ? ahead.id : undefined;
      }),
    );
    const missing = buttons.flatMap((_button, i) => (ids[i] === undefined ? [i] : []));
    try {
      if (missing.length > 0) {
        const stored = await this.options.actions.putMany(
          missing.map((i) => ({
            platform: target.platform,
            chatId,
            userId,
            action:
              early?.get(buttons[i] as ButtonSpec)?.action ?? (buttons[i] as ButtonSpec).action,
            expiresAt,
          })),
        );
        for (const [k, i] of missing.entries()) ids[i] = stored[k];
      }
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
