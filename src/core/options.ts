import { z } from "zod";
import {
  type Address,
  type Checked,
  checkCount,
  checkDecimal,
  checkTokenId,
  checkWallet,
  checkWalletList,
  type EnsName,
  type TokenId,
  valid,
} from "../api/validate.ts";
import { type OptionDef, parserSchema } from "./command.ts";
import { parseShortForm } from "./known-collections.ts";
import { checkCollectionArg, checkNftArg, type NftRef, unwrap } from "./links.ts";
import { found, isLookup, type Lookup, type NameResolver, type Resolution } from "./resolver.ts";

/** Builders for command options: each carries the zod schema that parses what a person typed. */

interface Common<R extends boolean> {
  required?: R;
}

/** Present in the handler's arguments when required, or when there is a fallback. */
type Present<R extends boolean, F> = R extends true ? true : undefined extends F ? false : true;

function def<T, R extends boolean, P = T>(
  base: Omit<OptionDef<T, R, P>, "required">,
  required: R | undefined,
): OptionDef<T, R, P> {
  return { ...base, required: required ?? false };
}

/** A wallet: an address or ENS name, or the short form of one the bot showed in this chat. */
function checkWalletArg(raw: string): Checked<Address | EnsName | Lookup> {
  const value = unwrap(raw);
  return parseShortForm(value) ? valid({ lookup: value }) : checkWallet(value);
}

const resolveWallet = async (
  value: Address | EnsName | Lookup,
  resolver: NameResolver,
): Promise<Resolution<Address | EnsName>> =>
  isLookup(value) ? resolver.wallet(value.lookup) : found(value);

