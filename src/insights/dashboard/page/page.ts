/**
 * The managers' insights page (issue 36), bundled by scripts/build.mjs for the browser: no
 * framework, nothing from elsewhere (the page's Content-Security-Policy allows only its own
 * origin). The HTML is an empty shell; everything shown is read here through same-origin calls
 * under /dashboard/api/ that carry the session's cookie (HttpOnly: this script never sees it).
 * Names, wallets and every other value are untrusted: they reach the page as text nodes only.
 */
import { get, hasEnded, probe } from "./api.ts";
import { app, type Child, count, el, failure, MIN_PEOPLE, section, table, when } from "./dom.ts";
import { loadMembers, members, membersSection } from "./members.ts";
import { behaviors, charts, figures, header, held, lastPurchase, spend } from "./overview.ts";
import type { WireGate, WireSection, WireView } from "./wire.ts";

// ---- Gates and the chat's sections ----

function gatesSection(gates: WireGate[] | undefined): HTMLElement {
  if (gates === undefined) return section("gates", "Gates", failure());
  if (gates.length === 0)
    return section("gates", "Gates", el("p", { class: "muted" }, "No gates."));
  return section(
    "gates",
    "Gates",
    ...gates.map((gate) =>
      el(
        "details",
        { class: "gate" },
        el(
          "summary",
          {},
          el("strong", {}, `#${gate.number}`),
          ` ${gate.gives} — `,
          gate.admits === undefined
            ? `fewer than ${MIN_PEOPLE} admitted`
            : `admits ${count(gate.admits)}`,
        ),
        el("p", {}, gate.criteria),
        gate.log.length === 0
          ? el("p", { class: "muted" }, "Nothing logged yet.")
          : table(
              `Gate #${gate.number}'s log, newest first`,
              ["When", "Member", "Action", "Reason"],
              gate.log.map((entry) => [
                when(entry.at),
                entry.name ? `${entry.name} (${entry.userId})` : entry.userId,
                entry.action,
                entry.reason,
              ]),
            ),
      ),
    ),
  );
}

function chatSections(sections: WireSection[] | undefined): HTMLElement {
  if (sections === undefined) return section("chat", "This chat", failure());
  return section(
    "chat",
    "This chat",
    ...sections.map((part) =>
      el(
        "div",
        { class: "chat-section" },
        el("h3", {}, part.title),
        part.lines.length === 0
          ? el("p", { class: "muted" }, "none")
          : el("ul", {}, ...part.lines.map((line) => el("li", {}, line))),
      ),
    ),
  );
}

// ---- Start ----

async function settle<T>(call: Promise<T>): Promise<T | undefined> {
  try {
    return await call;
  } catch {
    return undefined;
  }
}

async function start(): Promise<void> {
  let known: WireView | undefined;
  if (app.dataset.link === "spent") {
    known = await probe();
    if (!known) return;
  }
  const [view, gates, sections] = await Promise.all([
    known ?? settle(get<WireView>("view")),
    settle(get<WireGate[]>("gates")),
    settle(get<WireSection[]>("sections")),
  ]);
  if (hasEnded()) return;
  const parts: Child[] = [];
  if (view) {
    members.currency = view.chain.currency;
    parts.push(
      header(view),
      figures(view),
      charts(view),
      behaviors(view),
      el("div", { class: "pair" }, spend(view), lastPurchase(view)),
      held(view),
    );
  } else {
    parts.push(el("header", { class: "top" }, el("h1", {}, "Insights")), failure());
  }
  parts.push(membersSection(), gatesSection(gates), chatSections(sections));
  app.replaceChildren(...parts.filter((part): part is Node => part instanceof Node));
  await loadMembers();
}

void start();
