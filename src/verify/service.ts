import { createHash, randomBytes } from "node:crypto";
import type { Transport } from "viem";
import type { Chain } from "../chains.ts";
import {
  type KeyedLimiter,
  type Limit,
  type LimiterFactory,
  RateLimiter,
} from "../core/rate-limit.ts";
import type { Logger } from "../log.ts";
import type { ProvedWallet, Store, VerifyLinkRow } from "../store/types.ts";
import { MAX_WALLETS_PER_PERSON } from "../store/types.ts";
import { sliceChars, stripControlCharacters } from "../strings.ts";
import { changed } from "./changed.ts";
import { personHoldings } from "./holdings.ts";
import { type Refused, refuse } from "./refusal.ts";
import {
  LINK_TOKEN,
  type VerifiedNotice,
  type VerifiedNotifier,
  type VerifyChallenge,
  type VerifyLink,
  type VerifyOrigin,
  type VerifyPageState,
  type VerifyRefusal,
  type VerifyResult,
  type VerifyService,
  type WalletMovedNotifier,
} from "./types.ts";

/** A link lasts this long: long enough to open a wallet app, short enough that a leaked one dies. */
export const LINK_TTL_MS = 10 * 60_000;

/** Used and expired links are kept this long after expiry, so a late click hears "used"/"expired". */
export const LINK_KEEP_MS = 24 * 3_600_000;

/**
 * The limits of the page and the command. Links: a person asking /verify again and again; challenges:
 * a page (or a script with the link) asking fresh nonces, per link and per address asked about;
 * proofs: garbage posted at a link (each contract-wallet check costs an RPC call).
 */
export const VERIFY_LIMITS = {
  linksPerPerson: { burst: 5, perMinute: 0.5 },
  challengesPerLink: { burst: 10, perMinute: 2 },
  challengesPerAddress: { burst: 10, perMinute: 2 },
  proofsPerLink: { burst: 10, perMinute: 2 },
} as const satisfies Record<string, Limit>;

/** Bounds on what the page may post: a SIWE message is a few hundred bytes. */
const MAX_MESSAGE_CHARS = 4_000;
/** An ERC-6492 signature carries a factory call: a few KB at most in practice. */
const MAX_SIGNATURE_CHARS = 20_000;

const PLATFORM_NAMES: Record<string, string> = {
  discord: "Discord",
  telegram: "Telegram",
  console: "console",
};

export interface VerifyServiceDeps {
  store: Pick<Store, "wallets" | "verifyLinks" | "delegations">;
  chains: readonly Chain[];
  /**
   * Where people reach the page: PUBLIC_URL, else http://127.0.0.1:<the HTTP host's port>. Read at
   * each link and check, since the port is known only once the host listens.
   */
  baseUrl: () => string;
  /** Shared over Redis when set up, so the limits hold across instances; default: in-process. */
  limiters?: LimiterFactory | undefined;
  /**
   * Told of each proof as soon as it is kept (gates decide, the community counts the person); it
   * must not throw or wait.
   */
  proved?: ((notice: VerifiedNotice) => void) | undefined;
  /**
   * Tells the chat where /verify was asked, once the delegations to the wallet are read; its
   * failure is logged, never the person's problem.
   */
  notify?: VerifiedNotifier | undefined;
  /**
   * Tells the account a wallet was moved from (another account of its platform proved it) and
   * ends what the wallet gave it; its failure is logged.
   */
  moved?: WalletMovedNotifier | undefined;
  /** Wall clock, epoch ms. */
  now?: () => number;
  logger: Logger;
  /** How contract wallets' checks reach a chain's node (default: HTTP to its rpcUrl); for tests. */
  transport?: (chain: Chain, rpcUrl: string) => Transport;
  /** The name people see in the message they sign. */
  botName?: string;
}

/** The token's hash as stored: a copy of the database cannot open anyone's link. */
export function tokenHash(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}

const ASK_AGAIN = "Ask /verify in the chat for a new link.";

