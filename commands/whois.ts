import { ApiError, apiErrorLevel } from "../src/api/errors.ts";
import type { EnsEntity } from "../src/api/schemas.ts";
import { isAddressLike } from "../src/api/validate.ts";
import type { CommandContext } from "../src/core/command.ts";
import { defineCommand } from "../src/core/command.ts";
import { behaviorLabel, explorer, formatTimestamp, fullAddress } from "../src/core/format.ts";
import { opt } from "../src/core/options.ts";
import type { Reply, ReplyField } from "../src/core/reply.ts";

/** The behavior category of one wallet, or a note why it is missing: never fails the answer. */
async function behaviorOf(ctx: CommandContext, address: string): Promise<string> {
  try {
    const { aggregatedBehaviors } = await ctx.api.audiences.behaviorsByWallets([address], {
      signal: ctx.signal,
    });
    const top =
      aggregatedBehaviors.find((entry) => entry.walletsCount !== "0") ?? aggregatedBehaviors[0];
    return top ? behaviorLabel(top.behavior) : "no behavior label (never engaged with an NFT)";
  } catch (error) {
    if (error instanceof ApiError) {
      ctx.logger[apiErrorLevel(error)]({ err: error }, "behavior lookup failed for /whois");
      return "unavailable right now";
    }
    throw error;
  }
}

function expiry(entity: EnsEntity, now: Date): string {
  if (entity.validTillTimestamp === null || entity.validTillTimestamp === undefined) {
    return "never (no expiry: DNS name or unexpiring record)";
  }
  return formatTimestamp(entity.validTillTimestamp, now);
}

function nameReply(entity: EnsEntity, behavior: string, now: Date, explorerUrl: string): Reply {
  const address = fullAddress(entity.resolvedAddress);
  const fields: ReplyField[] = [
    { name: "Address", value: address },
    { name: "Behavior", value: behavior, inline: true },
    { name: "Expires", value: expiry(entity, now), inline: true },
  ];
  if (entity.validFromTimestamp)
    fields.push({
      name: "Address set",
      value: formatTimestamp(entity.validFromTimestamp, now),
      inline: true,
    });
  if (entity.parentName) fields.push({ name: "Parent", value: entity.parentName, inline: true });
  return {
    title: entity.name,
    url: explorer.address(explorerUrl, address),
    fields,
    footer: "ENS forward lookup",
  };
}

function addressReply(
  address: string,
  entities: EnsEntity[],
  behavior: string,
  explorerUrl: string,
): Reply {
  const reply: Reply = {
    title: fullAddress(address),
    url: explorer.address(explorerUrl, address),
    fields: [
      { name: "Behavior", value: behavior, inline: true },
      { name: "ENS names", value: String(entities.length), inline: true },
    ],
    footer: "ENS reverse lookup",
  };
  if (entities.length === 0) {
    reply.text = "No ENS name points to this address.";
  } else {
    reply.table = {
      columns: ["Name", "Expires", "Parent"],
      rows: entities.map((entity) => [
        entity.name,
        entity.validTillTimestamp ? entity.validTillTimestamp.slice(0, 10) : "never",
        entity.parentName ?? "",
      ]),
    };
  }
  return reply;
}

export default defineCommand({
  name: "whois",
  description: "Look up an ENS name's address, or every ENS name of an address",
  help: "Give an ENS name (vitalik.eth) to see its address, expiry and parent, or an address to see all its names. Both show the wallet's behavior category.",
  options: {
    query: {
      ...opt.wallet("An ENS name or a wallet address", { required: true }),
      placeholder: "name.eth|0x…",
    },
  },
  examples: ["/whois vitalik.eth", "/whois 0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045"],
  async run(ctx, { query }) {
    const now = ctx.now();
    // The option gives a checksummed address or a normalized ENS name.
    if (isAddressLike(query)) {
      const address = query;
      const [names, behavior] = await Promise.all([
        ctx.api.wallets.ensByAddress(address, { signal: ctx.signal }).then(
          (result) => result.entities,
          (error: unknown) => {
            if (error instanceof ApiError && error.kind === "not_found") return [];
            throw error;
          },
        ),
        behaviorOf(ctx, address),
      ]);
      ctx.resolver.rememberWallets([address]);
      return addressReply(address, names, behavior, ctx.chain.explorer);
    }
    const { entity } = await ctx.api.wallets.ensByName(query, { signal: ctx.signal });
    const behavior = await behaviorOf(ctx, entity.resolvedAddress);
    ctx.resolver.rememberWallets([entity.resolvedAddress]);
    return nameReply(entity, behavior, now, ctx.chain.explorer);
  },
});
