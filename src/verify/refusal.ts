import type { VerifyRefusal } from "./types.ts";

/** A refused step, in the person's words. */
export type Refused = { ok: false; refusal: VerifyRefusal };

export const refuse = (code: VerifyRefusal["code"], message: string): Refused => ({
  ok: false,
  refusal: { code, message },
});
