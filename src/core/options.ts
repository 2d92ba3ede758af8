import { z } from "zod";
import {
  type Address,
  type Checked,
  checkCount,
  checkDecimal,
  checkTokenId,
  type EnsName,
  invalid,
  MAX_WALLETS_PER_CALL,
  quoteInput,
  type TokenId,
  valid,
} from "../api/validate.ts";
import { type OptionDef, parserSchema } from "./command.ts";
import {
  checkCollectionArg,
  checkNftArg,
  checkWalletArg,
  isLinked,
  type Linked,
  linkedChainOf,
  type NftRef,
  unwrap,
} from "./links.ts";
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

/**
 * Words meant as a wallet even when they do not parse: an address or its short form (0x…), 40
 * hex digits, a link, or a name ending in a top-level part (name.eth). Other words are no wallet
 * (the first word of a note, after an optional wallet).
 */
const WALLET_SHAPED = /^<?(?:0x|https?:\/\/|[0-9a-f]{40}>?$|[^\s.]+(?:\.[^\s.]+)*\.\p{L}{2,}$)/iu;

/**
 * checkWalletArg, its refusals in plain words: a mention (@everyone, <@id>) or a word with a
 * character no ENS name may have is said to be neither a wallet nor a name; the ENS rules'
 * other reasons are kept without the code points the normalizer adds ({430}).
 */
