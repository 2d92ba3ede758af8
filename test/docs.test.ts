/**
 * The README and the pages under docs/ as a newcomer meets them in a clone: every relative link
 * and picture is there, nothing points outside the repository, the Discord invite link asks for
 * exactly the permissions the code needs, and every setting the code reads is documented. (Their
 * command examples are run on the simulator by test/examples.test.ts.)
 */

import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { allCommands } from "../commands/index.ts";
import { BOT_PERMISSIONS, botPermissions } from "../src/adapters/discord/invite.ts";
import { usage } from "../src/core/registry.ts";
import { FEATURES } from "../src/features.ts";
import { featureCommands } from "../src/kernel/feature.ts";
import { DEMO_WALLET } from "../src/simulator/index.ts";
import { NODE_FLAGS } from "./compiled.ts";
import { DOC_PAGES as PAGES, ROOT } from "./doc-pages.ts";

const DOCS = join(ROOT, "docs");
const read = (path: string) => readFileSync(path, "utf8");
const name = (path: string) => relative(ROOT, path);

/** The text as rendered links see it: code blocks and code spans hold no links. */
const withoutCode = (text: string) => text.replace(/```[\s\S]*?```/g, "").replace(/`[^`\n]*`/g, "");

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
}

/** The anchors of a page's headings, the second of a name numbered as GitHub does. */
function anchors(path: string): Set<string> {
  const seen = new Map<string, number>();
  const result = new Set<string>();
  for (const match of read(path)
    .replace(/```[\s\S]*?```/g, "")
    .matchAll(/^#{1,6}\s+(.+)$/gm)) {
    const base = slug(match[1] ?? "");
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    result.add(count === 0 ? base : `${base}-${count}`);
  }
  return result;
}

/** Every relative link and picture of a page: [text](target) and ![alt](target). */
function relativeLinks(path: string): string[] {
  return [...withoutCode(read(path)).matchAll(/\]\(([^)\s]+)\)/g)]
    .map((match) => match[1] ?? "")
    .filter((target) => !/^[a-z]+:/i.test(target));
}

describe("the documentation's pages", () => {
  it("are the README and the pages under docs/", () => {
    expect(PAGES.map(name)).toEqual(
      expect.arrayContaining([
        "README.md",
        "docs/alerts.md",
        "docs/data-service.md",
        "docs/dependencies.md",
        "docs/discord.md",
        "docs/settings.md",
        "docs/telegram.md",
      ]),
    );
  });

  it.each(PAGES.map(name))(
    "%s: every relative link reaches a file, and its anchor a heading",
    (page) => {
      const path = join(ROOT, page);
      const broken: string[] = [];
      for (const link of relativeLinks(path)) {
        const [file = "", anchor] = link.split("#");
        const target = file === "" ? path : resolve(dirname(path), decodeURIComponent(file));
        if (!existsSync(target)) broken.push(`${link}: no file ${name(target)}`);
        else if (anchor !== undefined && !anchors(target).has(anchor))
          broken.push(`${link}: no heading #${anchor} in ${name(target)}`);
      }
      expect(broken).toEqual([]);
    },
  );

  it.each(PAGES.map(name))("%s: points at nothing outside a clone of the repository", (page) => {
    const text = read(join(ROOT, page));
    expect(text).not.toMatch(/\.\.\/shared|API-SPEC/);
    for (const link of relativeLinks(join(ROOT, page))) {
      const target = resolve(dirname(join(ROOT, page)), link.split("#")[0] ?? "");
      expect(relative(ROOT, target), link).not.toMatch(/^\.\./);
    }
  });
});

describe("the README", () => {
  const readme = read(join(ROOT, "README.md"));

  it("is a page read in five minutes", () => {
    expect(readme.split("\n").length).toBeLessThanOrEqual(150);
  });

  it("starts with the two commands, before any section", () => {
    const commands = readme.indexOf("npm install && npm start");
    expect(commands).toBeGreaterThan(0);
    expect(readme.indexOf("npm test")).toBeGreaterThan(commands);
    expect(readme.indexOf("\n## ")).toBeGreaterThan(readme.indexOf("npm test"));
  });

  it("shows one picture the bot drew, small enough for a README", () => {
    const pictures = [...readme.matchAll(/!\[[^\]]*\]\(([^)]+)\)/g)].map((match) => match[1] ?? "");
    expect(pictures).toHaveLength(1);
    const picture = join(ROOT, pictures[0] ?? "");
    // A PNG by its signature, not a placeholder.
    expect(readFileSync(picture).subarray(1, 4).toString("latin1")).toBe("PNG");
    expect(statSync(picture).size).toBeLessThan(100 * 1024);
  });
});

