/**
 * An append-only log that tests can wait on: `waitFor` resolves with the first entry, already
 * recorded or still to come, that matches, so tests never sleep.
 */
export class Recorder<T> {
  readonly entries: T[] = [];
  readonly #waiters = new Set<{
    match: (entry: T) => boolean;
    resolve: (entry: T) => void;
    reject: (error: Error) => void;
  }>();
  readonly #describe: (entry: T) => string;
  readonly #timers = new Set<NodeJS.Timeout>();

  constructor(describe: (entry: T) => string) {
    this.#describe = describe;
  }

  push(entry: T): void {
    this.entries.push(entry);
    for (const waiter of [...this.#waiters]) {
      if (waiter.match(entry)) {
        this.#waiters.delete(waiter);
        waiter.resolve(entry);
      }
    }
  }

  waitFor(match: (entry: T) => boolean, timeoutMs: number, what = "a matching entry"): Promise<T> {
    const found = this.entries.find(match);
    if (found !== undefined) return Promise.resolve(found);
    return new Promise<T>((resolve, reject) => {
      const waiter = {
        match,
        resolve: (entry: T) => {
          clearTimeout(timer);
          this.#timers.delete(timer);
          resolve(entry);
        },
        reject: (error: Error) => {
          clearTimeout(timer);
          reject(error);
        },
      };
      const timer = setTimeout(() => {
        this.#waiters.delete(waiter);
        this.#timers.delete(timer);
        const seen = this.entries.slice(-15).map(this.#describe).join("\n  ");
        reject(
          new Error(
            `timed out after ${timeoutMs} ms waiting for ${what}; last recorded:\n  ${seen || "(nothing)"}`,
          ),
        );
      }, timeoutMs);
      this.#timers.add(timer);
      this.#waiters.add(waiter);
    });
  }

  /** Fails every pending wait: the fake is closing. */
  dispose(): void {
    for (const waiter of this.#waiters) waiter.reject(new Error("the fake Discord was closed"));
    this.#waiters.clear();
    this.#timers.clear();
  }
}
