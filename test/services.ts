import { connect } from "node:net";

/**
 * The real servers some suites need: PostgreSQL and Redis on loopback (the project's machines and
 * CI run both). With CI=true a server that cannot be reached fails the suite with a clear message;
 * on a laptop without them the suite skips, with one loud line saying which and why.
 */

export const POSTGRES_URL = process.env.TEST_DATABASE_URL ?? "postgres://root@127.0.0.1:5432/test";
export const REDIS_URL = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";

function reachable(url: string, defaultPort: number): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname || "127.0.0.1", port: Number(port || defaultPort) });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(2_000, () => done(false));
    socket.once("connect", () => done(true));
    socket.once("error", () => done(false));
  });
}

async function available(name: string, url: string, defaultPort: number): Promise<boolean> {
  if (await reachable(url, defaultPort)) return true;
  const { host } = new URL(url);
  if (process.env.CI === "true")
    throw new Error(
      `${name} is not reachable at ${host}, and CI=true: the suites that need it fail rather than skip. Start ${name} there (or set the TEST_* URL).`,
    );
  console.warn(`\n!!! ${name} is not reachable at ${host}: SKIPPING the suites that need it !!!\n`);
  return false;
}

let postgres: Promise<boolean> | undefined;
let redis: Promise<boolean> | undefined;

/** Whether PostgreSQL answers (throws with CI=true when it does not). Use with describe.runIf. */
export function postgresAvailable(): Promise<boolean> {
  postgres ??= available("PostgreSQL", POSTGRES_URL, 5432);
  return postgres;
}

/** Whether Redis answers (throws with CI=true when it does not). Use with describe.runIf. */
export function redisAvailable(): Promise<boolean> {
  redis ??= available("Redis", REDIS_URL, 6379);
  return redis;
}
