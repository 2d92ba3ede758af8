import type { Sql } from "../../store/query.ts";
import { SqlOutboxStore } from "./outbox.ts";
import { SqlSubscriptionStore } from "./subscriptions.ts";

/** The alerts' own stores: which chats subscribe, and the outbox of alerts owed to them. */
export interface AlertStores {
  subscriptions: SqlSubscriptionStore;
  outbox: SqlOutboxStore;
}

/** Each store's alert stores, built once (see alertStoresOf). */
const built = new WeakMap<Sql, AlertStores>();

/**
 * The alerts' stores over the bot's store (its query layer): the alerts keep their own tables,
 * written once for both databases; the rest of the bot reaches them only through the feature.
 */
export function alertStoresOf(store: { sql?: Sql | undefined }): AlertStores {
  const { sql } = store;
  if (!sql) throw new Error("the alerts' stores need the store's query layer (store.sql)");
  let stores = built.get(sql);
  if (stores === undefined) {
    stores = { subscriptions: new SqlSubscriptionStore(sql), outbox: new SqlOutboxStore(sql) };
    built.set(sql, stores);
  }
  return stores;
}
