import { loadDotEnv } from "./config.ts";
import { migrateStore } from "./store/migrate.ts";

/** `npm run migrate-store`: see migrateStore. Prints what it copied, or why it copied nothing. */
loadDotEnv();
migrateStore(process.env).then(
  (summary) => process.stdout.write(`${summary}\n`),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
