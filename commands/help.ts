import type { Chain } from "../src/chains.ts";
import { shownOptions } from "../src/core/chain-option.ts";
import type { AnyCommand, Platform } from "../src/core/command.ts";
import { defineCommand } from "../src/core/command.ts";
import { noSuchCommand } from "../src/core/no-such-command.ts";
import { opt } from "../src/core/options.ts";
import { usage } from "../src/core/registry.ts";
import type { Reply } from "../src/core/reply.ts";
import { UserError } from "../src/errors.ts";

/** With several chains: how to pick one, with an example on the second chain. */
function chainNote(chains: readonly Chain[]): string[] {
  const other = chains[1];
  if (!other) return [];
  return [
    `Chains: ${chains.map((chain) => chain.id).join(", ")} (default: ${chains[0]?.id}, or the chat's: /settings chain <id>). Name one with chain:${other.id} or as the first word, e.g. /top volume 1d chain:${other.id} or /top ${other.id} volume 1d.`,
  ];
}

function helpIndex(commands: readonly AnyCommand[], chains: readonly Chain[]): Reply {
  return {
    title: "Commands",
    text: [
      ...commands.map((command) => `${usage(command)}\n    ${command.description}`),
      "",
      "Arguments in <> are required, in [] optional. Options can also be given by name, like limit:20.",
      ...chainNote(chains),
    ].join("\n"),
    footer: "/help <command> shows one command in detail",
  };
}

/** Whether the description already names every choice ("add, list, remove, test or log"). */
function namesEveryChoice(description: string, choices: readonly { value: string }[]): boolean {
  const words = new Set(description.toLowerCase().match(/[a-z0-9_]+/g) ?? []);
  return choices.every((choice) => words.has(choice.value.toLowerCase()));
}

/**
 * One command in detail. Each option is named as people give it: on Discord by its own name
 * (the field they pick); on text platforms by the word the usage line shows (an option of fixed
 * values by its name, the values following its description once).
 */
function helpFor(command: AnyCommand, platform: Platform): Reply {
  const options = shownOptions(command).map(([name, option]) => {
    const choices =
      option.choices && !namesEveryChoice(option.description, option.choices)
        ? ` (${option.choices.map((choice) => choice.value).join(", ")})`
        : "";
    const fallback = option.fallback !== undefined ? `; default ${String(option.fallback)}` : "";
    const label = platform === "discord" || option.choices ? name : option.placeholder || name;
    return {
      name: `${label}${option.required ? "" : " (optional)"}`,
      value: `${option.description}${choices}${fallback}`,
    };
  });
  return {
    title: `/${command.name}`,
    text: [command.description, command.help].filter(Boolean).join("\n\n"),
    fields: [
      { name: "Usage", value: usage(command) },
      ...options,
      { name: "Examples", value: command.examples.join("\n") || usage(command) },
    ],
  };
}

/** /help reads the registry it is part of, so it needs the list at build time. */
export function createHelpCommand(list: () => readonly AnyCommand[]) {
  return defineCommand({
    name: "help",
    description: "Every command with its arguments, or one command in detail",
    options: { command: opt.string("A command name", { placeholder: "command" }) },
    examples: ["/help", "/help top"],
    chainless: true,
    async run(ctx, { command }) {
      // The commands as served here (with the chain option when there is a choice of chains).
      const commands = ctx.commands.length > 0 ? ctx.commands : list();
      if (command === undefined) return helpIndex(commands, ctx.chains);
      const name = command.replace(/^\//, "").toLowerCase();
      const found = commands.find((candidate) => candidate.name === name);
      if (!found)
        throw new UserError(
          "unknown_command",
          noSuchCommand(
            name,
            commands.map((c) => c.name),
          ),
        );
      return helpFor(found, ctx.invocation.platform);
    },
  });
}
