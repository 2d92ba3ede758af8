import { z } from "zod";
import type { SimulatorOptions } from "./index.ts";

/**
 * Settings of the stand-alone simulator (`npm run simulator`), read from the environment.
 * Kept in one function so they can move into src/config.ts unchanged.
 */
const simulatorEnv = z.object({
  SIMULATOR_PORT: z.coerce.number().int().min(0).max(65_535).default(8787),
  SIMULATOR_API_KEY: z.string().min(1).default("sim-key"),
  SIMULATOR_SEED: z.coerce.number().int().default(1),
  SIMULATOR_MINT_INTERVAL_MS: z.coerce.number().int().min(0).default(5000),
});

export function readSimulatorSettings(env: NodeJS.ProcessEnv): SimulatorOptions {
  const parsed = simulatorEnv.safeParse(env);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const variable = String(issue?.path[0] ?? "environment");
    throw new Error(`invalid ${variable}: ${issue?.message ?? "invalid value"}`);
  }
  return {
    port: parsed.data.SIMULATOR_PORT,
    apiKey: parsed.data.SIMULATOR_API_KEY,
    seed: parsed.data.SIMULATOR_SEED,
    mintIntervalMs: parsed.data.SIMULATOR_MINT_INTERVAL_MS,
  };
}
