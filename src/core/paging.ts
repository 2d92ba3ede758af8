import type { ButtonAction, ButtonSpec } from "./reply.ts";

/** Splits a list into pages: the slice for `page` and whether there is more either side. */
export function pageOf<T>(items: readonly T[], page: number, size: number) {
  const pages = Math.max(1, Math.ceil(items.length / size));
  const current = Math.min(Math.max(0, page), pages - 1);
  return {
    items: items.slice(current * size, current * size + size),
    page: current,
    pages,
    offset: current * size,
  };
}

/**
 * "◀ Previous" / "Next ▶" buttons whose actions are the same action at another page.
 * `hasNext` may be known exactly (client-side lists) or guessed from a full page (server paging).
 */
export function pageButtons(
  base: Omit<ButtonAction, "payload"> & { payload: ButtonAction["payload"] },
  page: number,
  hasNext: boolean,
): ButtonSpec[] {
  const buttons: ButtonSpec[] = [];
  if (page > 0) {
    buttons.push({
      label: "◀ Previous",
      style: "secondary",
      action: { ...base, payload: { ...base.payload, page: page - 1 } },
    });
  }
  if (hasNext) {
    buttons.push({
      label: "Next ▶",
      style: "secondary",
      action: { ...base, payload: { ...base.payload, page: page + 1 } },
    });
  }
  return buttons;
}

/** Reads a page number from a stored payload, defaulting to 0. */
export function payloadPage(payload: Record<string, unknown>): number {
  const page = payload.page;
  return typeof page === "number" && Number.isInteger(page) && page >= 0 ? page : 0;
}

export function payloadString(payload: Record<string, unknown>, key: string): string {
  const value = payload[key];
  if (typeof value !== "string") throw new Error(`button payload has no ${key}`);
  return value;
}
