/**
 * Issue 14, "Memory": a plain name (vitalik.eth) is normalized without the ENSIP-15 normalizer,
 * whose first call costs about 200 ms and 20 MB for the life of the process; every other name
 * still goes through it, and the answer is the normalizer's either way.
 */
import fc from "fast-check";
import { describe, expect, it, vi } from "vitest";

const calls = vi.hoisted(() => ({ count: 0 }));
vi.mock("@adraffy/ens-normalize", async (importOriginal) => {
  const real = await importOriginal<typeof import("@adraffy/ens-normalize")>();
  return {
    ...real,
    ens_normalize: (name: string) => {
      calls.count++;
      return real.ens_normalize(name);
    },
  };
});

const { normalizeEnsName } = await import("../src/api/ens.ts");
const { parseEnsName } = await import("../src/api/validate.ts");
const { ens_normalize } = await import("@adraffy/ens-normalize");

const label = fc.stringMatching(/^[a-z0-9]{1,8}(?:-[a-z0-9]{1,8}){0,2}$/);

describe("ENS names", () => {
  it("plain names skip the normalizer and come out as it would give them", () => {
    const before = calls.count;
    expect(parseEnsName("vitalik.eth")).toBe("vitalik.eth");
    expect(parseEnsName("  nick.eth ")).toBe("nick.eth");
    expect(calls.count).toBe(before);
    fc.assert(
      fc.property(fc.array(label, { minLength: 1, maxLength: 4 }), (labels) => {
        const name = labels.join(".");
        expect(normalizeEnsName(name)).toBe(ens_normalize(name));
      }),
    );
  });

  it("any other name goes through the normalizer: mapped, or refused with its reason", () => {
    const before = calls.count;
    expect(parseEnsName("Vitalik.ETH")).toBe("vitalik.eth");
    expect(parseEnsName("🚀rocket.eth")).toBe("🚀rocket.eth");
    expect(() => parseEnsName("ab--cd.eth")).toThrow(/not a valid ENS name/);
    expect(() => parseEnsName("-.eth")).not.toThrow();
    expect(calls.count).toBe(before + 4);
  });
});
