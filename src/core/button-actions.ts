import { z } from "zod";
import type { ActionHandler, ActionPayload, CommandContext } from "./command.ts";
import type { ButtonAction, ButtonSpec, ButtonStyle, Reply } from "./reply.ts";

/**
 * Typed button actions. Each action a button may run is declared once, with its command, as a
 * zod schema over the payload as stored (flat JSON scalars, the shape buttons have always been
 * stored in): the buttons encode their payload through it (`z.encode`), and a press decodes the
 * stored payload through it before the handler runs, so the handler gets the typed value and a
 * payload that does not decode (an old or forged button) is answered "This button no longer
 * works". No command serializes a payload by hand.
 */

/** A payload field as stored; an optional field may be left out. */
type StoredValue = string | number | boolean | null | undefined;

/** A schema from a stored payload to what the handler reads. */
export type PayloadSchema = z.ZodType<unknown, Record<string, StoredValue>>;

/** The key the runtime keeps in every stored payload: the chain the answer was read from. */
const CHAIN_KEY = "chain";

/** An action as a command declares it: the buttons it makes, the payloads it reads. */
export interface ActionDef<P> {
  readonly command: string;
  readonly name: string;
  /**
   * The stored action behind a button: the payload encoded by the schema. `chain` is for a reply
   * that is not a command's (an alert's): a command's buttons get their chain from the runtime.
   */
  action(payload: P, chain?: string): ButtonAction;
  /** A button that runs this action with this payload. */
  button(
    payload: P,
    label: string,
    options?: { style?: ButtonStyle | undefined; chain?: string | undefined },
  ): ButtonSpec;
  /** A stored payload decoded by the schema; undefined when it does not decode. */
  parse(stored: ActionPayload): P | undefined;
  /** The handler the command lists under `actions[name]`: `run` gets the decoded payload. */
  handle(handler: { run(ctx: CommandContext, payload: P): Promise<Reply> }): ActionHandler<P>;
}

const defined: { command: string; name: string }[] = [];

/** Every action defined so far (by the modules loaded): the registry test checks each is served. */
export function definedActions(): readonly { command: string; name: string }[] {
  return defined;
}

/** Declares a button action of `command` named `name`, its payload described by `schema`. */
export function defineAction<S extends PayloadSchema>(def: {
  command: string;
  name: string;
  schema: S;
}): ActionDef<z.output<S>> {
  const { command, name, schema } = def;
  if (schema instanceof z.ZodObject && CHAIN_KEY in schema.shape)
    throw new Error(`${command}.${name}: "${CHAIN_KEY}" is the runtime's key in a button payload.`);
  defined.push({ command, name });
  type P = z.output<S>;
  // Every field goes through its schema, given or not: an optional one left out is stored as its
  // schema says (payloadField.optional: null), whether the caller wrote it undefined or not at all.
  const fields = schema instanceof z.ZodObject ? Object.keys(schema.shape) : [];
  const action = (payload: P, chain?: string): ButtonAction => {
    const given = {
      ...Object.fromEntries(fields.map((key) => [key, undefined])),
      ...(payload as object),
    };
    const encoded: ActionPayload = {};
    // What is still undefined stays out: JSON would drop it anyway, and the runtime's chain must
    // not be overwritten by an undefined one.
    for (const [key, value] of Object.entries(z.encode(schema, given as P)))
      if (value !== undefined) encoded[key] = value;
    return {
      command,
      action: name,
      payload: chain === undefined ? encoded : { ...encoded, chain },
    };
  };
  const parse = (stored: ActionPayload): P | undefined => {
    const decoded = schema.safeParse(stored);
    return decoded.success ? decoded.data : undefined;
  };
  return {
    command,
    name,
    action,
    button: (payload, label, options = {}) => ({
      label,
      ...(options.style ? { style: options.style } : {}),
      action: action(payload, options.chain),
    }),
    parse,
    handle: ({ run }) => ({ command, name, parse, run }),
  };
}

/** Payload fields that read the shapes buttons have always been stored in. */
export const payloadField = {
  /**
   * An optional value: stored as null when absent (as buttons always have), read as undefined
   * (absent in the stored payload too).
   */
  optional<T extends string | number | boolean>(schema: z.ZodType<T, T>) {
    return z.codec(schema.nullable().optional(), schema.optional(), {
      decode: (stored) => stored ?? undefined,
      encode: (value) => value ?? null,
    });
  },
  /** One of a command option's fixed values (its `choices`). */
  choice<const V extends string>(choices: readonly { value: V }[]): z.ZodType<V, V> {
    return z.enum(choices.map((choice) => choice.value) as [V, ...V[]]) as z.ZodType<V, V>;
  },
  /** A page number, from 0; a payload without one (or with a bad one) reads page 0. */
  page: z.number().int().min(0).catch(0),
};
