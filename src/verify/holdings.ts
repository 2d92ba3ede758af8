/**
 * The wallets that count for a person (issue 37): their proved wallets, each on the chains its
 * proof holds on, and the cold wallets that delegated to them on delegate.xyz, read from each
 * chain's registry where the bot has the chain's RPC URL. Gates re-read the delegations at each
 * decision (at most once a minute a wallet and chain); other readers take what was read last.
 */
import type { Transport } from "viem";
import type { Chain } from "../chains.ts";
import type { HeldWallet } from "../core/person-wallets.ts";
import type { Logger } from "../log.ts";
import type { PersonWallet, Store, WalletKind } from "../store/types.ts";
import { redactedRpcError } from "./rpc-error.ts";
import type { PersonHoldings } from "./types.ts";

/** A wallet and chain read this recently is not read again by a refresh. */
export const DELEGATIONS_FRESH_MS = 60_000;

export interface HoldingsDeps {
  store: Pick<Store, "wallets" | "delegations">;
  chains: readonly Chain[];
  now: () => number;
  logger: Logger;
  transport?: ((chain: Chain, rpcUrl: string) => Transport) | undefined;
}

type ReadableChain = Chain & { chainId: number; rpcUrl: string };

export function personHoldings(deps: HoldingsDeps) {
  const { store, logger } = deps;
  /** The reads under way, by `${hot} ${chain}`: whether each succeeded. */
  const reading = new Map<string, Promise<boolean>>();
  const readable = deps.chains.filter(
    (chain): chain is ReadableChain => chain.chainId !== undefined && chain.rpcUrl !== undefined,
  );

  /** The proved wallets with their kind, told from the kept proof for those proved before. */
  async function provedOf(platform: string, userId: string) {
    const wallets = (await store.wallets.list(platform, userId)).filter(
      (wallet) => wallet.provedAt !== undefined,
    );
    return Promise.all(
      wallets.map(async (wallet) => {
        if (wallet.kind !== undefined) return { ...wallet, kind: wallet.kind };
        const kept = await store.wallets.proof(platform, userId, wallet.address);
        const { keptKind } = await import("./proof.ts");
        const kind = kept
          ? await keptKind(wallet.address, kept.message, kept.signature)
          : "contract";
        // Told again at the next read if it cannot be kept (a full disk): logged, never fatal.
        await store.wallets
          .setKind(platform, userId, wallet.address, kind)
          .catch((error: unknown) => logger.warn({ err: error }, "could not keep a wallet's kind"));
        return { ...wallet, kind };
      }),
    );
  }

  /** Reads the registry for each (hot wallet, chain) not read within a minute; the chains that failed. */
  async function refresh(
    proved: readonly (PersonWallet & { kind: WalletKind })[],
    signal: AbortSignal | undefined,
  ): Promise<Set<string>> {
    const failed = new Set<string>();
    if (readable.length === 0 || proved.length === 0) return failed;
    const at = deps.now();
    const readAt = await store.delegations.readAt(proved.map((wallet) => wallet.address));
    const due = proved.flatMap((wallet) =>
      readable
        .filter((chain) => wallet.kind === "eoa" || wallet.chains.includes(chain.id))
        .filter(
          (chain) =>
            at - (readAt.get(`${wallet.address} ${chain.id}`) ?? 0) >= DELEGATIONS_FRESH_MS,
        )
        .map((chain) => ({ wallet, chain })),
    );
    if (due.length === 0) return failed;
    const { incomingDelegations } = await import("./delegation.ts");
    await Promise.all(
      due.map(async ({ wallet, chain }) => {
        // One read at a time of a wallet on a chain (a proof's and its gates' reads meet).
        const key = `${wallet.address} ${chain.id}`;
        const running = reading.get(key);
        if (running) {
          if (!(await running)) failed.add(chain.id);
          return;
        }
        const read = (async () => {
          try {
            const found = await incomingDelegations({
              chain,
              hot: wallet.address as `0x${string}`,
              transport: deps.transport,
              signal,
            }).catch((error: unknown) => {
              logger.warn(
                { chain: chain.id, err: redactedRpcError(error) },
                "could not read delegations: what depends on them is unknown",
              );
              return undefined;
            });
            if (!found) return false;
            // A write that fails (a full disk) leaves what was known: unknown for now, said so.
            await store.delegations.put(wallet.address, chain.id, found, deps.now());
            return true;
          } catch (error) {
            logger.warn(
              { chain: chain.id, err: error },
              "could not keep the delegations read: what depends on them is unknown",
            );
            return false;
          }
        })();
        reading.set(key, read);
        try {
          if (!(await read)) failed.add(chain.id);
        } finally {
          reading.delete(key);
        }
      }),
    );
    return failed;
  }

  return {
    /**
     * The person's wallets as they count. `refresh` re-reads the registries first (gates do, at
     * each decision); a chain whose read failed is in `unknownOn`.
     */
    async of(
      platform: string,
      userId: string,
      options: { refresh?: boolean; signal?: AbortSignal | undefined } = {},
    ): Promise<PersonHoldings> {
      const proved = await provedOf(platform, userId);
      const unknownOn = options.refresh ? await refresh(proved, options.signal) : new Set<string>();
      const delegations = (await store.delegations.ofPeople(platform, [userId])).get(userId) ?? [];
      const wallets: HeldWallet[] = proved.map((wallet) => ({
        address: wallet.address,
        how: wallet.kind === "eoa" ? "signature" : "contract",
        chains: wallet.kind === "eoa" ? "all" : wallet.chains,
      }));
      // A delegation counts only to a proved wallet whose proof holds on the delegation's chain.
      const holdsOn = (hot: string, chain: string) =>
        proved.some(
          (wallet) =>
            wallet.address === hot && (wallet.kind === "eoa" || wallet.chains.includes(chain)),
        );
      for (const delegation of delegations) {
        if (!delegation.counts || !holdsOn(delegation.hot, delegation.chain)) continue;
        wallets.push({
          address: delegation.cold,
          how: "delegation",
          chains: [delegation.chain],
          via: delegation.hot,
          ...(delegation.contract === "" ? {} : { contract: delegation.contract }),
        });
      }
      return { wallets, unknownOn, proved, delegations, readOn: readable.map((chain) => chain.id) };
    },
  };
}
