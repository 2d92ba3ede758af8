import type { Sql } from "../query.ts";
import type { Store } from "../types.ts";
import { SqlActionStore } from "./actions.ts";
import { SqlChatPauseStore } from "./chat-pause.ts";
import { SqlChatRowsStore } from "./chat-rows.ts";
import { SqlChatSettingsStore } from "./chat-settings.ts";
import { SqlCollectionIndexStore } from "./collections.ts";
import { SqlDelegationStore } from "./delegations.ts";
import { SqlKeyValueStore, SqlLeaseStore } from "./kv.ts";
import { SqlReportStore } from "./reports.ts";
import { SqlSendWaitStore } from "./send-waits.ts";
import { SqlUpdateStore } from "./updates.ts";
import { SqlVerifyLinkStore, SqlWalletStore } from "./wallets.ts";

/** The kernel's stores, written once, over either database's query runner. */
export function kernelStores(
  sql: Sql,
  options: { maxButtonsPerUser?: number | undefined } = {},
): Omit<Store, "sql" | "healthy" | "close" | "diskFull" | "waiting" | "ready" | "chores"> {
  return {
    actions: new SqlActionStore(sql, options.maxButtonsPerUser),
    reports: new SqlReportStore(sql),
    wallets: new SqlWalletStore(sql),
    verifyLinks: new SqlVerifyLinkStore(sql),
    delegations: new SqlDelegationStore(sql),
    collections: new SqlCollectionIndexStore(sql),
    kv: new SqlKeyValueStore(sql),
    leases: new SqlLeaseStore(sql),
    updates: new SqlUpdateStore(sql),
    chatSettings: new SqlChatSettingsStore(sql),
    chatRows: new SqlChatRowsStore(sql),
    chatPauses: new SqlChatPauseStore(sql),
    sendWaits: new SqlSendWaitStore(sql),
  };
}
