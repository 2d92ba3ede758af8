import { isAddressLike } from "../src/api/validate.ts";
import { type CommandContext, defineCommand, personKey } from "../src/core/command.ts";
import { fullAddress } from "../src/core/format.ts";
import { checkWalletWords, opt, type RoleRef, resolveWallet } from "../src/core/options.ts";
import type { Reply } from "../src/core/reply.ts";
import { UserError } from "../src/errors.ts";
import {
  CRITERIA_EXAMPLES,
  collectionResolverFor,
  describeCriterion,
  parseCriteria,
} from "../src/gates/criteria.ts";
import type { GateService } from "../src/gates/service.ts";
import {
  type CriterionResult,
  type Gate,
  type GateCriterion,
  type GateTarget,
  MAX_GATES_PER_CHAT,
} from "../src/gates/types.ts";
import { sliceChars } from "../src/strings.ts";

const ACTIONS = [
  { value: "add", name: "add", aliases: ["new", "create"] },
  { value: "list", name: "list", aliases: ["show", "ls"] },
  { value: "remove", name: "remove", aliases: ["rm", "delete", "del"] },
  { value: "test", name: "test", aliases: ["check"] },
  { value: "log", name: "log", aliases: ["export", "csv"] },
] as const;

/** The demo wallet of the embedded simulator: the examples test it against each criterion kind. */
const DEMO = "0xEC3111Cb30983AC4545f576b2793cA163fE0294B";

const ADD_USAGE = "/gate add <criteria> (on Discord with role:@Role)";

/** The criteria one can type, one of each kind (src/gates/criteria.ts reads them). */
const CRITERIA_WORDS =
  'Criteria, separated by commas or "and", all of which must pass: holds 1 Azuki (a collection by name, address or link); behavior collector,whale or not behavior flipper; volume 10, avgprice 0.5, collections 5, lastpurchase 30d (spend, in the chain\'s currency).';

/** Where gates exist: a Discord server (gates are per server) or a Telegram group. */
interface GateChat {
  gates: GateService;
  platform: "discord" | "telegram" | "console";
  chatId: string;
}

function gatesOf(ctx: CommandContext): GateService {
  if (!ctx.gates)
    throw new UserError(
      "feature_unavailable",
      "Gates are not available here: they give a Discord role or entry to a Telegram group, so /gate add, list, remove and log work in a Discord server or a Telegram group. /gate test <wallet> <criteria> works anywhere.",
    );
  return ctx.gates;
}

/** The chat whose gates this invocation reads: refused in a private chat or on the console. */
function gateChat(ctx: CommandContext): GateChat {
  const { platform, chat, guild } = ctx.invocation;
  if (platform === "discord") {
    if (!guild)
      throw new UserError(
        "wrong_chat_kind",
        "Gates belong to a Discord server: use /gate in one of its channels.",
      );
    return { gates: gatesOf(ctx), platform, chatId: guild.id };
  }
  if (platform === "telegram") {
    if (chat.kind !== "group")
      throw new UserError(
        "wrong_chat_kind",
        "A Telegram gate lets people into a group: use /gate in the group, as one of its admins.",
      );
    return { gates: gatesOf(ctx), platform, chatId: chat.id };
  }
  // The console is a simulated community the person at the keyboard manages (issue 38): its
  // gates give roles that exist only on screen.
  return { gates: gatesOf(ctx), platform: "console", chatId: chat.id };
}

async function requireManager(ctx: CommandContext, what: string): Promise<void> {
  if (!(await ctx.invocation.canManageChannel()))
    throw new UserError("not_manager", `Only people who can manage this chat may ${what}.`);
}

/**
 * On Discord, a gate is added or removed only by someone who could give its role by hand (Manage
 * Roles and a higher role, or the owner): the bot never does for people what they could not.
 * Telegram has no such rule beyond being the group's admin (requireManager).
 */
