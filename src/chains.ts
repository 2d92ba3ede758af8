import { z } from "zod";

/**
 * The blockchains the bot serves. The data service has one base URL per chain and spam detection
 * on two of them (API-SPEC: "The base address is chain specific"; "Spam detection is available on
 * two chains"), so every read names its chain, and a reply shows that chain's symbol, explorer and
 * marketplace.
 */
export interface Chain {
  /** Lower-case id people type and the store keeps: "ethereum", "base". */
  id: string;
  /** Shown in replies: "Ethereum". */
  name: string;
  /** The data service's base URL for this chain; undefined: the embedded simulator's. */
  baseUrl: string | undefined;
  /** This chain's API key; undefined: API_KEY. */
  apiKey: string | undefined;
  /** The native currency amounts are in: "ETH", "POL". */
  symbol: string;
  /** Block explorer, without a trailing slash: https://etherscan.io */
  explorer: string;
  /** Marketplace path for a collection, e.g. https://opensea.io/assets/base (address appended). */
  marketplace: string | undefined;
  /** Whether the data service detects spam on this chain (spam flags, buttons, /report). */
  spam: boolean;
  /** The EIP-155 chain id wallets sign for (/verify's messages); undefined: /verify is off here. */
  chainId: number | undefined;
  /**
   * A JSON-RPC endpoint of the chain, to check contract wallets' signatures (ERC-1271, ERC-6492)
   * on /verify and read delegate.xyz's registry (issue 37); undefined: only ordinary accounts
   * (EOAs) can be proved, which needs no node, and no delegation is read.
   */
  rpcUrl: string | undefined;
}

type Known = Omit<Chain, "id" | "baseUrl" | "apiKey" | "rpcUrl">;

/**
 * What the bot knows of common chains: CHAINS=base=https://… needs no more. Which two chains have
 * spam detection is the service's to say; ethereum and polygon are assumed, and `spam` in the JSON
 * form overrides it.
 */
export const KNOWN_CHAINS: Readonly<Record<string, Known>> = {
  ethereum: {
    name: "Ethereum",
    chainId: 1,
    symbol: "ETH",
    explorer: "https://etherscan.io",
    marketplace: "https://opensea.io/assets/ethereum",
    spam: true,
  },
  base: {
    name: "Base",
    chainId: 8453,
    symbol: "ETH",
    explorer: "https://basescan.org",
    marketplace: "https://opensea.io/assets/base",
    spam: false,
  },
  polygon: {
    name: "Polygon",
    chainId: 137,
    symbol: "POL",
    explorer: "https://polygonscan.com",
    marketplace: "https://opensea.io/assets/matic",
    spam: true,
  },
  arbitrum: {
    name: "Arbitrum One",
    chainId: 42161,
    symbol: "ETH",
    explorer: "https://arbiscan.io",
    marketplace: "https://opensea.io/assets/arbitrum",
    spam: false,
  },
  optimism: {
    name: "OP Mainnet",
    chainId: 10,
    symbol: "ETH",
    explorer: "https://optimistic.etherscan.io",
    marketplace: "https://opensea.io/assets/optimism",
    spam: false,
  },
};

export const DEFAULT_CHAIN_ID = "ethereum";

/**
 * The chains the embedded simulator serves, each a world of its own (src/simulator); ethereum
 * and polygon have spam data. With no URL set, the bot configures them all.
 */
export const SIMULATOR_CHAIN_IDS = ["ethereum", "base", "polygon"] as const;

/** A chain id: what people type after chain: and what the store keys rows by. */
const CHAIN_ID = /^[a-z][a-z0-9-]{0,31}$/;

const httpUrl = z
  .url({ protocol: /^https?$/, error: "must be an http(s) URL" })
  .transform((url) => url.replace(/\/+$/, ""));

const JsonChain = z.strictObject({
  id: z
    .string()
    .regex(CHAIN_ID, "must be 1 to 32 characters of a-z, 0-9 and -, starting with a letter"),
  name: z.string().trim().min(1).max(40).optional(),
  baseUrl: httpUrl.optional(),
  apiKey: z.string().min(1).optional(),
  symbol: z
    .string()
    .regex(/^[A-Za-z0-9.]{1,10}$/, "must be 1 to 10 letters or digits")
    .optional(),
  explorer: httpUrl.optional(),
  marketplace: httpUrl.optional(),
  spam: z.boolean().optional(),
  chainId: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER).optional(),
  rpcUrl: httpUrl.optional(),
});

