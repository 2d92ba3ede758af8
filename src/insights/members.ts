import { toCsv } from "../core/csv.ts";
import { behaviorLabel } from "../core/format.ts";
import type { Known } from "./figures.ts";
import type { MemberPage, MemberQuery, MemberRow } from "./types.ts";

/** The member table's rows that match a search, sorted and cut to one page. */
export function memberPage(rows: MemberRow[], query: MemberQuery): MemberPage {
  const search = query.search?.trim().toLowerCase();
  const found = search
    ? rows.filter(
        (row) =>
          (row.name ?? "").toLowerCase().includes(search) ||
          row.userId.includes(search) ||
          row.wallets.some((w) => w.toLowerCase().includes(search)),
      )
    : rows;
  const sort = query.sort ?? "since";
  const value = (row: MemberRow): number | string =>
    sort === "name"
      ? (row.name ?? row.userId).toLowerCase()
      : (row[sort] ?? Number.NEGATIVE_INFINITY);
  const sign = query.descending ? -1 : 1;
  found.sort((a, b) => {
    const x = value(a);
    const y = value(b);
    return (x < y ? -1 : x > y ? 1 : 0) * sign || a.userId.localeCompare(b.userId);
  });
  const pageSize = Math.min(100, Math.max(1, query.pageSize ?? 25));
  const pages = Math.max(1, Math.ceil(found.length / pageSize));
  const page = Math.min(pages, Math.max(1, query.page ?? 1));
  return {
    rows: found.slice((page - 1) * pageSize, page * pageSize),
    total: found.length,
    page,
    pageSize,
  };
}

/** The member export: every row, oldest member first, amounts in the chain's currency. */
export function memberCsv(rows: MemberRow[], symbol: string): string {
  const sorted = [...rows].sort((a, b) => a.since - b.since || a.userId.localeCompare(b.userId));
  const amount = (value: number | undefined) =>
    value === undefined ? "" : String(Math.round(value * 1e6) / 1e6);
  return toCsv<MemberRow>(
    [
      { header: "user id", value: (r) => r.userId, numeric: true },
      { header: "name", value: (r) => r.name ?? "" },
      { header: "wallets", value: (r) => r.wallets.join(" ") },
      { header: "behavior", value: (r) => r.behavior ?? "" },
      { header: `volume (${symbol})`, value: (r) => amount(r.volume), numeric: true },
      { header: "purchases", value: (r) => amount(r.purchases), numeric: true },
      { header: `average price (${symbol})`, value: (r) => amount(r.avgPrice), numeric: true },
      { header: "collections held", value: (r) => amount(r.collections), numeric: true },
      { header: "gates passed", value: (r) => r.gates.join(" ") },
      {
        header: "member since",
        value: (r) => (r.since > 0 ? new Date(r.since).toISOString() : ""),
      },
    ],
    sorted,
  );
}

/** The member table's rows: every member but the private ones, with their gates' numbers. */
export function rowsOf(known: Known): MemberRow[] {
  const gatesOf = new Map<string, number[]>();
  for (const { number, userIds } of known.admitted)
    for (const id of userIds) gatesOf.set(id, [...(gatesOf.get(id) ?? []), number]);
  return known.people
    .filter((p) => !p.private)
    .map((p) => {
      const f = known.figures.get(p.userId);
      return {
        userId: p.userId,
        name: p.name,
        wallets: p.wallets,
        behavior: f && f.read > 0 ? f.behaviors.map(behaviorLabel).join(", ") || "none" : undefined,
        volume: f?.volume,
        purchases: f?.purchases,
        avgPrice: f?.avgPrice,
        collections: f?.collections,
        gates: gatesOf.get(p.userId) ?? [],
        since: p.since,
      };
    });
}
