import {
  clearScreenDown,
  createInterface,
  cursorTo,
  type Interface,
  moveCursor,
} from "node:readline";
import type { Invocation } from "../../core/command.ts";
import type { RenderableReply } from "../../core/reply.ts";
import { newInvocationId, type Runtime } from "../../core/runtime.ts";
import type { HttpRoute } from "../../http/host.ts";
import type { Logger } from "../../log.ts";
import type { SendFailure } from "../../outbound/types.ts";
import { type ConsoleContext, renderConsole, type SavedFile } from "../../render/console.ts";
import type { ChatAdapter, PrivateTarget } from "../types.ts";
import { ButtonNumbers } from "./buttons.ts";
import { ExportFolder } from "./exports.ts";
import { consoleGateMembership } from "./gates.ts";

export interface ConsoleAdapterOptions {
  runtime: Runtime;
  logger: Logger;
  input?: NodeJS.ReadableStream;
  output?: NodeJS.WritableStream;
  /** Show a prompt and keep history; default: whether input is a terminal. */
  interactive?: boolean;
  /** Where pictures and files the chat is sent are saved, kept after the run (DATA_DIR/exports). */
  exportDir: string;
  /**
   * Printed first: what the bot runs against, where its logs go, how to leave. A function is
   * called when the chat starts: the HTTP host listens by then, on a port it may have been given.
   */
  greeting?: string | (() => string);
}

/** Words that end the chat like the end of input does (Ctrl+D). */
const LEAVE = /^\/?(?:quit|exit)$/i;

/**
 * A chat on stdin/stdout: one command per line, with or without the slash; buttons are pressed by
 * typing !1, !2; /quit or exit leaves. It runs on the same runtime as Discord and Telegram. Piped
 * input is processed line by line in order, and `done` resolves after the last reply is printed.
 * Pictures and files (a CSV export) are saved under DATA_DIR/exports, and their paths printed.
 * Button numbers go on from message to message, so an alert printed in between does not change
 * what a number on screen presses. On a terminal, what is printed unasked (an alert, a digest)
 * goes above the prompt, which is drawn again with what was being typed.
 */
export class ConsoleAdapter implements ChatAdapter {
  readonly platform = "console";
  readonly label = "the console";
  readonly connectsTo = undefined;
  readonly routes: readonly HttpRoute[] = [];
  readonly maxInFlight = 1;
  private readonly output: NodeJS.WritableStream;
  private readline: Interface | undefined;
  /** Output is a terminal the prompt is drawn on (else lines are printed as they are). */
  private tty = false;
  private closed = false;
  private readonly buttons = new ButtonNumbers();
  /** Gates of the console's simulated community: roles given and taken back are printed. */
  readonly gateMembership = consoleGateMembership((text) => this.print(`[gate] ${text}`));
  private readonly exports: ExportFolder;
  private leaving = false;
  /** The lines read so far, answered one after another. */
  private queue: Promise<void> = Promise.resolve();
  readonly done: Promise<void>;
  private resolveDone: () => void = () => {};

  constructor(private readonly options: ConsoleAdapterOptions) {
    this.output = options.output ?? process.stdout;
    this.exports = new ExportFolder(options.exportDir);
    this.done = new Promise((resolve) => {
      this.resolveDone = resolve;
    });
  }

  async start(): Promise<void> {
    const input = this.options.input ?? process.stdin;
    const interactive = this.options.interactive ?? Boolean((input as NodeJS.ReadStream).isTTY);
    this.tty = interactive && Boolean((this.output as NodeJS.WriteStream).isTTY);
    const rl = createInterface({
      input,
      output: interactive ? this.output : undefined,
      terminal: this.tty,
      historySize: 200,
      // No prompt while a line is being answered: it is shown when the answer is out.
      prompt: "",
    });
    this.readline = rl;
    const { greeting } = this.options;
    if (greeting) this.print(typeof greeting === "function" ? greeting() : greeting);
    const prompt = () => {
      if (!interactive || this.closed) return;
      rl.setPrompt("> ");
      // Keeps what was typed meanwhile, and where the cursor is in it.
      rl.prompt(true);
    };
    prompt();
    // Lines are handled strictly in order: each waits for the one before it.
    rl.on("line", (line) => {
      if (this.leaving) return;
      if (LEAVE.test(line.trim())) {
        // The lines already read are still answered; none after this one is.
        this.leaving = true;
        rl.close();
        return;
      }
      rl.setPrompt("");
      this.queue = this.queue.then(() => this.handleLine(line)).then(prompt);
    });
    rl.on("close", () => {
      this.closed = true;
      void this.queue.then(() => this.resolveDone());
    });
  }

  /** The person at the terminal is always there. */
  healthy(): boolean {
    return true;
  }

  /** Stops reading and waits until the lines already read are answered. */
  async stop(): Promise<void> {
    this.readline?.close();
    await this.queue;
  }

  private invocation(): Invocation {
    return {
      id: newInvocationId(),
      platform: "console",
      user: { id: "console-user", name: "you" },
      chat: { id: "console", kind: "private" },
      // The person at the console runs the bot: they administer its only chat.
      canManageChannel: async () => true,
    };
  }

