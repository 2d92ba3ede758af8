import { storeOver } from "../../store/query.ts";
import { SqlOutboxStore } from "./outbox.ts";
import { SqlSubscriptionStore } from "./subscriptions.ts";

/** The alerts' own stores: which chats subscribe, and the outbox of alerts owed to them. */
export interface AlertStores {
  subscriptions: SqlSubscriptionStore;
  outbox: SqlOutboxStore;
}

/**
 * The alerts' stores over the bot's store (its query layer), built once: the alerts keep their own
 * tables, written once for both databases; the rest of the bot reaches them only through the
 * feature.
 */
export const alertStoresOf = storeOver(
  (sql): AlertStores => ({
    subscriptions: new SqlSubscriptionStore(sql),
    outbox: new SqlOutboxStore(sql),
  }),
);
