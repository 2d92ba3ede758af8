import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineAction, payloadField } from "../src/core/button-actions.ts";

/** A button action's payload: encoded and decoded by its one schema. */

const CHOICES = [
  { value: "1d", name: "1 day" },
  { value: "7d", name: "7 days" },
] as const;

const list = defineAction({
  command: "list",
  name: "page",
  schema: z.object({
    of: z.string(),
    period: payloadField.optional(payloadField.choice(CHOICES)),
    page: payloadField.page,
  }),
});

describe("defineAction", () => {
  it("stores the payload as flat JSON: an absent optional value as null", () => {
    expect(list.action({ of: "x", period: undefined, page: 2 })).toEqual({
      command: "list",
      action: "page",
      payload: { of: "x", period: null, page: 2 },
    });
    expect(list.action({ of: "x", period: "7d", page: 0 }).payload).toEqual({
      of: "x",
      period: "7d",
      page: 0,
    });
  });

  it("leaves out what is undefined, so the runtime's chain is never overwritten", () => {
    const withChat = defineAction({
      command: "list",
      name: "export",
      schema: z.object({ chat: z.string().optional() }),
    });
    const { payload } = withChat.action({});
    expect(payload).toEqual({});
    expect("chat" in payload).toBe(false);
    // A reply that is no command's names its chain itself.
    expect(withChat.action({ chat: "c" }, "base").payload).toEqual({ chat: "c", chain: "base" });
  });

  it("makes a button with its label and style", () => {
    expect(list.button({ of: "x", page: 1 }, "Next", { style: "secondary" })).toEqual({
      label: "Next",
      style: "secondary",
      action: { command: "list", action: "page", payload: { of: "x", period: null, page: 1 } },
    });
    expect(list.button({ of: "x", page: 1 }, "Next")).not.toHaveProperty("style");
  });

  it("decodes what it encoded, and the runtime's chain is not the handler's", () => {
    const stored = { ...list.action({ of: "x", period: "1d", page: 3 }).payload, chain: "base" };
    expect(list.parse(stored)).toEqual({ of: "x", period: "1d", page: 3 });
    expect(list.parse({ of: "x", period: null, page: 1 })).toEqual({
      of: "x",
      period: undefined,
      page: 1,
    });
  });

  it("reads a payload without a page, or with a bad one, as page 0", () => {
    expect(list.parse({ of: "x", period: null })?.page).toBe(0);
    expect(list.parse({ of: "x", period: null, page: -1 })?.page).toBe(0);
    expect(list.parse({ of: "x", period: null, page: 1.5 })?.page).toBe(0);
  });

  it("a payload that does not decode gives nothing to run", () => {
    expect(list.parse({ period: "1d", page: 0 })).toBeUndefined();
    expect(list.parse({ of: 5, page: 0 })).toBeUndefined();
    expect(list.parse({ of: "x", period: "2d", page: 0 })).toBeUndefined();
  });

  it("refuses to encode what its schema refuses", () => {
    expect(() => list.action({ of: "x", period: "2d" as "1d", page: 0 })).toThrow();
  });

  it("keeps `chain` for the runtime", () => {
    expect(() =>
      defineAction({ command: "list", name: "bad", schema: z.object({ chain: z.string() }) }),
    ).toThrow(/"chain" is the runtime's key/);
  });

  it("its handler names the action and gets the decoded payload", async () => {
    const handler = list.handle({
      run: async (_ctx, { of, period, page }) => ({ text: `${of} ${period} ${page}` }),
    });
    expect(handler).toMatchObject({ command: "list", name: "page" });
    const payload = handler.parse({ of: "x", period: "7d", page: 4 });
    expect(payload).toEqual({ of: "x", period: "7d", page: 4 });
  });
});
