/**
 * What the data service says of a person's proved wallets against a gate's criteria. Holdings
 * add up over the wallets (endpoint 13, per wallet); behavior (endpoint 1) and spend (endpoint 5)
 * pass when one wallet passes. Every read goes through the chain's normal client (its cache and
 * upstream budget) as background work, so re-checks never crowd out people's commands.
 *
 * A failed read (an ApiError, a timeout, the budget) makes that criterion "unknown", never
 * "fail": the gate service must not take a role away because the service was down.
 */

import type { FinancialFilters } from "../api/audiences.ts";
import { BudgetExceededError } from "../api/budget.ts";
import type { CallOptions } from "../api/call.ts";
import type { ApiClient } from "../api/client.ts";
import { ApiError } from "../api/errors.ts";
import { KNOWN_CHAINS } from "../chains.ts";
import { behaviorLabel, formatDecimal } from "../core/format.ts";
import { type CountedWallets, counted, walletsOn } from "../core/person-wallets.ts";
import type { Logger } from "../log.ts";
import { chainWords } from "./criteria.ts";
import type {
  BehaviorCriterion,
  CriterionResult,
  GateCriterion,
  GateEvaluator,
  GateVerdict,
  HoldsCriterion,
  SpendCriterion,
} from "./types.ts";

/** Endpoint 13's largest page. */
const MAX_PAGE = 500;

export interface ApiGateEvaluatorDeps {
  /** Each served chain's client, by chain id (the runtime's `apis`). */
  apis: ReadonlyMap<string, ApiClient>;
  /**
   * Skip the cache: right after a proof the person expects what they hold now. Re-checks may
   * read cached answers, which are at most as old as the data's freshness.
   */
  fresh?: boolean;
  signal?: AbortSignal;
  logger?: Logger;
}

/** "Azuki", or the contract's address when the name is not known. */
const collectionWords = (c: HoldsCriterion) => c.name ?? c.contract;

function listWords(names: readonly string[], last: "or" | "and"): string {
  return names.length <= 1
    ? (names[0] ?? "")
    : `${names.slice(0, -1).join(", ")} ${last} ${names.at(-1)}`;
}

/** Why a read failed, in words for /gate test and the log (no URL, no key). */
function failureWords(error: unknown): string {
  if (error instanceof ApiError) {
    switch (error.kind) {
      case "rate_limited":
        return "the data service is busy";
      case "timeout":
        return "the data service did not answer in time";
      case "unavailable":
        return "the data service is unavailable";
      case "unauthorized":
        return "the data service refused the bot's key";
      case "invalid_response":
        return "the data service sent an answer I could not read";
      case "not_found":
        return "the data service has nothing for these wallets";
      case "bad_request":
        return "the data service refused the request";
    }
  }
  if (error instanceof BudgetExceededError) return "the bot's data-service budget is spent for now";
  if (error instanceof Error && (error.name === "AbortError" || error.name === "DeadlineError"))
    return "the check was cut short";
  return "the check failed";
}

export class ApiGateEvaluator implements GateEvaluator {
  constructor(private readonly deps: ApiGateEvaluatorDeps) {}

  async evaluate(
    criteria: readonly GateCriterion[],
    wallets: readonly string[] | CountedWallets,
    signal?: AbortSignal,
    how: { explain?: boolean } = {},
  ): Promise<GateVerdict> {
    const options = this.options(signal);
    const explain = how.explain === true;
    const held = counted(wallets);
    const results = await Promise.all(
      criteria.map(async (c) => {
        // A collection's holdings count the wallets delegated for its contract too (issue 37).
        const on = walletsOn(held, c.chain, c.kind === "holds" ? c.contract : undefined);
        const result = await this.one(c, on, options, explain);
        // A registry that did not answer may hide a delegated wallet: its "no" is not known.
        if (result.outcome === "fail" && held.unknownOn.has(c.chain))
          return {
            ...result,
            outcome: "unknown" as const,
            why: `unknown: the bot could not read delegations on ${chainWords(c.chain)} (${result.why})`,
          };
        return result;
      }),
    );
    const outcome = results.some((r) => r.outcome === "fail")
      ? "fail"
      : results.some((r) => r.outcome === "unknown")
        ? "unknown"
        : "pass";
    return { outcome, results };
  }

  /** The reads' options: background work, fresh or not, ended by the caller's signal. */
  private options(signal: AbortSignal | undefined): CallOptions {
    const signals = [this.deps.signal, signal].filter((s): s is AbortSignal => s !== undefined);
    const ends = signals.length > 1 ? AbortSignal.any(signals) : signals[0];
    return {
      background: true,
      ...(this.deps.fresh ? { fresh: true } : {}),
      ...(ends ? { signal: ends } : {}),
    };
  }

