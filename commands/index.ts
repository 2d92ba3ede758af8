import type { AnyCommand } from "../src/core/command.ts";
import alerts from "./alerts.ts";
import audience from "./audience.ts";
import behaviors from "./behaviors.ts";
import common from "./common.ts";
import contracts from "./contracts.ts";
import digest from "./digest.ts";
import gate from "./gate.ts";
import { createHelpCommand } from "./help.ts";
import link from "./link.ts";
import nft from "./nft.ts";
import owners from "./owners.ts";
import profile from "./profile.ts";
import report from "./report.ts";
import reports from "./reports.ts";
import segment from "./segment.ts";
import settings from "./settings.ts";
import stats from "./stats.ts";
import subscribe from "./subscribe.ts";
import subscriptions from "./subscriptions.ts";
import top from "./top.ts";
import unlink from "./unlink.ts";
import unsubscribe from "./unsubscribe.ts";
import verify from "./verify.ts";
import wallet from "./wallet.ts";
import wallets from "./wallets.ts";
import walletstats from "./walletstats.ts";
import watch from "./watch.ts";
import whois from "./whois.ts";

/**
 * Every chat command, in the order /help lists them, the features' own (`extra`, from the feature
 * list) before /help. Names must be unique (checked at start).
 */
export function allCommands(extra: readonly AnyCommand[] = []): AnyCommand[] {
  const commands: AnyCommand[] = [
    whois,
    audience,
    top,
    nft,
    behaviors,
    contracts,
    wallet,
    owners,
    common,
    stats,
    walletstats,
    profile,
    segment,
    subscribe,
    alerts,
    unsubscribe,
    subscriptions,
    digest,
    watch,
    verify,
    wallets,
    report,
    reports,
    link,
    unlink,
    gate,
    settings,
    ...extra,
  ];
  commands.push(createHelpCommand(() => commands));
  return commands;
}
