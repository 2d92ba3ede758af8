import { z } from "zod";

/**
 * Settings read from environment variables: the schema leaves (each naming its variable), the
 * nested input built from the variables, and the words for what a setting must be.
 */

export const emptyToUndefined = (value: unknown) => (value === "" ? undefined : value);
export const optionalString = z.preprocess(emptyToUndefined, z.string().optional());
export const optionalUrl = z.preprocess(
  emptyToUndefined,
  z
    .url({ protocol: /^https?$/ })
    .transform((url) => url.replace(/\/+$/, ""))
    .optional(),
);
export const int = (fallback: number, min: number, max: number) =>
  z.preprocess(emptyToUndefined, z.coerce.number().int().min(min).max(max).default(fallback));
export const optionalPort = z.preprocess(
  emptyToUndefined,
  z.coerce.number().int().min(0).max(65_535).optional(),
);
export const bool = (fallback: boolean) =>
  z.preprocess(
    emptyToUndefined,
    z
      .enum(["true", "false", "1", "0", "yes", "no"])
      .default(fallback ? "true" : "false")
      .transform((value) => value === "true" || value === "1" || value === "yes"),
  );

/** The environment variable each setting is read from (and named by in errors). */
const VARIABLE = new WeakMap<z.ZodType, string>();

/** A setting read from the environment variable `name`. */
export function env<T extends z.ZodType>(name: string, schema: T): T {
  // A copy: one schema (optionalString) serves several variables.
  const leaf = schema.clone();
  VARIABLE.set(leaf, name);
  return leaf;
}

export const seconds = (name: string, fallback: number, min: number, max: number) =>
  env(
    name,
    int(fallback, min, max).transform((s) => s * 1000),
  );

/**
 * What a setting must be, in words, for the problems people make (a word where a number goes, a
 * value out of range, a URL without http). Undefined for the rest.
 */
export function requirement(issue: z.core.$ZodIssue): string | undefined {
  switch (issue.code) {
    case "invalid_type":
      return issue.expected === "number" || issue.expected === "int"
        ? "must be a whole number"
        : undefined;
    case "too_small":
      return `must be at least ${issue.minimum}`;
    case "too_big":
      return `must be at most ${issue.maximum}`;
    case "invalid_value":
      return `must be one of ${issue.values.join(", ")}`;
    case "invalid_format":
      // Every other format check in the schema (a pattern) carries its own message.
      return issue.format === "url" ? "must be an http(s) URL" : issue.message;
    case "custom":
      return issue.message;
    default:
      return undefined;
  }
}

/** The settings' nested input, each leaf taken from its variable. */
export function fromVariables(
  schema: z.ZodObject,
  variables: Record<string, string | undefined>,
): Record<string, unknown> {
  const input: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(schema.shape)) {
    const name = VARIABLE.get(field as z.ZodType);
    if (name !== undefined) input[key] = variables[name];
    else if (field instanceof z.ZodObject) input[key] = fromVariables(field, variables);
  }
  return input;
}

/** The variable behind a setting's path in the schema. */
export function variableAt(schema: z.ZodType, path: readonly PropertyKey[]): string | undefined {
  let field: z.ZodType | undefined = schema;
  for (const key of path) {
    if (!(field instanceof z.ZodObject)) break;
    field = (field.shape as Record<PropertyKey, z.ZodType>)[key];
  }
  return field ? VARIABLE.get(field) : undefined;
}
