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
 * "◀ Previous" / "Next ▶" buttons whose actions are the same action at another page (`at` gives
 * it for a page, its payload encoded by the action's schema: see button-actions.ts).
 * `hasNext` may be known exactly (client-side lists) or guessed from a full page (server paging).
 */
export function pageButtons(
  at: (page: number) => ButtonAction,
  page: number,
  hasNext: boolean,
): ButtonSpec[] {
  const buttons: ButtonSpec[] = [];
  if (page > 0) buttons.push({ label: "◀ Previous", style: "secondary", action: at(page - 1) });
  if (hasNext) buttons.push({ label: "Next ▶", style: "secondary", action: at(page + 1) });
  return buttons;
}