  private async one(
    c: GateCriterion,
    wallets: readonly string[],
    options: CallOptions,
    explain: boolean,
  ): Promise<CriterionResult> {
    const unique = [...new Map(wallets.map((w) => [w.toLowerCase(), w])).values()];
    if (unique.length === 0)
      return { criterion: c, outcome: "fail", why: "no proved wallet (prove one with /verify)" };
    const api = this.deps.apis.get(c.chain);
    if (!api)
      return {
        criterion: c,
        outcome: "unknown",
        why: `this bot does not read ${chainWords(c.chain)} (the criterion cannot be checked)`,
      };
    try {
      switch (c.kind) {
        case "holds":
          return await this.holds(api, c, unique, options);
        case "behavior":
          return await this.behavior(api, c, unique, options);
        case "spend":
          return await this.spend(api, c, unique, options, explain);
      }
    } catch (error) {
      return this.unknown(c, error);
    }
  }

  private unknown(c: GateCriterion, error: unknown): CriterionResult {
    if (!(error instanceof ApiError) && !(error instanceof BudgetExceededError))
      this.deps.logger?.warn({ err: error, kind: c.kind }, "gate criterion check failed");
    return { criterion: c, outcome: "unknown", why: `unknown: ${failureWords(error)}` };
  }

  /**
   * Tokens of the collection over the wallets, read page by page only as far as `min` needs; a
   * wallet whose read fails makes the answer unknown unless the others already reach `min`.
   */
  private async holds(
    api: ApiClient,
    c: HoldsCriterion,
    wallets: readonly string[],
    options: CallOptions,
  ): Promise<CriterionResult> {
    let count = 0;
    let complete = true;
    let failure: unknown;
    for (const wallet of wallets) {
      if (count >= c.min) {
        complete = false;
        break;
      }
      try {
        const read = await this.tokensOf(api, c, wallet, c.min - count, options);
        count += read.count;
        if (!read.complete) complete = false;
      } catch (error) {
        failure ??= error;
      }
    }
    const name = collectionWords(c);
    const held = `${complete ? "" : "at least "}${count.toLocaleString("en-US")}`;
    const needs = `needs ${c.min.toLocaleString("en-US")}`;
    const spread = wallets.length > 1 ? ` over ${wallets.length} wallets` : "";
    if (count >= c.min)
      return { criterion: c, outcome: "pass", why: `holds ${held} of ${name}${spread}, ${needs}` };
    if (failure !== undefined) {
      const result = this.unknown(c, failure);
      return {
        ...result,
        why: `${result.why} (holds ${held} of ${name} in the wallets read, ${needs})`,
      };
    }
    return { criterion: c, outcome: "fail", why: `holds ${held} of ${name}${spread}, ${needs}` };
  }

  /** One wallet's tokens of the collection, read until there are `wanted` of them or no more. */
  private async tokensOf(
    api: ApiClient,
    c: HoldsCriterion,
    wallet: string,
    wanted: number,
    options: CallOptions,
  ): Promise<{ count: number; complete: boolean }> {
    let count = 0;
    let offset = 0;
    for (;;) {
      // One more than needed: the same single request tells "holds 1" from "holds at least 1".
      const limit = Math.min(MAX_PAGE, Math.max(1, wanted - count) + 1);
      const { tokens } = await api.foundational.nftsByOwner(
        wallet,
        { contractAddress: c.contract, limit, offset },
        options,
      );
      // ERC1155 tokens carry a quantity; ERC721 tokens are one each.
      for (const token of tokens) count += Math.max(0, Number(token.quantity ?? "1")) || 0;
      if (tokens.length < limit) return { count, complete: true };
      if (count >= wanted) return { count, complete: false };
      offset += tokens.length;
    }
  }

  private async behavior(
    api: ApiClient,
    c: BehaviorCriterion,
    wallets: readonly string[],
    options: CallOptions,
  ): Promise<CriterionResult> {
    const { aggregatedBehaviors } = await api.audiences.behaviorsByWallets(wallets, options);
    const set = new Set(c.behaviors);
    let inside = 0;
    const seen: string[] = [];
    for (const row of aggregatedBehaviors) {
      const n = Number(row.walletsCount);
      if (!(n > 0)) continue;
      if (set.has(row.behavior)) inside += n;
      seen.push(behaviorLabel(row.behavior));
    }
    // A wallet the service sends no row for has no label: it is outside any set.
    const outside = Math.max(0, wallets.length - inside);
    const wanted = listWords(c.behaviors.map(behaviorLabel), "or");
    const one = wallets.length === 1;
    // What the wallets are, in the data service's words: "Collector", "Collector and Flipper".
    const are = seen.length > 0 ? listWords(seen, "and") : undefined;
    const is = one
      ? are
        ? `the wallet is ${are}`
        : "the wallet has no behavior label"
      : are
        ? `the wallets are ${are}`
        : "no wallet has a behavior label";
    if (!c.not)
      return inside >= 1
        ? {
            criterion: c,
            outcome: "pass",
            why: one ? is : `${inside} of ${wallets.length} wallets are ${wanted}`,
          }
        : {
            criterion: c,
            outcome: "fail",
            why: one
              ? `${is}, not ${wanted}`
              : `none of the ${wallets.length} wallets is ${wanted} (${is.replace(/^the wallets are /, "they are ")})`,
          };
    return outside >= 1
      ? {
          criterion: c,
          outcome: "pass",
          why: one
            ? `${is}, not ${wanted}`
            : `${outside} of ${wallets.length} wallets are not ${wanted}`,
        }
      : {
          criterion: c,
          outcome: "fail",
          why: one ? is : `all ${wallets.length} wallets are ${wanted}`,
        };
  }

