import type { AnyCommand } from "../src/core/command.ts";
import audience from "./audience.ts";
import { createHelpCommand } from "./help.ts";
import nft from "./nft.ts";
import top from "./top.ts";
import whois from "./whois.ts";

/** Every chat command, in the order /help lists them. Names must be unique (checked at start). */
export function allCommands(): AnyCommand[] {
  const commands: AnyCommand[] = [whois, audience, top, nft];
  commands.push(createHelpCommand(() => commands));
  return commands;
}
