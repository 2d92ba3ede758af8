export type Outcome<T> = { done: true; value: T } | { done: false; pending: Promise<T> };

/** Resolves with the value if it comes within `ms`, else with the still-pending promise. */
export async function within<T>(promise: Promise<T>, ms: number): Promise<Outcome<T>> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<"late">((resolve) => {
    timer = setTimeout(() => resolve("late"), ms);
  });
  try {
    const first = await Promise.race([promise.then((value) => ({ value })), late]);
    return first === "late"
      ? { done: false, pending: promise }
      : { done: true, value: first.value };
  } finally {
    clearTimeout(timer);
  }
}