export const opt = {
  string<const R extends boolean = false>(
    description: string,
    o: Common<R> & { placeholder?: string; maxLength?: number; rest?: boolean } = {},
  ): OptionDef<string, R> {
    const max = o.maxLength ?? 200;
    return def(
      {
        description,
        kind: "string",
        placeholder: o.placeholder ?? "text",
        schema: z.string().transform((raw, ctx) => {
          const value = unwrap(raw);
          if (value.length > max) {
            ctx.issues.push({
              code: "custom",
              message: `must be at most ${max} characters`,
              input: raw,
            });
            return z.NEVER;
          }
          return value;
        }),
        ...(o.rest ? { rest: true } : {}),
      },
      o.required,
    );
  },

  /** One of fixed values; people may type the value or any alias (case-insensitive). */
  choice<
    const V extends string,
    const R extends boolean = false,
    const F extends V | undefined = undefined,
  >(
    description: string,
    choices: readonly { value: V; name: string; aliases?: readonly string[] }[],
    o: Common<R> & { placeholder?: string; fallback?: F } = {},
  ): OptionDef<V, Present<R, F>> {
    const lookup = new Map<string, V>();
    for (const choice of choices) {
      for (const key of [choice.value, choice.name, ...(choice.aliases ?? [])])
        lookup.set(key.toLowerCase(), choice.value);
    }
    const list = choices.map((choice) => choice.value).join(", ");
    return {
      description,
      kind: "string",
      required: o.required ?? false,
      placeholder: o.placeholder ?? choices.map((choice) => choice.value).join("|"),
      choices: choices.map((choice) => ({ name: choice.name, value: choice.value })),
      schema: z.string().transform((raw, ctx) => {
        const value = lookup.get(unwrap(raw).toLowerCase());
        if (value === undefined) {
          ctx.issues.push({ code: "custom", message: `use one of ${list}`, input: raw });
          return z.NEVER;
        }
        return value;
      }),
      ...(o.fallback !== undefined ? { fallback: o.fallback } : {}),
    };
  },

  integer<const R extends boolean = false, const F extends number | undefined = undefined>(
    description: string,
    o: Common<R> & { min: number; max: number; fallback?: F; placeholder?: string },
  ): OptionDef<number, Present<R, F>> {
    return {
      description,
      kind: "integer",
      required: o.required ?? false,
      placeholder: o.placeholder ?? "number",
      schema: z.string().transform((raw, ctx) => {
        const value = unwrap(raw);
        if (!/^-?\d{1,15}$/.test(value) || Number(value) < o.min || Number(value) > o.max) {
          ctx.issues.push({
            code: "custom",
            message: `must be a whole number from ${o.min} to ${o.max}`,
            input: raw,
          });
          return z.NEVER;
        }
        return Number(value);
      }),
      ...(o.fallback !== undefined ? { fallback: o.fallback } : {}),
    };
  },

  /** A collection by address, link, name, symbol, initials, prefix or the bot's short form. */
  collection<const R extends boolean = false>(
    description: string,
    o: Common<R> = {},
  ): OptionDef<Address, R, Address | Lookup> {
    return def(
      {
        description,
        kind: "string",
        placeholder: "collection",
        autocomplete: "collection",
        words: true,
        schema: parserSchema(checkCollectionArg),
        resolve: async (value, resolver) =>
          isLookup(value) ? resolver.collection(value.lookup) : found(value),
      },
      o.required,
    );
  },

  /** An NFT's collection as `collection` takes it, or an item link (which names the token too). */
  nft<const R extends boolean = false>(
    description: string,
    o: Common<R> = {},
  ): OptionDef<NftRef, R, NftRef | Lookup> {
    return def(
      {
        description,
        kind: "string",
        placeholder: "collection|link",
        autocomplete: "collection",
        words: true,
        schema: parserSchema(checkNftArg),
        resolve: async (value, resolver) => {
          if (!isLookup(value)) return found(value);
          const resolution = await resolver.collection(value.lookup);
          return resolution.kind === "found" ? found({ contract: resolution.value }) : resolution;
        },
      },
      o.required,
    );
  },

  tokenId<const R extends boolean = false>(
    description: string,
    o: Common<R> = {},
  ): OptionDef<TokenId, R> {
    return def(
      {
        description,
        kind: "string",
        placeholder: "tokenId",
        schema: parserSchema(checkTokenId),
        claims: /^\d+$/,
      },
      o.required,
    );
  },

  wallet<const R extends boolean = false>(
    description: string,
    o: Common<R> = {},
  ): OptionDef<Address | EnsName, R, Address | EnsName | Lookup> {
    return def(
      {
        description,
        kind: "string",
        placeholder: "wallet|name.eth",
        schema: parserSchema(checkWalletArg),
        resolve: resolveWallet,
      },
      o.required,
    );
  },

  /** Up to 500 wallets separated by spaces, commas or new lines; takes the rest of the line. */
  walletList<const R extends boolean = false>(
    description: string,
    o: Common<R> = {},
  ): OptionDef<(Address | EnsName)[], R, (Address | EnsName | Lookup)[]> {
    return def(
      {
        description,
        kind: "string",
        placeholder: "wallets…",
        rest: true,
        schema: parserSchema((raw) => {
          const items = raw
            .split(/[\s,;]+/)
            .map(unwrap)
            .filter((item) => item.length > 0);
          const short = items.filter((item) => parseShortForm(item));
          const full = items.filter((item) => !parseShortForm(item));
          const wallets = full.length > 0 || short.length === 0 ? checkWalletList(full) : valid([]);
          return wallets.ok
            ? valid([...wallets.value, ...short.map((lookup) => ({ lookup }))])
            : wallets;
        }),
        resolve: async (values, resolver) => {
          const wallets: (Address | EnsName)[] = [];
          for (const value of values) {
            const resolution = await resolveWallet(value, resolver);
            if (resolution.kind !== "found") return resolution;
            wallets.push(resolution.value);
          }
          return found([...new Set(wallets)]);
        },
      },
      o.required,
    );
  },

  decimal<const R extends boolean = false>(
    description: string,
    o: Common<R> & { placeholder?: string } = {},
  ): OptionDef<string, R> {
    return def(
      {
        description,
        kind: "string",
        placeholder: o.placeholder ?? "amount",
        schema: parserSchema((raw) => checkDecimal(unwrap(raw), description.toLowerCase())),
      },
      o.required,
    );
  },

  count<const R extends boolean = false>(
    description: string,
    o: Common<R> & { placeholder?: string } = {},
  ): OptionDef<string, R> {
    return def(
      {
        description,
        kind: "string",
        placeholder: o.placeholder ?? "count",
        schema: parserSchema((raw) => checkCount(unwrap(raw), description.toLowerCase())),
      },
      o.required,
    );
  },
};