/** Checks links, makes SIWE challenges and verifies the signed messages (see ./types.ts). */
export function createVerifyService(deps: VerifyServiceDeps): VerifyService {
  const { store, logger } = deps;
  const now = deps.now ?? Date.now;
  const limiter = (scope: string, limit: Limit): KeyedLimiter =>
    deps.limiters?.(scope, limit) ?? new RateLimiter(limit.burst, limit.perMinute);
  const limits = {
    links: limiter("verify-links", VERIFY_LIMITS.linksPerPerson),
    challengesPerLink: limiter("verify-challenges-link", VERIFY_LIMITS.challengesPerLink),
    challengesPerAddress: limiter("verify-challenges-address", VERIFY_LIMITS.challengesPerAddress),
    proofs: limiter("verify-proofs", VERIFY_LIMITS.proofsPerLink),
  };
  const chainOf = (id: string) => deps.chains.find((chain) => chain.id === id);
  const holdings = personHoldings({
    store,
    chains: deps.chains,
    now,
    logger,
    transport: deps.transport,
  });
  /** The chains an externally owned account's proof holds on: those wallets can be proved on. */
  const chainsServed = deps.chains
    .filter((chain) => chain.chainId !== undefined)
    .map((chain) => chain.name);
  // viem, loaded with the first challenge (see ./proof.ts).
  let loaded: Promise<typeof import("./proof.ts")> | undefined;
  const proof = () => {
    loaded ??= import("./proof.ts");
    return loaded;
  };

  /** PUBLIC_URL's (or the loopback host's) parts the message names and the check compares. */
  function site() {
    const base = new URL(deps.baseUrl());
    const path = base.pathname.replace(/\/+$/, "");
    return {
      base: `${base.origin}${path}`,
      domain: base.host,
      scheme: base.protocol.replace(/:$/, ""),
      uri: `${base.origin}${path}/verify`,
    };
  }

  async function limited(limit: KeyedLimiter, key: string): Promise<VerifyRefusal | undefined> {
    const admission = await limit.take(key);
    if (admission.allowed) return undefined;
    const minutes = Math.max(1, Math.ceil(admission.waitMs / 60_000));
    return {
      code: "rate_limited",
      message: `Too many tries: wait ${minutes === 1 ? "a minute" : `${minutes} minutes`} and try again.`,
    };
  }

  /** The link of a token still open, or why not. */
  async function openLink(
    token: string,
  ): Promise<{ ok: true; link: VerifyLinkRow; chain: Chain & { chainId: number } } | Refused> {
    if (typeof token !== "string" || !LINK_TOKEN.test(token))
      return refuse("unknown_link", `This link is not one the bot made. ${ASK_AGAIN}`);
    const link = await store.verifyLinks.find(tokenHash(token));
    if (!link) return refuse("unknown_link", `This link is not one the bot made. ${ASK_AGAIN}`);
    if (link.usedAt !== undefined)
      return refuse("used", `This link was already used. ${ASK_AGAIN}`);
    if (link.expiresAt <= now())
      return refuse("expired", `This link has expired (links last 10 minutes). ${ASK_AGAIN}`);
    const chain = chainOf(link.chain);
    if (chain?.chainId === undefined)
      return refuse("wrong_chain", `The bot no longer serves ${link.chain}. ${ASK_AGAIN}`);
    return { ok: true, link, chain: chain as Chain & { chainId: number } };
  }

  /** Runs a step; a store that cannot be reached is "try again", never a crash of the page. */
  async function guarded<T>(
    what: string,
    step: () => Promise<VerifyResult<T>>,
  ): Promise<VerifyResult<T>> {
    try {
      return await step();
    } catch (error) {
      logger.warn({ err: error, what }, "verification step failed");
      return refuse("unavailable", "The bot cannot check this right now. Try again in a minute.");
    }
  }

  return {
    createLink(origin: VerifyOrigin, chainId: string) {
      return guarded<{ link: VerifyLink }>("link", async () => {
        const chain = chainOf(chainId);
        if (!chain) return refuse("wrong_chain", `The bot does not serve the chain "${chainId}".`);
        if (chain.chainId === undefined)
          return refuse(
            "wrong_chain",
            `Wallets cannot be proved on ${chain.name}: the bot does not know its chain id.`,
          );
        const over = await limited(limits.links, `${origin.platform}:${origin.userId}`);
        if (over) return { ok: false, refusal: over };
        const token = randomBytes(32).toString("base64url");
        const createdAt = now();
        const expiresAt = createdAt + LINK_TTL_MS;
        await store.verifyLinks.create({
          tokenHash: tokenHash(token),
          platform: origin.platform,
          userId: origin.userId,
          chatId: origin.chatId,
          confirm: origin.confirm,
          place: origin.place,
          // Names as the platform gave them, without control characters (PostgreSQL refuses a
          // NUL in text) and bounded: each is shown as text only.
          name: keptName(origin.name),
          placeName: keptName(origin.placeName),
          botName: keptName(origin.botName),
          chain: chain.id,
          createdAt,
          expiresAt,
          nonce: undefined,
          nonceAddress: undefined,
          usedAt: undefined,
          challenge: undefined,
        });
        const link: VerifyLink = {
          url: `${site().base}/verify/${token}`,
          expiresAt,
          chain: chain.id,
        };
        return { ok: true, link };
      });
    },

    open(token: string) {
      return guarded<{ state: VerifyPageState }>("open", async () => {
        const opened = await openLink(token);
        if (!opened.ok) return opened;
        const state: VerifyPageState = {
          chain: opened.chain.id,
          chainName: opened.chain.name,
          chainId: opened.chain.chainId,
          expiresAt: opened.link.expiresAt,
          botName: opened.link.botName ?? deps.botName ?? "the bot",
          place: {
            platform: opened.link.platform as VerifyPageState["place"]["platform"],
            ...(opened.link.placeName ? { name: opened.link.placeName } : {}),
          },
          chainsServed,
        };
        return { ok: true, state };
      });
    },

    challenge(token: string, address: string) {
      return guarded<{ challenge: VerifyChallenge }>("challenge", async () => {
        const { checksummed, siweMessage } = await proof();
        const checked = typeof address === "string" ? checksummed(address) : undefined;
        if (!checked) return refuse("bad_message", "The wallet did not give a valid address.");
        const opened = await openLink(token);
        if (!opened.ok) return opened;
        const { link, chain } = opened;
        const lower = address.toLowerCase();
        const over =
          (await limited(limits.challengesPerLink, link.tokenHash)) ??
          (await limited(limits.challengesPerAddress, lower));
        if (over) return { ok: false, refusal: over };
        const wallets = await store.wallets.list(link.platform, link.userId);
        if (
          wallets.length >= MAX_WALLETS_PER_PERSON &&
          !wallets.some((wallet) => wallet.address === lower)
        )
          return tooMany();
        // node:crypto, not viem's generateSiweNonce (Math.random): 128 bits nobody can predict.
        const nonce = randomBytes(16).toString("hex");
        const issuedAt = now();
        const { domain, scheme, uri } = site();
        const platform = PLATFORM_NAMES[link.platform] ?? link.platform;
        const challenge: VerifyChallenge = {
          message: siweMessage({
            address: checked,
            chainId: chain.chainId,
            domain,
            scheme,
            uri,
            nonce,
            version: "1",
            issuedAt: new Date(issuedAt),
            expirationTime: new Date(link.expiresAt),
            statement: `Prove to ${statementName(link.botName ?? deps.botName)} that you own this wallet, for your ${platform} account. Signing costs nothing and moves no funds.`,
          }),
        };
        // Kept with the link: a proof must sign exactly this text (issue 34).
        const kept = await store.verifyLinks.setNonce(
          link.tokenHash,
          nonce,
          lower,
          issuedAt,
          challenge.message,
        );
        if (!kept) {
          const again = await openLink(token);
          return again.ok ? refuse("used", `This link was already used. ${ASK_AGAIN}`) : again;
        }
        return { ok: true, challenge };
      });
    },

    prove(token: string, message: string, signature: string) {
      return guarded<{ address: string; chain: string }>("proof", async () => {
        const tools = await proof();
        const { checksummed, isHexBytes, readSiweMessage, siweValid, signerKind } = tools;
        const opened = await openLink(token);
        if (!opened.ok) return opened;
        const { link, chain } = opened;
        const over = await limited(limits.proofs, link.tokenHash);
        if (over) return { ok: false, refusal: over };
        if (typeof message !== "string" || message.length > MAX_MESSAGE_CHARS)
          return refuse("bad_message", "This is not the message the bot asked to sign.");
        if (
          typeof signature !== "string" ||
          signature.length > MAX_SIGNATURE_CHARS ||
          !isHexBytes(signature)
        )
          return refuse("bad_signature", "The wallet's signature is not valid.");
        if (
          link.nonce === undefined ||
          link.nonceAddress === undefined ||
          link.challenge === undefined
        )
          return refuse(
            "stale_nonce",
            "This message was not asked for here. Press Connect wallet again.",
          );
        const expected = site();
        // Only the message the bot issued for this link and address, byte for byte (issue 34):
        // a changed time, statement, site or spacing is another message, whoever signed it.
        if (message !== link.challenge)
          return changed(tools, message, link.challenge, expected.domain, chain);
        const parsed = readSiweMessage(message);
        const at = now();
        if (parsed.expirationTime && parsed.expirationTime.getTime() <= at)
          return refuse("expired", `This message has expired. ${ASK_AGAIN}`);
        const { domain } = expected;
        const nonce = link.nonce;
        const address = parsed.address && checksummed(parsed.address);
        // The bot's own message, checked anyway: its times (issued before now), domain and nonce.
        if (!address || !siweValid(parsed, { domain, nonce, at }))
          return refuse("bad_message", "This is not the message the bot asked to sign.");
        const kind = await signerKind({
          chain,
          address,
          message,
          signature,
          domain,
          nonce,
          at,
          logger,
          transport: deps.transport,
        });
        if (kind !== "eoa" && kind !== "contract") return { ok: false, refusal: kind };
        const proved: ProvedWallet = {
          platform: link.platform,
          userId: link.userId,
          address: address.toLowerCase(),
          chain: chain.id,
          label: address,
          message,
          signature,
          provedAt: at,
          kind,
        };
        const kept = await store.verifyLinks.complete(link.tokenHash, nonce, proved, at);
        if (kept === "used") return refuse("used", `This link was already used. ${ASK_AGAIN}`);
        if (kept === "full") return tooMany();
        logger.info(
          {
            platform: link.platform,
            chain: chain.id,
            kind,
            updated: kept.kept === "updated",
            moved: kept.movedFrom.length > 0,
          },
          "wallet proved",
        );
        const platform = link.platform as VerifyOrigin["platform"];
        for (const userId of kept.movedFrom)
          deps
            .moved?.({ platform, userId, address, chain: chain.id })
            .catch((error) =>
              logger.warn({ err: error }, "could not tell an account its wallet moved"),
            );
        const origin: VerifyOrigin = {
          platform,
          userId: link.userId,
          chatId: link.chatId,
          ...(link.confirm !== undefined ? { confirm: link.confirm } : {}),
          ...(link.place !== undefined ? { place: link.place } : {}),
          ...(link.name !== undefined ? { name: link.name } : {}),
        };
        // What follows a proof (gates, members) starts at once; not awaited: the page says
        // Verified at once, whatever the chat platform's delay.
        try {
          deps.proved?.({ origin, address, chain: chain.id, kind });
        } catch (error) {
          logger.warn({ err: error }, "could not act on a proved wallet");
        }
        // The registries are read before the chat is told, so it hears of the cold wallets that
        // now count too.
        void (async () => {
          const found = await holdings
            .of(link.platform, link.userId, { refresh: true })
            .catch((error: unknown) => {
              logger.warn({ err: error }, "could not read a proved wallet's delegations");
              return undefined;
            });
          const lower = address.toLowerCase();
          // The cold wallets counted through this one, by the holdings' own rule.
          const delegated = (found?.wallets ?? []).flatMap((w) =>
            w.via === lower && w.chains !== "all"
              ? w.chains.map((on) => ({ cold: w.address, chain: on, contract: w.contract ?? "" }))
              : [],
          );
          await deps.notify?.({
            origin,
            address,
            chain: chain.id,
            kind,
            ...(delegated.length > 0 ? { delegated } : {}),
          });
        })().catch((error) =>
          logger.warn({ err: error }, "could not confirm a proved wallet in its chat"),
        );
        return { ok: true, address, chain: chain.id };
      });
    },

    holdings(platform, userId, options) {
      return holdings.of(platform, userId, options);
    },

    prune() {
      const at = now();
      return store.verifyLinks.prune(at, at - LINK_KEEP_MS);
    },
  };

  function tooMany() {
    return refuse(
      "too_many_wallets",
      `You already have ${MAX_WALLETS_PER_PERSON} wallets: forget one with /unlink first.`,
    );
  }
}

/** A name kept with a link: one line, no control characters, 200 characters; none when empty. */
function keptName(name: string | undefined): string | undefined {
  const line = stripControlCharacters(name ?? "").replace(/\s+/g, " ");
  const kept = sliceChars(line, 200).trim();
  return kept === "" ? undefined : kept;
}

/**
 * The bot's name as the signed message says it: a platform's display name is anyone's choice, so
 * only plain words (no line breaks, which would make another SIWE field), at most 40 characters.
 */
function statementName(name: string | undefined): string {
  const plain = sliceChars((name ?? "").replace(/[^\p{L}\p{N} ._'-]/gu, "").trim(), 40);
  return plain === "" ? "the bot" : plain;
}
