import { z } from "zod";
import { type Chain, chainList } from "../chains.ts";
import { UserError } from "../errors.ts";
import { sliceChars } from "../strings.ts";
import type { AnyCommand, AnyOption, OptionDef } from "./command.ts";
import { unwrap } from "./links.ts";

/**
 * The `chain` option every command that reads data takes, added here once (by the runtime, for
 * the chains it serves) rather than in each command: a Discord choice, `chain:base` or a leading
 * chain word on text platforms. With one chain it is hidden (nothing to choose, so nothing to
 * show on Discord, in /help or in usage lines) but `chain:<id>` is still understood, so a
 * command copied from elsewhere gets a clear answer rather than "I did not expect".
 */

export const CHAIN_OPTION = "chain";

/** "There is no chain "x" here: this bot serves ethereum, base or polygon." */
export function unknownChainMessage(given: string, chains: readonly Chain[]): string {
  return `There is no chain "${sliceChars(given, 32)}" here: this bot serves ${chainList(chains)}.`;
}

/** The configured chain a person means (its id or name, any case), or undefined. */
export function findChain(chains: readonly Chain[], given: string): Chain | undefined {
  const key = unwrap(given).trim().toLowerCase();
  return chains.find((chain) => chain.id === key || chain.name.toLowerCase() === key);
}

/** The configured chain named, or a UserError listing the configured ones. */
export function chainNamed(chains: readonly Chain[], given: string): Chain {
  const chain = findChain(chains, given);
  if (!chain)
    throw new UserError("unknown_chain", unknownChainMessage(given, chains), { input: given });
  return chain;
}

export function chainOption(chains: readonly Chain[]): OptionDef<string, false> {
  return {
    description: `Which chain (${chainList(chains)}; default: this chat's)`,
    kind: "string",
    required: false,
    placeholder: "chain",
    choices: chains.map((chain) => ({ name: chain.name, value: chain.id })),
    onlyIfValid: true,
    ...(chains.length < 2 ? { hidden: true } : {}),
    schema: z.string().transform((raw, ctx) => {
      const chain = findChain(chains, raw);
      if (chain) return chain.id;
      ctx.issues.push({
        code: "custom",
        message: unknownChainMessage(raw, chains),
        input: raw,
        params: { errorCode: "unknown_chain" },
      });
      return z.NEVER;
    }),
  };
}

/**
 * The command as the runtime serves it: with the chain option first (so a leading chain word is
 * read as the chain), unless it reads no chain's data or defines a `chain` option of its own.
 */
export function withChainOption(command: AnyCommand, option: AnyOption): AnyCommand {
  if (command.chainless || CHAIN_OPTION in command.options) return command;
  return { ...command, options: { [CHAIN_OPTION]: option, ...command.options } };
}

/** The commands as served on these chains: each that reads data with the chain option. */
export function servedCommands(
  commands: readonly AnyCommand[],
  chains: readonly Chain[],
): AnyCommand[] {
  const option = chainOption(chains);
  return commands.map((command) => withChainOption(command, option));
}

/** The options people see: hidden ones left out. */
export function shownOptions(command: AnyCommand): [string, AnyOption][] {
  return Object.entries(command.options).filter(([, option]) => !option.hidden);
}

/** "Spam data is not available on Base.": what a spam filter, button or report meets there. */
export function spamUnavailable(chain: Pick<Chain, "name">): string {
  return `Spam data is not available on ${chain.name}.`;
}
