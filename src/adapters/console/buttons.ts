/** How many messages with buttons keep them pressable by number. */
export const KEPT_MESSAGES = 100;

/**
 * The console's button numbers. Each printed button gets the next number and keeps it: a number
 * on screen means the same button however many messages (alerts, digests) are printed after it,
 * so `!N` presses what the person saw. The buttons of the last KEPT_MESSAGES messages that had
 * some are kept; older numbers are refused as too old.
 */
export class ButtonNumbers {
  private next = 1;
  private readonly ids = new Map<number, string>();
  /** The kept messages' numbers, oldest first. */
  private readonly messages: { first: number; count: number }[] = [];

  constructor(private readonly kept = KEPT_MESSAGES) {}

  /** Numbers one message's buttons (ids in their order); returns the first one's number. */
  add(ids: readonly string[]): number {
    const first = this.next;
    if (ids.length === 0) return first;
    for (const [i, id] of ids.entries()) this.ids.set(first + i, id);
    this.next += ids.length;
    this.messages.push({ first, count: ids.length });
    for (const old of this.messages.splice(0, Math.max(0, this.messages.length - this.kept)))
      for (let n = old.first; n < old.first + old.count; n++) this.ids.delete(n);
    return first;
  }

  /** The button behind a number, or the line that says why there is none. */
  find(n: number): { id: string } | { problem: string } {
    const id = this.ids.get(n);
    if (id !== undefined) return { id };
    if (n >= 1 && n < this.next)
      return {
        problem: `Button ${n} is too old: only the buttons of the last ${this.kept} messages with buttons can be pressed. Ask again for new ones.`,
      };
    return { problem: `There is no button ${n} on screen.` };
  }
}
