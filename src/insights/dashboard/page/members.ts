/** The member table: sorted by its headers, paged, searched by wallet or name. */
import { API, get, hasEnded, onEnd, SessionEnded } from "./api.ts";
import { amount, type Child, count, day, el, failure, integer, section, wallet } from "./dom.ts";
import type { WireMember, WireMemberPage, WireSort } from "./wire.ts";

const PAGE_SIZE = 25;
const SEARCH_DELAY_MS = 300;

interface Column {
  label: string;
  sort?: WireSort;
  numeric?: boolean;
  /** Long words: wrapped rather than widening the table. */
  wrap?: boolean;
  cell(row: WireMember, currency: string): Child;
}

const COLUMNS: Column[] = [
  {
    label: "Name",
    sort: "name",
    cell: (row) => row.name ?? el("span", { class: "muted" }, "(no name)"),
  },
  { label: "User id", cell: (row) => el("span", { class: "mono" }, row.userId) },
  {
    label: "Wallets",
    cell: (row) =>
      el("span", { class: "wallets" }, ...row.wallets.map((address) => wallet(address))),
  },
  {
    label: "Behavior",
    wrap: true,
    cell: (row) => row.behavior ?? el("span", { class: "muted" }, "not read yet"),
  },
  { label: "Since", sort: "since", cell: (row) => day(row.since) },
  {
    label: "Volume",
    sort: "volume",
    numeric: true,
    cell: (row, currency) => amount(row.volume, currency),
  },
  { label: "Purchases", sort: "purchases", numeric: true, cell: (row) => count(row.purchases) },
  {
    label: "Avg price",
    sort: "avgPrice",
    numeric: true,
    cell: (row, currency) => amount(row.avgPrice, currency),
  },
  {
    label: "Collections",
    sort: "collections",
    numeric: true,
    cell: (row) => count(row.collections),
  },
  {
    label: "Gates",
    cell: (row) => (row.gates.length === 0 ? "—" : row.gates.map((n) => `#${n}`).join(", ")),
  },
];

export const members = {
  sort: "name" as WireSort,
  descending: false,
  page: 1,
  search: "",
  /** The latest request: an older answer arriving late is dropped. */
  asked: 0,
  currency: "",
};
let searchTimer: ReturnType<typeof setTimeout> | undefined;
onEnd(() => {
  if (searchTimer !== undefined) clearTimeout(searchTimer);
});

const memberBody = el("tbody", { id: "member-rows" });
const memberCount = el("p", { class: "muted", id: "member-count", role: "status" });
const pageLabel = el("span", { id: "page-label" });
const previous = el("button", { type: "button", id: "previous" }, "Previous");
const next = el("button", { type: "button", id: "next" }, "Next");
const memberError = el("div", { id: "member-error" });
const headCells = new Map<WireSort, HTMLElement>();

export function membersSection(): HTMLElement {
  const search = el("input", {
    type: "search",
    id: "search",
    placeholder: "Search by wallet or name",
    "aria-label": "Search members by wallet or name",
    maxlength: "100",
    autocomplete: "off",
    spellcheck: "false",
  });
  search.addEventListener("input", () => {
    if (searchTimer !== undefined) clearTimeout(searchTimer);
    searchTimer = setTimeout(() => {
      searchTimer = undefined;
      members.search = search.value.trim();
      members.page = 1;
      void loadMembers();
    }, SEARCH_DELAY_MS);
  });
  previous.addEventListener("click", () => {
    if (members.page > 1) {
      members.page--;
      void loadMembers();
    }
  });
  next.addEventListener("click", () => {
    members.page++;
    void loadMembers();
  });
  const head = el(
    "tr",
    {},
    ...COLUMNS.map((column) => {
      const th = el("th", { scope: "col", ...(column.numeric ? { class: "num" } : {}) });
      const sort = column.sort;
      if (!sort) {
        th.textContent = column.label;
        return th;
      }
      const button = el("button", { type: "button", class: "sort" }, column.label);
      button.addEventListener("click", () => {
        if (members.sort === sort) members.descending = !members.descending;
        else {
          members.sort = sort;
          // Names A to Z first; figures and dates largest or latest first.
          members.descending = sort !== "name";
        }
        members.page = 1;
        void loadMembers();
      });
      th.append(button);
      headCells.set(sort, th);
      return th;
    }),
  );
  return section(
    "members",
    "Members",
    el(
      "p",
      { class: "muted" },
      "Members who keep their wallets private are counted above, never listed here or in the download.",
    ),
    el(
      "div",
      { class: "toolbar" },
      search,
      el(
        "a",
        { href: `${API}members.csv`, download: "", class: "button", id: "download" },
        "Download CSV",
      ),
    ),
    memberCount,
    memberError,
    el(
      "div",
      { class: "scroll" },
      el(
        "table",
        { id: "member-table", class: "members" },
        el("caption", { class: "visually-hidden" }, "Members, sortable by the column headers"),
        el("thead", {}, head),
        memberBody,
      ),
    ),
    el("nav", { class: "pager", "aria-label": "Pages of members" }, previous, pageLabel, next),
  );
}

function showSort(): void {
  for (const [sort, th] of headCells) {
    if (sort === members.sort)
      th.setAttribute("aria-sort", members.descending ? "descending" : "ascending");
    else th.removeAttribute("aria-sort");
  }
}

export async function loadMembers(): Promise<void> {
  const asked = ++members.asked;
  showSort();
  const query = new URLSearchParams({
    sort: members.sort,
    desc: members.descending ? "1" : "0",
    page: String(members.page),
    size: String(PAGE_SIZE),
  });
  if (members.search) query.set("q", members.search);
  let page: WireMemberPage;
  try {
    page = await get<WireMemberPage>(`members?${query}`);
  } catch (error) {
    if (error instanceof SessionEnded || asked !== members.asked) return;
    memberError.replaceChildren(failure());
    return;
  }
  if (asked !== members.asked || hasEnded()) return;
  memberError.replaceChildren();
  const pages = Math.max(1, Math.ceil(page.total / page.pageSize));
  // The list shrank under the page asked for (a search, members leaving): the last page instead.
  if (page.rows.length === 0 && page.total > 0 && members.page > pages) {
    members.page = pages;
    void loadMembers();
    return;
  }
  members.page = page.page;
  memberBody.replaceChildren(
    ...(page.rows.length === 0
      ? [
          el(
            "tr",
            {},
            el(
              "td",
              { colspan: String(COLUMNS.length), class: "muted" },
              members.search ? "No member matches this search." : "No member is listed yet.",
            ),
          ),
        ]
      : page.rows.map((row) =>
          el(
            "tr",
            {},
            ...COLUMNS.map((column) =>
              el(
                "td",
                column.numeric ? { class: "num" } : column.wrap ? { class: "wrap" } : {},
                column.cell(row, members.currency),
              ),
            ),
          ),
        )),
  );
  memberCount.textContent = `${integer.format(page.total)} member${page.total === 1 ? "" : "s"}${
    members.search ? " match" : " listed"
  }`;
  pageLabel.textContent = `Page ${page.page} of ${pages}`;
  previous.disabled = page.page <= 1;
  next.disabled = page.page >= pages;
}
