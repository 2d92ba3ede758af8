/** The page's building blocks: elements from text (never markup), and how figures are written. */

/** The bot's words when a call fails for another reason than the session. */
export const UNAVAILABLE = "The bot could not read this right now. Reload the page in a minute.";
/** No aggregate of fewer people than this is shown (src/insights/types.ts's MIN_PEOPLE). */
export const MIN_PEOPLE = 5;

export type Child = Node | string | undefined | false;

/** An element with its attributes and children; strings become text nodes, never markup. */
export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Record<string, string> = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, value);
  for (const child of children) {
    if (child === undefined || child === false) continue;
    element.append(typeof child === "string" ? document.createTextNode(child) : child);
  }
  return element;
}

export const app = document.getElementById("app") as HTMLElement;

export const integer = new Intl.NumberFormat("en-US", { maximumFractionDigits: 0 });

export function count(value: number | undefined): string {
  return value === undefined ? "—" : integer.format(value);
}

export function amount(value: number | undefined, currency: string): string {
  if (value === undefined) return "—";
  const digits = Math.abs(value) >= 100 ? 0 : Math.abs(value) >= 1 ? 2 : 4;
  return `${new Intl.NumberFormat("en-US", { maximumFractionDigits: digits }).format(value)} ${currency}`;
}

export function percent(value: number | undefined): string {
  return value === undefined ? "—" : `${value.toFixed(1)}%`;
}

export function points(value: number | undefined): string {
  if (value === undefined) return "—";
  const rounded = Math.round(value * 10) / 10;
  return `${rounded > 0 ? "+" : rounded < 0 ? "−" : "±"}${Math.abs(rounded).toFixed(1)} pts`;
}

/** Times in UTC, as the bot writes them in chats. */
export function when(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 16).replace("T", " ")} UTC`;
}

export const shortDay = new Intl.DateTimeFormat("en-US", {
  month: "short",
  day: "numeric",
  timeZone: "UTC",
});

export function day(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

export function duration(ms: number): string {
  const minutes = Math.max(1, Math.ceil(ms / 60_000));
  if (minutes < 90) return `${minutes} minute${minutes === 1 ? "" : "s"}`;
  const hours = Math.round(minutes / 60);
  return `${hours} hours`;
}

/** "BEHAVIOR_WHALE" → "whale"; unknown values as they come, made readable. */
export function behaviorLabel(behavior: string): string {
  return behavior
    .replace(/^BEHAVIOR_/, "")
    .toLowerCase()
    .replace(/_/g, " ");
}

/** 0x1234…abcd, the whole address in its title (and for screen readers). */
export function wallet(address: string): HTMLElement {
  const short = address.length > 14 ? `${address.slice(0, 6)}…${address.slice(-4)}` : address;
  return el("span", { class: "wallet mono", title: address }, short);
}

export function withheld(): HTMLElement {
  return el("span", { class: "muted", title: `Fewer than ${MIN_PEOPLE} people` }, "—");
}

export function section(id: string, title: string, ...children: Child[]): HTMLElement {
  return el(
    "section",
    { id, "aria-labelledby": `${id}-title` },
    el("h2", { id: `${id}-title` }, title),
    ...children,
  );
}

/** A table in its own scrolling box (the page itself never scrolls sideways). */
export function table(
  caption: string,
  head: (string | HTMLElement)[],
  rows: Child[][],
  numeric: Set<number> = new Set(),
): HTMLElement {
  const headRow = el(
    "tr",
    {},
    ...head.map((cell, index) =>
      typeof cell === "string"
        ? el("th", { scope: "col", ...(numeric.has(index) ? { class: "num" } : {}) }, cell)
        : cell,
    ),
  );
  const body = el(
    "tbody",
    {},
    ...rows.map((row) =>
      el(
        "tr",
        {},
        ...row.map((cell, index) =>
          el("td", numeric.has(index) ? { class: "num" } : {}, cell ?? withheld()),
        ),
      ),
    ),
  );
  return el(
    "div",
    { class: "scroll" },
    el(
      "table",
      {},
      el("caption", { class: "visually-hidden" }, caption),
      el("thead", {}, headRow),
      body,
    ),
  );
}

export function failure(): HTMLElement {
  return el("p", { class: "refused", role: "alert" }, UNAVAILABLE);
}
