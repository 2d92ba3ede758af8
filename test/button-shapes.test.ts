import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toChecksumAddress } from "../src/api/validate.ts";
import type { ButtonAction, RenderableReply } from "../src/core/reply.ts";
import { reportButton } from "../src/reports/buttons.ts";
import type { Store } from "../src/store/types.ts";
import { type RuntimeSetup, startRuntime } from "./helpers.ts";
import { postgresAvailable } from "./services.ts";
import { backends, type OpenedStore } from "./store/backends.ts";

/**
 * Buttons live in the store for days (BUTTON_TTL_S, 7 by default), so a button stored by the
 * previous release is pressed by the next. Each command's buttons are written here literally in
 * the shape the bot has stored them in (the JSON of { command, action, payload }, the runtime's
 * `chain` in every payload), on SQLite and on PostgreSQL: what the commands store now is that
 * same shape, and a button stored in it, as an older release wrote it, still works when pressed.
 */

const HOUR = 3_600_000;
const who = { platform: "telegram", chatId: "chat-1", userId: "u1" } as const;

for (const backend of backends) {
  const available = backend.name === "postgres" ? await postgresAvailable() : true;
  describe.runIf(available)(`buttons stored in their old shape: ${backend.name}`, () => {
    let t: RuntimeSetup;
    let opened: OpenedStore;
    let actions: Store["actions"];

    beforeAll(async () => {
      opened = await backend.open();
      actions = opened.store.actions;
      t = await startRuntime({}, {}, [], { actions });
    });
    afterAll(async () => {
      await t?.close();
      await opened?.close();
    });

    const button = (reply: RenderableReply, label: string) => {
      const found = reply.buttons?.find((b) => b.label === label);
      if (!found) throw new Error(`no "${label}" button under: ${t.text(reply)}`);
      return found.id;
    };
    /** The action a button of a fresh reply was stored with. */
    const storedAction = async (reply: RenderableReply, label: string) =>
      (await actions.get(button(reply, label)))?.action;
    /** Stores `action` as a release that wrote this shape did, and presses it. */
    const pressStored = async (action: ButtonAction, as: Partial<typeof who> = {}) => {
      const [id] = await actions.putMany([{ ...who, ...as, action, expiresAt: Date.now() + HOUR }]);
      return t.press(id ?? "");
    };
    /** A reply as people see it: the ids of its buttons are new on every reply. */
    const seen = (reply: RenderableReply) => ({
      ...reply,
      buttons: reply.buttons?.map(({ id: _id, ...rest }) => rest),
    });
    /** The shape is the one stored, and pressing it answers as pressing the fresh button does. */
    async function samePress(reply: RenderableReply, label: string, old: ButtonAction) {
      expect(await storedAction(reply, label)).toEqual(old);
      const fresh = await t.press(button(reply, label));
      expect(seen(await pressStored(old))).toEqual(seen(fresh));
      expect(fresh.tone).not.toBe("warning");
      return fresh;
    }

    it("/audience: Sample wallets and its pages", async () => {
      const contract = toChecksumAddress(t.sim.fixtures.collection);
      const reply = await t.say(`/audience ${contract.toLowerCase()}`);
      const samples = await samplesPress(reply);
      await samePress(samples, "Next ▶", {
        command: "audience",
        action: "samples",
        payload: { chain: "ethereum", contract, page: 1 },
      });

      async function samplesPress(from: RenderableReply) {
        return samePress(from, "Sample wallets", {
          command: "audience",
          action: "samples",
          payload: { chain: "ethereum", contract, page: 0 },
        });
      }
    });

    it("/common: the next page, of the shares and of a trend", async () => {
      const collection = toChecksumAddress(t.sim.fixtures.collection);
      await samePress(await t.say(`/common ${collection}`), "Next ▶", {
        command: "common",
        action: "page",
        payload: { chain: "ethereum", collection, trend: null, page: 1 },
      });
      await samePress(await t.say(`/common ${collection} 7d`), "Next ▶", {
        command: "common",
        action: "page",
        payload: { chain: "ethereum", collection, trend: "7d", page: 1 },
      });
    });

    it("/top: the next page", async () => {
      const reply = await t.say("/top sales 365d 3");
      const second = await samePress(reply, "Next ▶", {
        command: "top",
        action: "page",
        payload: { chain: "ethereum", metric: "sales", duration: "365d", limit: 3, page: 1 },
      });
      expect(second.table?.rows[0]?.[0]).toBe("4");
    });

    it("/segment: the next page and the CSV export", async () => {
      const f = t.sim.fixtures;
      const collection = toChecksumAddress(f.collection);
      const collection2 = toChecksumAddress(f.erc1155Collection);
      const reply = await t.say(`/segment ${collection} ${collection2} condition:any`);
      const query = {
        chain: "ethereum",
        collection,
        collection2,
        min_owned: null,
        condition: "any",
        min_volume: null,
        min_avg_price: null,
        min_collections: null,
        max_days_since_purchase: null,
      };
      await samePress(reply, "Next ▶", {
        command: "segment",
        action: "page",
        payload: { ...query, page: 1 },
      });
      await samePress(reply, "Export CSV", { command: "segment", action: "csv", payload: query });
      // With one collection and a filter.
      const one = await t.say(`/segment ${collection} min_owned:1`);
      await samePress(one, "Export CSV", {
        command: "segment",
        action: "csv",
        payload: { ...query, collection2: null, condition: null, min_owned: "1" },
      });
    });

    it("/nft: Raw metadata and Report spam", async () => {
      const { contract, tokenId } = t.sim.fixtures.token;
      const reply = await t.say(`/nft ${contract} ${tokenId}`);
      const address = (await actions.get(button(reply, "Raw metadata")))?.action.payload.contract;
      expect(typeof address).toBe("string");
      await samePress(reply, "Raw metadata", {
        command: "nft",
        action: "raw",
        payload: { chain: "ethereum", contract: address as string, tokenId },
      });
      const old = {
        command: "report",
        action: "ask",
        payload: {
          chain: "ethereum",
          kind: "spam",
          contract: address as string,
          tokenId,
          wallet: null,
        },
      };
      // Issue 38 added the collection's name (none known here); the older shape still works.
      expect(await storedAction(reply, "Report spam")).toEqual({
        ...old,
        payload: { ...old.payload, name: null },
      });
      // Nobody proved a wallet yet: both say how to prove one.
      const fresh = await t.press(button(reply, "Report spam"));
      expect(fresh.text).toMatch(/a report needs one you proved/);
      expect(seen(await pressStored(old))).toEqual(seen(fresh));
    });

    it("/wallet, a report from its buttons, and /reports' export", async () => {
      const { address } = await t.prove();
      // Two pages of ordinary NFTs, and some spam.
      for (let i = 0; i < 15; i++) t.sim.giveNft(address, undefined, { spam: i >= 12 });
      const wallet = toChecksumAddress(address);
      const list = await t.say(`/wallet ${wallet} exclude`);
      await samePress(list, "Next ▶", {
        command: "wallet",
        action: "page",
        payload: { chain: "ethereum", wallet, spam: "exclude", collection: null, page: 1 },
      });
      const item = (await storedAction(list, "Spam #1"))?.payload ?? {};
      const target = { contract: item.contract as string, tokenId: item.tokenId as string };
      // Issue 38 added the collection's name to the stored shape; the older shape, without it,
      // asks the same (the name is then the index's).
      expect(item.name).toBe("CryptoPunks");
      const ask = await samePress(list, "Spam #1", {
        command: "report",
        action: "ask",
        payload: { chain: "ethereum", kind: "spam", ...target, wallet, name: "CryptoPunks" },
      });
      const older = await pressStored({
        command: "report",
        action: "ask",
        payload: { chain: "ethereum", kind: "spam", ...target, wallet },
      });
      expect(older.text).toBe(ask.text);
      expect(ask.title).toBe("Report as spam?");

      // The prompt's buttons, as stored: the asker's wallet as proved, and who asked.
      const by = "telegram:u1";
      const confirm = {
        command: "report",
        action: "confirm",
        payload: {
          chain: "ethereum",
          kind: "spam",
          ...target,
          wallet: address,
          name: "CryptoPunks",
          by,
        },
      };
      const cancel = { command: "report", action: "cancel", payload: { chain: "ethereum", by } };
      expect(await storedAction(ask, "Confirm report")).toEqual(confirm);
      expect(await storedAction(ask, "Cancel")).toEqual(cancel);
      expect((await pressStored(cancel)).text).toBe("Cancelled: nothing was reported.");
      const reported = t.sim.reports.length;
      const done = await pressStored(confirm);
      expect(done.tone).not.toBe("warning");
      expect(t.sim.reports).toHaveLength(reported + 1);
      // The fresh button finds the same report made.
      expect((await t.press(button(ask, "Confirm report"))).text).toMatch(/already reported/);

      const reports = await t.say("/reports");
      const exported = await samePress(reports, "Export CSV", {
        command: "reports",
        action: "export",
        payload: { chain: "ethereum", chat: "chat-1" },
      });
      expect(exported.files?.[0]?.name).toBe("spam-reports.csv");
    });

    it("an alert's Report spam keeps the chain it names", () => {
      const contract = t.sim.fixtures.collection;
      expect(reportButton("spam", { contract, chain: "base" }).action).toEqual({
        command: "report",
        action: "ask",
        payload: { kind: "spam", contract, tokenId: "", wallet: null, name: null, chain: "base" },
      });
    });

    it("a stored payload its action cannot read answers clearly, and runs nothing", async () => {
      const before = t.sim.requests.length;
      for (const action of [
        { command: "nft", action: "raw", payload: { chain: "ethereum", contract: "0x1" } },
        { command: "wallet", action: "page", payload: { chain: "ethereum", spam: "all" } },
        { command: "report", action: "gone", payload: { chain: "ethereum" } },
      ])
        expect((await pressStored(action)).text).toBe(
          "This button no longer works. Run the command again.",
        );
      expect(t.sim.requests.length).toBe(before);
    });
  });
}
