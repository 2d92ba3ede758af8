/**
 * The platform-neutral answer a command gives. It is data: every string in it is plain text
 * (never markup), and the renderers in `src/render` escape it for their platform and enforce
 * that platform's limits.
 */

export interface ReplyField {
  name: string;
  value: string;
  /** A hint that the field may sit beside others (Discord inline fields). */
  inline?: boolean;
}

/** A monospace table. Cells are plain text; renderers pad and truncate them. */
export interface ReplyTable {
  columns: string[];
  rows: string[][];
  /** Per column; default "left". Numbers read better right-aligned. */
  align?: ("left" | "right")[];
}

export type ReplyImage =
  | { kind: "png"; data: Uint8Array; name: string; alt: string }
  | { kind: "url"; url: string; alt: string };

/**
 * A chart a command asks for: what it shows, not how. The renderer side draws it into the reply's
 * PNG image when the reply is materialized (see ChartDrawer in charts.ts); a chart that cannot be
 * drawn leaves the reply without its picture. `subject` names what the chart is about within the
 * command ("owners:0xabc…:30d"): with a hash of the title and data, it keys the chart cache.
 */
export type ChartSpec =
  | {
      kind: "owners-history";
      subject: string;
      title: string;
      /** Owner count per day; counts are int64 decimal strings. */
      points: { timestamp: string; count: string }[];
    }
  | {
      kind: "ranking";
      subject: string;
      title: string;
      /** Title of the value axis. */
      axis: string;
      /**
       * Highest first; values are decimal strings, plotted approximately. `rank` is the item's
       * place in the whole list (11 for the first bar of a second page of 10), drawn before it.
       */
      items: { label: string; value: string | undefined; rank?: number | undefined }[];
    }
  | {
      kind: "audience";
      subject: string;
      title: string;
      /** Share in percent; change as shown ("+3", "-1"), its sign colours the bar. */
      rows: { label: string; share: number; change: string }[];
    }
  | {
      kind: "lines";
      subject: string;
      title: string;
      /** Title of the value axis. */
      axis: string;
      /** The x axis's labels (days), oldest first: "Nov 28". */
      labels: string[];
      /** One value per label, null where the series has no point that day; named in the legend. */
      series: { name: string; values: (number | null)[] }[];
    }
  | {
      kind: "compare";
      subject: string;
      title: string;
      /** Title of the value axis. */
      axis: string;
      /** The two groups' names, as the legend shows them: ["Your members", "Azuki owners"]. */
      groups: [string, string];
      /** A category and each group's value in it, side by side; undefined draws no bar. */
      rows: { label: string; values: [number | undefined, number | undefined] }[];
    };

export interface ReplyFile {
  name: string;
  contentType: string;
  data: Uint8Array;
}

export interface ReplyLink {
  label: string;
  url: string;
}

export type ButtonStyle = "primary" | "secondary" | "success" | "danger";

/**
 * What a button does, stored server-side under a short random id (never sent to the platform).
 * `command` + `action` name a handler in that command's `actions`; `payload` is its input.
 */
export interface ButtonAction {
  command: string;
  action: string;
  payload: Record<string, string | number | boolean | null>;
}

/** A button as a command returns it: the action is stored by the runtime when the reply goes out. */
export interface ButtonSpec {
  label: string;
  action: ButtonAction;
  style?: ButtonStyle;
}

/** A button as a renderer sees it: only the short id travels to the platform. */
export interface RenderedButton {
  label: string;
  id: string;
  style?: ButtonStyle;
}

interface ReplyBase {
  title?: string | undefined;
  /** Link of the title. */
  url?: string | undefined;
  text?: string | undefined;
  fields?: ReplyField[] | undefined;
  table?: ReplyTable | undefined;
  /** Extra links shown as a line under the text (explorer, transaction, marketplace). */
  links?: ReplyLink[] | undefined;
  /**
   * A button that opens a web address (Telegram's URL button: a group's way into the person's
   * private chat with the bot); where a platform has no such button it is shown with the links.
   */
  openButton?: ReplyLink | undefined;
  image?: ReplyImage | undefined;
  files?: ReplyFile[] | undefined;
  footer?: string | undefined;
  /** Only the invoker sees it (Discord ephemeral; elsewhere a plain reply). */
  private?: boolean | undefined;
  /**
   * Only the invoker may ever see it (other people's names, wallets, notes), unlike `private`,
   * which a shared chat may show to all. Where a chat cannot hide a reply (a Telegram group), it
   * goes to the person's private chat and the chat gets a note naming `what` ("the spam
   * reports"); Discord shows it ephemeral.
   */
  confidential?: { what: string } | undefined;
  /**
   * A refusal already given once in this window (rate limits): text platforms send nothing, so a
   * flood of commands is not answered by a flood; Discord, which must answer every interaction,
   * shows it privately.
   */
  quiet?: boolean | undefined;
  /** For button clicks: replace the message the button sits under instead of posting anew. */
  replaceOriginal?: boolean | undefined;
  /** Tone of the answer, so renderers can colour an embed or prefix an icon. */
  tone?: "info" | "success" | "warning" | "error" | undefined;
}

export interface Reply extends ReplyBase {
  buttons?: ButtonSpec[] | undefined;
  /**
   * The chains (ids) the answer is about when they are not the invocation's (a gate criterion
   * `on base` tested from a chat on ethereum): the footer names these instead.
   */
  chainsShown?: readonly string[] | undefined;
  /** Drawn into `image` when the reply is materialized. */
  chart?: ChartSpec | undefined;
}

export interface RenderableReply extends ReplyBase {
  buttons?: RenderedButton[] | undefined;
}

/** What a person gets for a refusal they can act on: a warning only they see. */
export function userErrorReply(text: string): RenderableReply {
  return { text, tone: "warning", private: true };
}

/** The links shown under a reply, with its open button where a platform has no such button. */
export function shownLinks(reply: ReplyBase): ReplyLink[] {
  return [...(reply.links ?? []), ...(reply.openButton ? [reply.openButton] : [])];
}