export class ChainsError extends Error {
  override name = "ChainsError";
}

/**
 * CHAINS, in its compact form (`ethereum=https://…,base=https://…`) or as a JSON array of chain
 * objects; the first chain is the default. Unknown ids need the JSON form with name, symbol and
 * explorer. Nothing set: one chain, ethereum, on `apiBaseUrl` (undefined: the simulator's).
 * Throws a ChainsError naming what is wrong (never an API key's value).
 */
export function parseChains(value: string | undefined, apiBaseUrl: string | undefined): Chain[] {
  const text = value?.trim() ?? "";
  if (text === "") return [complete({ id: DEFAULT_CHAIN_ID, baseUrl: apiBaseUrl })];
  const given = text.startsWith("[") ? fromJson(text) : fromCompact(text);
  if (given.length === 0) throw new ChainsError("names no chain");
  const seen = new Set<string>();
  for (const chain of given) {
    if (seen.has(chain.id)) throw new ChainsError(`names chain "${chain.id}" twice`);
    seen.add(chain.id);
  }
  return given.map(complete);
}

function fromCompact(text: string): z.infer<typeof JsonChain>[] {
  return text.split(",").map((part, index) => {
    const entry = part.trim();
    const equals = entry.indexOf("=");
    const id = (equals < 0 ? entry : entry.slice(0, equals)).trim().toLowerCase();
    const url = equals < 0 ? "" : entry.slice(equals + 1).trim();
    if (!CHAIN_ID.test(id))
      throw new ChainsError(
        `entry ${index + 1} must be id=https://… with an id of a-z, 0-9 and - (e.g. base=https://…)`,
      );
    if (url === "") return { id };
    const parsed = httpUrl.safeParse(url);
    if (!parsed.success) throw new ChainsError(`the URL of chain "${id}" must be an http(s) URL`);
    return { id, baseUrl: parsed.data };
  });
}

function fromJson(text: string): z.infer<typeof JsonChain>[] {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new ChainsError("is not valid JSON (it starts with [)");
  }
  const parsed = z.array(JsonChain).safeParse(raw);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const [index, field] = issue?.path ?? [];
  const where =
    typeof index === "number" ? `chain ${index + 1}${field ? `, field ${String(field)}` : ""}` : "";
  // The message of a field check, never the value (an API key; an RPC URL may hold one too).
  const message =
    field === "apiKey"
      ? "must be a non-empty string"
      : field === "rpcUrl"
        ? "must be an http(s) URL"
        : (issue?.message ?? "is not valid");
  throw new ChainsError(`${where ? `${where}: ` : ""}${message}`);
}

function complete(given: z.infer<typeof JsonChain>): Chain {
  const known = KNOWN_CHAINS[given.id];
  const name = given.name ?? known?.name;
  const symbol = given.symbol ?? known?.symbol;
  const explorer = given.explorer ?? known?.explorer;
  if (name === undefined || symbol === undefined || explorer === undefined)
    throw new ChainsError(
      `chain "${given.id}" is not one the bot knows (${Object.keys(KNOWN_CHAINS).join(", ")}): give its name, symbol and explorer in the JSON form`,
    );
  return {
    id: given.id,
    name,
    baseUrl: given.baseUrl,
    apiKey: given.apiKey,
    symbol,
    explorer,
    marketplace: given.marketplace ?? known?.marketplace,
    spam: given.spam ?? known?.spam ?? false,
    chainId: given.chainId ?? known?.chainId,
    rpcUrl: given.rpcUrl,
  };
}

/** The chains' ids for messages: "ethereum, base or polygon". */
export function chainList(chains: readonly Pick<Chain, "id">[]): string {
  const ids = chains.map((chain) => chain.id);
  return ids.length <= 1 ? (ids[0] ?? "") : `${ids.slice(0, -1).join(", ")} or ${ids.at(-1)}`;
}
