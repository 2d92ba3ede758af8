import { describe, expect, it } from "vitest";
import { reportButton } from "../src/reports/buttons.ts";

describe("a report button's collection name", () => {
  it("is cut at 200 characters, never inside a character of two UTF-16 units", () => {
    const name = `${"n".repeat(199)}🐸🐸`;
    const { payload } = reportButton("spam", {
      contract: "0xBC4CA0EdA7647A8aB7C2061c2E118A18a936f13D",
      name,
    }).action;
    expect(payload.name).toBe(`${"n".repeat(199)}🐸`);
    expect(String(payload.name)).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/);
    // A blank name is none (stored as null, as every absent optional field).
    expect(reportButton("spam", { contract: "0x1", name: "   " }).action.payload.name).toBeNull();
  });
});