describe("the README's command table", () => {
  /** Its rows: each command's name and the usage its first column shows (`\|` read as `|`). */
  const rows = new Map<string, string>();
  for (const line of read(join(ROOT, "README.md")).split("\n")) {
    const cell = /^\| `(\/([a-z_]+)[^`]*)` \|/.exec(line);
    if (cell?.[1] && cell[2]) rows.set(cell[2], cell[1].replaceAll("\\|", "|"));
  }
  // Every command as /help lists it, the features' own included.
  const commands = allCommands(featureCommands(FEATURES));

  it("shows every command /help lists, with the usage line /help prints for it (arguments in its order)", () => {
    const listed = commands.filter((command) => !command.hidden);
    expect(listed.length).toBeGreaterThan(20);
    expect(Object.fromEntries(rows)).toEqual(
      Object.fromEntries(listed.map((command) => [command.name, usage(command)])),
    );
  });

  it("leaves out the hidden commands (retired ones still answered, such as /link)", () => {
    const hidden = commands.filter((command) => command.hidden).map((command) => command.name);
    expect(hidden).toContain("link");
    for (const name of hidden) expect(rows.has(name), `/${name}`).toBe(false);
  });
});

describe("docs/commands.md on charts", () => {
  const page = read(join(DOCS, "commands.md"));
  const section = /^## Charts and images\n([\s\S]*?)^## /m.exec(page)?.[1] ?? "";

  it("says what a chart shows and when it comes, for the people who run the bot, not in the code's terms", () => {
    expect(section).toMatch(/\/owners/);
    expect(section).toMatch(/\/top/);
    expect(section).toMatch(/\/audience/);
    // No source paths, ports, interfaces or inner steps.
    expect(section).not.toMatch(/src\/|\.ts\b|\bport\b|ChartDrawer|materiali[sz]ed|\bspec\b/);
  });

  it("says whether charts can be turned off", () => {
    expect(section).toMatch(/turn(ed)? (charts )?off/i);
  });
});

describe("the simulator's demo wallet", () => {
  it("is the one the simulator knows, where the README's first hour and docs/wallets.md give it", () => {
    for (const page of ["README.md", "docs/wallets.md"]) {
      const text = readFileSync(join(ROOT, page), "utf8");
      expect(text, page).toContain(DEMO_WALLET.privateKey);
      expect(text, page).toContain(DEMO_WALLET.address);
      expect(text, page).toMatch(/\*\*[^*]*simulator only[^*]*\*\*/);
    }
  });
});

describe("the Discord invite link", () => {
  const links = PAGES.flatMap((path) =>
    [...read(path).matchAll(/discord\.com\/oauth2\/authorize\?[^\s`)]*/g)].map(
      (match): [string, string] => [name(path), match[0]],
    ),
  );

  it("is in the README and in docs/discord.md", () => {
    expect(new Set(links.map(([page]) => page))).toEqual(new Set(["README.md", "docs/discord.md"]));
  });

  it.each(links)(
    "%s: %s asks for the bot's scopes and the permissions the code needs",
    (_page, link) => {
      const query = new URL(`https://${link}`).searchParams;
      expect(query.get("scope")).toBe("bot applications.commands");
      expect(query.get("permissions")).toBe(botPermissions().toString());
    },
  );

  it("names each permission where the README and docs/discord.md explain it", () => {
    const readme = read(join(ROOT, "README.md"));
    const discord = read(join(DOCS, "discord.md"));
    for (const [, label] of BOT_PERMISSIONS) {
      expect(readme).toContain(label);
      expect(discord).toMatch(new RegExp(`^\\| ${label} \\|`, "m"));
    }
  });
});

describe("docs/settings.md", () => {
  it("documents every setting the code reads", () => {
    const settings = read(join(DOCS, "settings.md"));
    const names = [
      ...read(join(ROOT, "src/config.ts")).matchAll(/\benv\(\s*"([A-Z][A-Z0-9_]*)"/g),
    ].map((match) => match[1] ?? "");
    expect(names.length).toBeGreaterThan(50);
    expect(names.filter((variable) => !settings.includes(`\`${variable}\``))).toEqual([]);
  });
});

describe("Node's flags for the bot", () => {
  it("are the same wherever the bot is run: npm start, the Dockerfile, the systemd unit, the docs", () => {
    const flags = NODE_FLAGS.join(" ");
    const start = (JSON.parse(read("package.json")) as { scripts: Record<string, string> }).scripts
      .start;
    expect(start).toBe(`node ${flags} scripts/start.mjs main`);
    const cmd = /^CMD (\[.*\])$/m.exec(read("Dockerfile"))?.[1];
    expect(JSON.parse(cmd ?? "[]")).toEqual(["node", ...NODE_FLAGS, "dist/main.js"]);
    expect(read("deploy/nft-audience-bot.service")).toMatch(
      new RegExp(`^ExecStart=/usr/bin/node ${flags} dist/main\\.js$`, "m"),
    );
    const operations = read("docs/operations.md");
    expect(operations).toContain(`node ${flags} dist/main.js`);
    // No other way of running the compiled bot is told.
    for (const run of operations.match(/node [^`\n]*dist\/main\.js/g) ?? [])
      expect(run).toBe(`node ${flags} dist/main.js`);
  });
});
