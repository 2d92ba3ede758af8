/**
 * The gate service's words: what a person is told privately (a warning before the grace, how to
 * join), and the reasons its log gives. Criteria's own words are src/gates/describe.ts's.
 */

import type { Gate, GateTarget, GateVerdict, OwedGrant } from "./types.ts";

/** The log's words for a warning that did not reach the person (issue 34). */
export const WARNING_CLOSED = "warning could not be delivered: direct messages closed";
export const WARNING_FAILED = "warning could not be delivered: the platform did not answer";

/** Why an expired join request was declined. */
export const REQUEST_EXPIRED = "no passing wallet proved in 10 minutes";

export const targetName = (target: GateTarget) =>
  target.platform === "telegram" ? target.title : `the ${target.roleName} role`;

export const whys = (verdict: GateVerdict, outcome: "pass" | "fail") =>
  verdict.results
    .filter((result) => outcome === "pass" || result.outcome !== "pass")
    .map((result) => result.why)
    .join("; ") || (outcome === "pass" ? "passes" : "does not pass");

/** The one private warning of a member who stops passing: why, until when, and what to do. */
export const graceWarning = (gate: Gate, reason: string, graceUntil: number) =>
  `You no longer pass the gate for ${targetName(gate.target)}: ${reason}. You keep it until ${new Date(graceUntil).toISOString().slice(0, 16).replace("T", " ")} UTC. To keep it, prove a wallet that passes with /verify.`;

/** A removal's reason when the warning before the grace never reached the person. */
export const notWarned = (reason: string) =>
  `${reason}; not warned: direct messages closed or unreachable`;

/** A join request kept pending: how to prove a wallet (`link` opens /verify, when the platform has one). */
export const joinRequestNotice = (gate: Gate, link: string | undefined) =>
  `To join ${gate.target.platform === "telegram" ? gate.target.title : "the group"}, prove a wallet that passes its gate within 10 minutes: ${link ?? "send /verify to me"}. Signing is free and moves nothing.`;

/** A grant owed given up: the platform failed for a day (OWED_FOR_MS). */
export function owedGivenUp(action: OwedGrant["action"], error: string): string {
  const what =
    action === "approved" ? "the join request was not approved" : "the role was not given";
  return `${what}: the platform failed for a day (${error}); a new proof tries again`;
}