export function checkWalletWords(input: string): ReturnType<typeof checkWalletArg> {
  const checked = checkWalletArg(input);
  if (checked.ok || checked.code !== "invalid_ens_name") return checked;
  const value = unwrap(input).trim();
  // What the normalizer says comes after the quoted input (which may hold anything).
  const quoted = quoteInput(value);
  const [head, reason] = checked.message.startsWith(quoted)
    ? [quoted, checked.message.slice(quoted.length)]
    : ["", checked.message];
  if (/^@|^<[@#]/.test(value) || reason.includes("disallowed character"))
    return invalid(
      "invalid_ens_name",
      `${quoted} is not a wallet address or an ENS name: give 0x… or name.eth.`,
    );
  return invalid(checked.code, `${head}${reason.replace(/\s*\{[0-9a-f]{1,6}\}/gi, "")}`);
}

/** A wallet as checkWalletArg reads it: a short form is looked up, a link's chain checked. */
export const resolveWallet = async (
  value: Address | EnsName | Linked<Address> | Lookup,
  resolver: NameResolver,
): Promise<Resolution<Address | EnsName>> =>
  isLookup(value)
    ? resolver.wallet(value.lookup)
    : isLinked(value)
      ? resolver.linked(value)
      : found(value);

/** A collection as checkCollectionArg reads it: a name is looked up, a link's chain checked. */
export const resolveCollection = async (
  value: Address | Linked<Address> | Lookup,
  resolver: NameResolver,
): Promise<Resolution<Address>> =>
  isLookup(value)
    ? resolver.collection(value.lookup, value.slug)
    : isLinked(value)
      ? resolver.linked(value)
      : found(value);

/** A text option checked by one of validate.ts's checks, named in its errors by its description. */
function checkedString<R extends boolean>(
  description: string,
  check: (value: string, what: string) => Checked<string>,
  placeholder: string,
  required: R | undefined,
): OptionDef<string, R> {
  return def(
    {
      description,
      kind: "string",
      placeholder,
      schema: parserSchema((raw) => check(unwrap(raw), description.toLowerCase())),
    },
    required,
  );
}

/** A Discord role as typed: its id, or a name to find among the roles the interaction names. */
export type RoleRef = { id: string } | { name: string };

/** `<@&123…>` (a role mention), a bare role id, or `@Holders` (a name, with its @). */
export function checkRoleArg(raw: string): Checked<RoleRef> {
  const value = raw.trim();
  // A mention as Discord writes it, <@&id>, possibly with its brackets taken off.
  const id = /^(?:<?@&(\d{17,20})>?|(\d{17,20}))$/.exec(value);
  if (id) return valid({ id: (id[1] ?? id[2]) as string });
  const name = /^@(.{1,100})$/su.exec(value)?.[1]?.trim();
  if (name) return valid({ name });
  return invalid(
    "invalid_role",
    `a role: pick it from the list, or type @RoleName or its id; "${value}" is neither.`,
  );
}

export const opt = {
  /**
   * A Discord role. Discord's picker gives its id; text takes `role:@Holders`, `<@&id>` or the
   * id, and by position only a word of that shape (a criterion's first word is no role).
   */
  role<const R extends boolean = false>(
    description: string,
    o: Common<R> = {},
  ): OptionDef<RoleRef, R> {
    return def(
      {
        description,
        kind: "role",
        placeholder: "role",
        schema: parserSchema(checkRoleArg),
        onlyIfValid: true,
      },
      o.required,
    );
  },

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
              params: { errorCode: "input_too_long" },
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
          ctx.issues.push({
            code: "custom",
            message: `use one of ${list}`,
            input: raw,
            params: { errorCode: "invalid_choice" },
          });
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
            params: {
              errorCode: /^-?\d{1,15}$/.test(value) ? "number_out_of_range" : "invalid_number",
            },
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
  ): OptionDef<Address, R, Address | Linked<Address> | Lookup> {
    return def(
      {
        description,
        kind: "string",
        placeholder: "collection",
        autocomplete: "collection",
        words: true,
        schema: parserSchema(checkCollectionArg),
        resolve: resolveCollection,
        chainOf: linkedChainOf,
      },
      o.required,
    );
  },

  /** An NFT's collection as `collection` takes it, or an item link (which names the token too). */
  nft<const R extends boolean = false>(
    description: string,
    o: Common<R> = {},
  ): OptionDef<NftRef, R, NftRef | Linked<NftRef> | Lookup> {
    return def(
      {
        description,
        kind: "string",
        placeholder: "collection|link",
        autocomplete: "collection",
        words: true,
        schema: parserSchema(checkNftArg),
        chainOf: linkedChainOf,
        resolve: async (value, resolver) => {
          if (isLinked(value)) return resolver.linked(value);
          if (!isLookup(value)) return found(value);
          const resolution = await resolver.collection(value.lookup, value.slug);
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
  ): OptionDef<Address | EnsName, R, Address | EnsName | Linked<Address> | Lookup> {
    return def(
      {
        description,
        kind: "string",
        placeholder: "wallet|name.eth",
        schema: parserSchema(checkWalletWords),
        claims: WALLET_SHAPED,
        resolve: resolveWallet,
        chainOf: linkedChainOf,
      },
      o.required,
    );
  },

  /** Up to 500 wallets separated by spaces, commas or new lines; takes the rest of the line. */
  walletList<const R extends boolean = false>(
    description: string,
    o: Common<R> = {},
  ): OptionDef<(Address | EnsName)[], R, (Address | EnsName | Linked<Address> | Lookup)[]> {
    return def(
      {
        description,
        kind: "string",
        placeholder: "wallets…",
        rest: true,
        chainOf: linkedChainOf,
        schema: parserSchema((raw) => {
          const items = raw
            .split(/[\s,;]+/)
            .map(unwrap)
            .filter((item) => item.length > 0);
          if (items.length === 0)
            return invalid("missing_argument", "Give at least one wallet address or ENS name.");
          // Checked one by one (an address, a name, a link, a short form), duplicates counted once.
          const wallets = new Map<string, Address | EnsName | Linked<Address> | Lookup>();
          for (const item of items) {
            const wallet = checkWalletWords(item);
            if (!wallet.ok) return wallet;
            const value = wallet.value;
            const key = typeof value === "string" ? value : isLinked(value) ? value.linked : item;
            if (!wallets.has(key)) wallets.set(key, value);
          }
          if (wallets.size > MAX_WALLETS_PER_CALL)
            return invalid(
              "too_many_items",
              `That is ${wallets.size} wallets; the data service takes at most ${MAX_WALLETS_PER_CALL} at once.`,
            );
          return valid([...wallets.values()]);
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
    return checkedString(description, checkDecimal, o.placeholder ?? "amount", o.required);
  },

  count<const R extends boolean = false>(
    description: string,
    o: Common<R> & { placeholder?: string } = {},
  ): OptionDef<string, R> {
    return checkedString(description, checkCount, o.placeholder ?? "count", o.required);
  },
};
