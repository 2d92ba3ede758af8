import type { RenderableReply } from "../src/core/reply.ts";
import type { RuntimeSetup } from "./helpers.ts";

/** What the command tests read off replies, for the runtime a test file is using. */
export function replyHelpers(runtime: () => RuntimeSetup) {
  return {
    field: (reply: RenderableReply, name: string) =>
      reply.fields?.find((f) => f.name === name)?.value,
    rows: (reply: RenderableReply) => reply.table?.rows ?? [],
    /** The id of the button whose label holds `label`; a missing one fails with the reply. */
    button: (reply: RenderableReply, label: string) => {
      const found = reply.buttons?.find((b) => b.label.includes(label));
      if (!found) throw new Error(`no "${label}" button under: ${runtime().text(reply)}`);
      return found.id;
    },
    /** The requests a step sent, so tests on a shared runtime see only their own. */
    async sent<T>(step: () => Promise<T>) {
      const t = runtime();
      const before = t.sim.requests.length;
      const result = await step();
      return { result, requests: t.sim.requests.slice(before) };
    },
  };
}

/** `n` distinct well-formed addresses, 0x…01 upwards. */
export const addresses = (n: number) =>
  Array.from({ length: n }, (_, i) => `0x${(i + 1).toString(16).padStart(40, "0")}`);
