import { BEHAVIORS } from "../api/schemas.ts";

/** Words people use for the data service's behaviors, as the service names them. */
const ALIASES: Record<string, string> = {
  bad: "BEHAVIOR_BADACTOR",
  spammer: "BEHAVIOR_BADACTOR",
  scammer: "BEHAVIOR_BADACTOR",
  new: "BEHAVIOR_NEWBIE",
  unlabelled: "BEHAVIOR_UNSPECIFIED",
  unlabeled: "BEHAVIOR_UNSPECIFIED",
  nolabel: "BEHAVIOR_UNSPECIFIED",
};

/** A typed name as a key: case, spaces, dashes and underscores aside. */
export const behaviorKey = (raw: string) =>
  raw
    .trim()
    .toLowerCase()
    .replace(/[\s_-]+/g, "");

/**
 * One of the data service's behaviors as people type it (BEHAVIOR_BADACTOR, badactor, "bad
 * actor", programmed-flipper, spammer...), as the service names it; undefined when it is none.
 */
export function serviceBehaviorNamed(raw: string): string | undefined {
  const key = behaviorKey(raw);
  if (ALIASES[key]) return ALIASES[key];
  for (const behavior of BEHAVIORS) {
    const bare = behavior.slice("BEHAVIOR_".length).toLowerCase().replace(/_/g, "");
    if (key === bare || key === `behavior${bare}`) return behavior;
  }
  return undefined;
}
