import { describe } from "vitest";
import { postgresAvailable } from "../services.ts";
import { actionsContract } from "./actions.contract.ts";
import { backends } from "./backends.ts";
import { chatPausesContract } from "./chat-pauses.contract.ts";
import { chatSettingsContract } from "./chat-settings.contract.ts";
import { collectionsContract } from "./collections.contract.ts";
import { digestsContract } from "./digests.contract.ts";
import { keyValueContract } from "./kv.contract.ts";
import { outboxContract } from "./outbox.contract.ts";
import { queryContract } from "./query.contract.ts";
import { reportsContract } from "./reports.contract.ts";
import { sendWaitsContract } from "./send-waits.contract.ts";
import { subscriptionsContract } from "./subscriptions.contract.ts";
import { updatesContract } from "./updates.contract.ts";
import { walletsContract } from "./wallets.contract.ts";
import { watchesContract } from "./watches.contract.ts";

/** Every store contract against PostgreSQL, each store in a schema of its own. */
for (const backend of backends.filter((b) => b.name === "postgres")) {
  describe.runIf(await postgresAvailable())(`store contract: ${backend.name}`, () => {
    subscriptionsContract(backend.open);
    outboxContract(backend.open);
    actionsContract(backend.open);
    reportsContract(backend.open);
    collectionsContract(backend.open);
    keyValueContract(backend.open);
    queryContract(backend.open);
    updatesContract(backend.open);
    chatSettingsContract(backend.open);
    chatPausesContract(backend.open);
    digestsContract(backend.open);
    watchesContract(backend.open);
    sendWaitsContract(backend.open);
    walletsContract(backend.open);
  });
}