async function requireGiver(
  ctx: CommandContext,
  gates: GateService,
  target: GateTarget,
  purpose: "add" | "remove",
): Promise<void> {
  if (target.platform !== "discord") return;
  const may = await gates.mayGive(target, ctx.invocation.user.id, purpose);
  if (!may.ok) throw new UserError("cannot_give_role", may.reason);
}

/** The role a console gate gives when /gate add names none. */
const CONSOLE_ROLE = "Holders";

/** The console's role: the one named (role:@Name), else Holders; plain text, 60 characters. */
function consoleRole(role: RoleRef | undefined): string {
  const named = role && "name" in role ? role.name : undefined;
  const plain = (named ?? "").replace(/[\p{Cc}\p{Cf}@<>*_`[\]]/gu, "").trim();
  return sliceChars(plain, 60) || CONSOLE_ROLE;
}

/** The Discord role a gate gives, from the role option; its name as Discord resolved it. */
function discordTarget(
  ctx: CommandContext,
  guildId: string,
  role: RoleRef | undefined,
): GateTarget {
  if (!role)
    throw new UserError(
      "missing_argument",
      `Which role does the gate give? Pick it in the role option (text: role:@Holders). Usage: ${ADD_USAGE}`,
    );
  const names = ctx.invocation.guild?.roleNames ?? {};
  let roleId: string | undefined;
  if ("id" in role) roleId = role.id;
  else {
    const wanted = role.name.toLowerCase();
    roleId = Object.keys(names).find((id) => names[id]?.toLowerCase() === wanted);
    if (!roleId)
      throw new UserError(
        "unknown_role",
        `I cannot find the role @${sliceChars(role.name, 60)} here: pick it in the role option, or give its id (Server Settings → Roles → Copy Role ID).`,
      );
  }
  // @everyone's id is the server's: every member has it, so it gates nothing.
  if (roleId === guildId)
    throw new UserError(
      "invalid_role",
      "@everyone cannot be a gate's role: every member has it. Pick a role.",
    );
  // Without a resolved name, Discord's check (at add) fills it in from the server's roles.
  return { platform: "discord", guildId, roleId, roleName: names[roleId] ?? roleId };
}

function whatItGives(gate: Gate): string {
  return gate.target.platform === "telegram"
    ? "entry to this group"
    : `the role @${gate.target.roleName}`;
}

function describeGate(gate: Gate, n: number): string {
  const criteria = gate.criteria.map(describeCriterion).join("; ");
  const gives = whatItGives(gate);
  const lines = [
    `${n}. ${gives.charAt(0).toUpperCase()}${gives.slice(1)}, for people whose wallets pass all of: ${criteria}.`,
  ];
  if (gate.target.platform === "telegram" && gate.target.inviteLink)
    lines.push(
      `   Invite link (people ask to join, the bot lets in those who pass): ${gate.target.inviteLink}`,
    );
  if (gate.pausedAt !== undefined) {
    const why = (gate.pauseReason ?? "the platform refused the bot").trim();
    lines.push(
      `   Paused: ${/[.!?]$/.test(why) ? why : `${why}.`} Nothing is given meanwhile; the bot looks again every 10 minutes and the gate goes on by itself once this is fixed.`,
    );
  }
  return lines.join("\n");
}

/**
 * Members in grace whose warning did not reach them (direct messages closed): they will lose
 * access without knowing why unless someone tells them (issue 34).
 */
function unwarnedLine(count: number, n: number): string {
  if (count === 0) return "";
  const who = count === 1 ? "1 person in grace was" : `${count} people in grace were`;
  return `\n   ${who} not warned (direct messages closed): /gate log ${n} names them.`;
}

/** A gate's number as typed; refused with what to type when it is none. */
function gateNumber(raw: string | undefined, action: "remove" | "log"): number {
  const text = (raw ?? "").trim().replace(/^#/, "");
  if (!/^\d{1,3}$/.test(text) || Number(text) < 1)
    throw new UserError(
      text ? "invalid_number" : "missing_argument",
      text
        ? `"${sliceChars(text, 40)}" is not a gate number: /gate list numbers them (1, 2…).`
        : `Which gate? /gate ${action} <number> (/gate list numbers them).`,
    );
  return Number(text);
}

async function readCriteria(ctx: CommandContext, text: string): Promise<GateCriterion[]> {
  if (text.trim() === "")
    throw new UserError(
      "missing_argument",
      `Which criteria? ${CRITERIA_WORDS} Usage: ${ADD_USAGE}`,
    );
  return parseCriteria(text, {
    chain: ctx.chain.id,
    chains: ctx.chains.map((chain) => chain.id),
    resolveCollection: collectionResolverFor(ctx),
  });
}

async function add(ctx: CommandContext, role: RoleRef | undefined, spec: string): Promise<Reply> {
  const where = gateChat(ctx);
  await requireManager(ctx, "add or remove gates");
  if (where.platform === "telegram" && role)
    throw new UserError(
      "unexpected_argument",
      "A Telegram gate lets people into this group; it gives no role. Leave role out: /gate add <criteria>.",
    );
  const target: GateTarget =
    where.platform === "discord"
      ? discordTarget(ctx, where.chatId, role)
      : where.platform === "console"
        ? { platform: "console", chatId: where.chatId, roleName: consoleRole(role) }
        : {
            platform: "telegram",
            chatId: where.chatId,
            title: ctx.invocation.chat.title ?? "this group",
          };
  await requireGiver(ctx, where.gates, target, "add");
  // Counted before the criteria are looked up: an 11th gate is refused without reading anything.
  const existing = await where.gates.list(where.platform, where.chatId);
  if (existing.length >= MAX_GATES_PER_CHAT)
    return {
      text: `This ${where.platform === "discord" ? "server" : "group"} already has ${existing.length} gates, the most it may have. /gate remove <number> frees one; /gate list shows them.`,
      tone: "warning",
    };
  const criteria = await readCriteria(ctx, spec);
  const result = await where.gates.add({
    platform: where.platform,
    chatId: where.chatId,
    target,
    criteria,
    createdBy: personKey(ctx.invocation),
  });
  if (!result.ok) return { text: `The gate was not added: ${result.reason}`, tone: "warning" };
  const gates = await where.gates.list(where.platform, where.chatId);
  const n = gates.findIndex((gate) => gate.id === result.gate.id) + 1 || gates.length;
  const how =
    result.gate.target.platform === "telegram"
      ? "Share the invite link: the bot lets in those who pass, and asks the others to prove a wallet (/verify)."
      : "People get the role when they prove a wallet that passes (/verify), and lose it after the grace period when they stop passing.";
  // On the console the person adding it is its only member: decided at once (a wallet proved
  // before gets the role now).
  if (where.platform === "console")
    void where.gates.onProved("console", ctx.invocation.user.id, { chatId: where.chatId });
  return {
    title: `Gate ${n} added`,
    text: `${describeGate(result.gate, n)}\n${how} /gate test <wallet> checks a wallet; /gate remove ${n} removes it.`,
    tone: "success",
  };
}

async function list(ctx: CommandContext): Promise<Reply> {
  const where = gateChat(ctx);
  const gates = await where.gates.list(where.platform, where.chatId);
  if (gates.length === 0)
    return {
      text: `No gates here. People who manage the chat add one with ${ADD_USAGE}, e.g. /gate add ${CRITERIA_EXAMPLES[0]}.`,
      tone: "info",
    };
  const described: string[] = [];
  for (const [index, gate] of gates.entries())
    described.push(
      describeGate(gate, index + 1) + unwarnedLine(await where.gates.unwarned(gate), index + 1),
    );
  return {
    title: `Gates here (${gates.length} of ${MAX_GATES_PER_CHAT})`,
    text: described.join("\n"),
    footer: "/gate test <wallet> checks a wallet against them; /gate remove <number> removes one",
    tone: "info",
  };
}

async function remove(ctx: CommandContext, spec: string): Promise<Reply> {
  const where = gateChat(ctx);
  await requireManager(ctx, "add or remove gates");
  const n = gateNumber(spec, "remove");
  const removed = await where.gates.remove(where.platform, where.chatId, n, (gate) =>
    requireGiver(ctx, where.gates, gate.target, "remove"),
  );
  if (!removed)
    return { text: `There is no gate ${n} here. /gate list shows them.`, tone: "warning" };
  return {
    text: `Gate ${n} removed: ${whatItGives(removed)} is no longer given or taken away by the bot; those who have it keep it. The gates after it are renumbered (/gate list).`,
    tone: "success",
  };
}

const OUTCOME_MARK = { pass: "✓ pass", fail: "✗ fail", unknown: "? unknown" } as const;

function resultLines(results: readonly CriterionResult[]): string[] {
  return results.map(
    (result) =>
      `${OUTCOME_MARK[result.outcome]}: ${describeCriterion(result.criterion)} (${result.why})`,
  );
}

const VERDICT_WORDS = {
  pass: "passes",
  fail: "does not pass",
  unknown: "cannot be checked now (the data service did not answer): try again later",
} as const;

/**
 * /gate test <wallet|name.eth> [criteria]: the criteria given, else every gate of this chat.
 * Anyone may run it: it says what the data service says of a public wallet.
 */
async function test(ctx: CommandContext, spec: string): Promise<Reply> {
  const gates = gatesOf(ctx);
  const [first = "", ...rest] = spec.trim().split(/\s+/);
  if (first === "")
    throw new UserError(
      "missing_argument",
      `Which wallet? /gate test <wallet|name.eth> [criteria], e.g. /gate test ${DEMO} ${CRITERIA_EXAMPLES[0]}`,
    );
  const checked = checkWalletWords(first);
  if (!checked.ok) throw new UserError(checked.code, checked.message);
  const resolution = await resolveWallet(checked.value, ctx.resolver);
  if (resolution.kind !== "found") return { text: resolution.text, tone: "warning" };
  const wallet = resolution.value;
  const address = isAddressLike(wallet)
    ? wallet
    : (await ctx.api.wallets.ensByName(wallet, { signal: ctx.signal })).entity.resolvedAddress;
  const label = isAddressLike(wallet) ? fullAddress(wallet) : `${wallet} (${fullAddress(address)})`;
  const criteriaText = rest.join(" ");
  if (criteriaText !== "") {
    const criteria = await readCriteria(ctx, criteriaText);
    const verdict = await gates.test(criteria, [address]);
    // The footer names the chains the criteria read (`holds 1 Azuki on base` reads base).
    const read = [...new Set(criteria.map((c) => c.chain))];
    return {
      title: `${label} ${VERDICT_WORDS[verdict.outcome]}`,
      text: resultLines(verdict.results).join("\n"),
      tone: verdict.outcome === "pass" ? "success" : "info",
      ...(read.length === 1 && read[0] === ctx.chain.id ? {} : { chainsShown: read }),
    };
  }
  const where = gateChat(ctx);
  const mine = await where.gates.list(where.platform, where.chatId);
  if (mine.length === 0)
    return {
      text: `No gates here to test against. Give criteria: /gate test ${first} ${CRITERIA_EXAMPLES[0]}`,
      tone: "info",
    };
  const sections: string[] = [];
  for (const [index, gate] of mine.entries()) {
    const verdict = await where.gates.test(gate, [address]);
    sections.push(
      [
        `Gate ${index + 1}, ${whatItGives(gate)}: ${VERDICT_WORDS[verdict.outcome]}`,
        ...resultLines(verdict.results).map((line) => `  ${line}`),
      ].join("\n"),
    );
  }
  return { title: label, text: sections.join("\n"), tone: "info" };
}

async function log(ctx: CommandContext, spec: string): Promise<Reply> {
  const where = gateChat(ctx);
  await requireManager(ctx, "read a gate's log");
  const n = gateNumber(spec, "log");
  const gates = await where.gates.list(where.platform, where.chatId);
  if (n > gates.length)
    return { text: `There is no gate ${n} here. /gate list shows them.`, tone: "warning" };
  const csv = await where.gates.logCsv(where.platform, where.chatId, n);
  return {
    text: `Gate ${n}'s log: who got or lost ${whatItGives(gates[n - 1] as Gate)}, when and why.`,
    // Who holds what is the members' business: only the manager who asked sees it.
    confidential: { what: `gate ${n}'s log` },
    files: [
      { name: `gate-${n}-log.csv`, contentType: "text/csv", data: new TextEncoder().encode(csv) },
    ],
  };
}

const command = defineCommand({
  name: "gate",
  description: "Holder roles and gated groups: give a role or entry to people whose wallets pass",
  help: `A gate gives a Discord role (role:@Holders), or entry to a Telegram group, to people whose proved wallets (/verify) pass its criteria. ${CRITERIA_WORDS} Holdings add up over a person's wallets; behavior and spend pass on any one wallet. People are checked again as the data changes; those who stop passing keep access for a grace period, are told once, then lose it. /gate list shows the gates, /gate test <wallet|name.eth> [criteria] says what each criterion finds and why (anyone may use it), /gate remove <number> removes one and /gate log <number> sends its log as CSV. Only people who can manage the chat add or remove gates or read logs; on Discord, adding or removing one also takes what giving its role by hand takes (Manage Roles and a role above it), and a role with moderator or admin rights (Administrator, Manage Server, Ban Members…) cannot be gated. On Discord the bot needs Manage Roles and its highest role above the gate's role; on Telegram it must be an admin that can invite users and ban members. At most ${MAX_GATES_PER_CHAT} gates per server or group.`,
  options: {
    action: opt.choice("add, list, remove, test or log", ACTIONS, {
      required: true,
      placeholder: "add|list|remove|test|log",
    }),
    role: opt.role("add on Discord: the role the gate gives"),
    spec: opt.string(
      "add: the criteria; remove, log: the gate's number; test: a wallet, and criteria",
      { placeholder: "criteria|number|wallet", rest: true, maxLength: 500 },
    ),
  },
  examples: [
    `/gate test ${DEMO} holds 1 Azuki`,
    `/gate test ${DEMO} behavior collector,whale`,
    `/gate test ${DEMO} not behavior flipper`,
    `/gate test ${DEMO} volume 10 and lastpurchase 30d`,
    "/gate add role:@Holders holds 1 Azuki, not behavior flipper",
    "/gate list",
    "/gate log 1",
    "/gate remove 1",
  ],
  async run(ctx, { action, role, spec }) {
    let text = spec ?? "";
    // A number of 17-20 digits reads as a role id by position: only add takes a role, so for
    // the other actions it is what was typed (a gate number or a wallet), refused as such.
    if (action !== "add" && role) {
      if (!("id" in role) || text.trim() !== "")
        throw new UserError(
          "unexpected_argument",
          `Only /gate add takes a role. Usage: /gate ${action} <${action === "test" ? "wallet" : "number"}>`,
        );
      text = role.id;
    }
    switch (action) {
      case "add":
        return add(ctx, role, text);
      case "list":
        if (text.trim())
          throw new UserError(
            "unknown_subcommand",
            `"${sliceChars(text.trim(), 40)}" is not something /gate does: use add, list, remove, test or log.`,
          );
        return list(ctx);
      case "remove":
        return remove(ctx, text);
      case "test":
        return test(ctx, text);
      case "log":
        return log(ctx, text);
    }
  },
});

export default command;