  async handleLine(line: string): Promise<void> {
    const text = line.trim();
    if (text.length === 0 || text.startsWith("#")) return;
    const { runtime } = this.options;
    let reply: RenderableReply;
    const press = /^!(\d{1,9})$/.exec(text);
    if (press) {
      const button = this.buttons.find(Number(press[1]));
      if ("problem" in button) {
        this.print(`! ${button.problem}`);
        return;
      }
      ({ reply } = await runtime.answerButton(this.invocation(), button.id));
    } else {
      const match = /^\/?([A-Za-z0-9_]+)(?:@\S+)?(?:\s+([\s\S]*))?$/.exec(text);
      if (!match?.[1]) {
        this.print("! Type a command like /help.");
        return;
      }
      ({ reply } = await runtime.answerText(this.invocation(), match[1], match[2] ?? ""));
    }
    await this.show(reply);
  }

  /** Alert delivery to the console: printed like any reply, marked as an alert. */
  async sendToChat(_chatId: string, reply: RenderableReply): Promise<void> {
    await this.show(reply, "[alert] ");
  }

  classifySendError(error: unknown): SendFailure {
    return { kind: "transient", reason: error instanceof Error ? error.message : String(error) };
  }

  /** A private message (a wallet proved on the page /verify printed): said here, between the lines. */
  async sendPrivately(_to: PrivateTarget, message: RenderableReply | string): Promise<void> {
    await this.show(typeof message === "string" ? { text: message, private: true } : message);
  }

  /**
   * Saves the reply's picture and files, then numbers its buttons and prints it at once: nothing
   * printed between numbering and printing, so numbers appear on screen in the order given.
   */
  private async show(reply: RenderableReply, mark = ""): Promise<void> {
    const saved = await this.saveFiles(reply);
    const firstButton = this.buttons.add((reply.buttons ?? []).map((button) => button.id));
    this.print(`${mark}${renderConsole(reply, { ...saved, firstButton }).text}`);
  }

  /** A PNG picture or a file cannot be shown in a terminal: it is saved and its path printed. */
  private async saveFiles(
    reply: RenderableReply,
  ): Promise<Pick<ConsoleContext, "picture" | "files">> {
    const picture =
      reply.image?.kind === "png" ? await this.save(reply.image.name, reply.image.data) : undefined;
    const files: SavedFile[] = [];
    for (const file of reply.files ?? []) files.push(await this.save(file.name, file.data));
    return { picture, files };
  }

  private async save(name: string, data: Uint8Array): Promise<SavedFile> {
    const saved = await this.exports.save(name, data);
    if ("problem" in saved)
      this.options.logger.warn({ file: name, problem: saved.problem }, "could not save a file");
    return saved;
  }

  /**
   * On a terminal, the prompt and the line being typed are taken off the screen, the text printed
   * in their place, and they are drawn again under it, the typed text and cursor kept.
   */
  private print(text: string): void {
    const rl = this.readline;
    if (!this.tty || !rl || this.closed) {
      this.output.write(`${text}\n\n`);
      return;
    }
    moveCursor(this.output, 0, -rl.getCursorPos().rows);
    cursorTo(this.output, 0);
    clearScreenDown(this.output);
    // readline's redraw first moves up the rows it last saw the typed line take (its prevRows),
    // believing the line still there: as many blank rows under the text are what it moves over.
    const redrawMovesUp = (rl as { prevRows?: number }).prevRows ?? 0;
    this.output.write(`${text}\n\n${"\n".repeat(redrawMovesUp)}`);
    rl.prompt(true);
  }
}

/**
 * The console chat's first words: why it is the console, what data it shows, where the logs are,
 * how to leave. A URL is shown without any user name or password in it (the API key never is).
 */
export function consoleGreeting(
  dataUrl: string,
  simulated: boolean,
  logFile: string | undefined,
  chains: readonly string[] = [],
  pageUrl?: string,
): string {
  const url = new URL(dataUrl);
  url.username = "";
  url.password = "";
  const shown = url.href.replace(/\/$/, "");
  return [
    "NFT audience bot: the console chat (no DISCORD_TOKEN or TELEGRAM_BOT_TOKEN is set; set one to serve that chat instead).",
    simulated
      ? `Data: the embedded simulator at ${shown}, synthetic (set API_BASE_URL and API_KEY for the real service).`
      : `Data: the data service at ${shown}.`,
    ...(chains.length > 1
      ? [
          `Chains: ${chains.join(", ")} (${chains[0]} unless a command names another: /top ${chains[1]} volume 1d, or /settings chain ${chains[1]}).`,
        ]
      : []),
    ...(pageUrl
      ? [
          `Wallets: /verify gives you a link to this bot's page (${pageUrl}…) where you prove a wallet by signing in your browser wallet.`,
        ]
      : []),
    ...(logFile ? [`Logs: ${logFile}`] : []),
    "Type a command, like /help or /top volume 1d. Leave with /quit, Ctrl+D or Ctrl+C.",
  ].join("\n");
}
