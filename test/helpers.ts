import { Writable } from "node:stream";
import { type ApiClient, createApiClient } from "../src/api/client.ts";
import { type Config, parseConfig } from "../src/config.ts";
import { createLogger, type Logger } from "../src/log.ts";
import { type Simulator, type SimulatorOptions, startSimulator } from "../src/simulator/index.ts";

/** A logger whose JSON lines are kept for assertions. */
export function capturingLogger(secrets: string[] = []): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk, _encoding, callback) {
      lines.push(String(chunk));
      callback();
    },
  });
  return { logger: createLogger({ level: "debug", secrets, destination }), lines };
}

export interface ClientSetup {
  sim: Simulator;
  api: ApiClient;
  config: Config;
  lines: string[];
  close(): Promise<void>;
}

/** The simulator on loopback and a client for it, with fast retries for tests. */
export async function startClient(
  env: Record<string, string> = {},
  simOptions: SimulatorOptions = {},
  overrides: { apiKey?: string } = {},
): Promise<ClientSetup> {
  const sim = await startSimulator({ apiKey: "test-key-8c1f0e", ...simOptions });
  const config = parseConfig({
    API_TIMEOUT_MS: "2000",
    API_RETRIES: "3",
    API_RETRY_MIN_DELAY_MS: "10",
    API_RETRY_MAX_DELAY_MS: "50",
    API_RETRY_MAX_TOTAL_MS: "5000",
    ...env,
  });
  const apiKey = overrides.apiKey ?? sim.apiKey;
  const { logger, lines } = capturingLogger([apiKey]);
  const api = createApiClient(config, sim.url, apiKey, logger);
  return {
    sim,
    api,
    config,
    lines,
    async close() {
      await api.close();
      await sim.close();
    },
  };
}

/** Runs a promise expected to fail and returns its error. */
export async function failure(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error("expected the call to fail, but it succeeded");
}