  private async spend(
    api: ApiClient,
    c: SpendCriterion,
    wallets: readonly string[],
    options: CallOptions,
    explain: boolean,
  ): Promise<CriterionResult> {
    const filters: FinancialFilters = {};
    if (c.volumeGte !== undefined) filters.nftsPurchasesVolumeGte = c.volumeGte;
    if (c.priceAvgGte !== undefined) filters.nftsPurchasesPriceAvgGte = c.priceAvgGte;
    if (c.collectionsGte !== undefined) filters.collectionsOwnedCountGte = String(c.collectionsGte);
    if (c.lastPurchaseDaysLte !== undefined)
      filters.daysSinceLastPurchaseLte = String(c.lastPurchaseDaysLte);
    const stats = await api.audiences.financialStatsByWallets(wallets, filters, options);
    const passing = Number(stats.walletsCount);
    const needs = spendWords(c);
    // What the wallets do have, beside what is needed (one more read, cached like any other):
    // for a fail, and for a pass a person reads (/gate test), not a decision's pass.
    const has =
      passing < 1 || (explain && wallets.length === 1)
        ? await this.spendFigures(api, c, wallets, options)
        : undefined;
    if (passing >= 1)
      return {
        criterion: c,
        outcome: "pass",
        why:
          wallets.length === 1
            ? has
              ? `${has}; needs ${needs}`
              : `the wallet has ${needs}`
            : `${passing} of ${wallets.length} wallets have ${needs}`,
      };
    return {
      criterion: c,
      outcome: "fail",
      why: `no wallet has ${needs}${has ? ` (${has})` : ""}`,
    };
  }

  /**
   * What the wallets have, in the criterion's terms ("it has a volume of 12.3 ETH"); undefined
   * when the read fails, since the verdict is already known.
   */
  private async spendFigures(
    api: ApiClient,
    c: SpendCriterion,
    wallets: readonly string[],
    options: CallOptions,
  ): Promise<string | undefined> {
    try {
      const all = await api.audiences.financialStatsByWallets(wallets, {}, options);
      if (Number(all.walletsCount) === 0) return "the data service has no purchases for them";
      const symbol = KNOWN_CHAINS[c.chain]?.symbol ?? "";
      const parts: string[] = [];
      if (c.volumeGte !== undefined)
        parts.push(
          `a volume of ${formatDecimal(String(all.nftsPurchasesVolumeAvg))} ${symbol}`.trim(),
        );
      if (c.priceAvgGte !== undefined)
        parts.push(
          `an average price of ${formatDecimal(String(all.nftsPurchasesPriceAvg))} ${symbol}`.trim(),
        );
      if (c.collectionsGte !== undefined)
        parts.push(`NFTs of ${formatDecimal(String(all.collectionsOwnedCountAvg), 1)} collections`);
      if (parts.length === 0) return undefined;
      return wallets.length === 1
        ? `it has ${listWords(parts, "and")}`
        : `on average per wallet: ${listWords(parts, "and")}`;
    } catch {
      return undefined;
    }
  }
}

/** A spend criterion's filters, as what a wallet must have. */
function spendWords(c: SpendCriterion): string {
  const symbol = KNOWN_CHAINS[c.chain]?.symbol ?? "";
  const parts: string[] = [];
  if (c.volumeGte !== undefined)
    parts.push(`NFT purchase volume at least ${formatDecimal(c.volumeGte)} ${symbol}`.trim());
  if (c.priceAvgGte !== undefined)
    parts.push(`average price at least ${formatDecimal(c.priceAvgGte)} ${symbol}`.trim());
  if (c.collectionsGte !== undefined)
    parts.push(`NFTs of at least ${c.collectionsGte} collections`);
  if (c.lastPurchaseDaysLte !== undefined)
    parts.push(`a purchase within ${c.lastPurchaseDaysLte} days`);
  return listWords(parts, "and");
}
