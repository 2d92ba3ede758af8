import { parseConfig } from "../config.ts";
import type { SimulatorOptions } from "./index.ts";

/** Port of the stand-alone simulator when SIMULATOR_PORT is not set (the embedded one takes any free port). */
export const STANDALONE_PORT = 8787;

/**
 * Settings of the stand-alone simulator (`npm run simulator`), from the same parsed settings as
 * the bot (src/config.ts), so a variable means one thing everywhere.
 */
export function readSimulatorSettings(env: NodeJS.ProcessEnv): SimulatorOptions {
  const { simulator } = parseConfig(env);
  return {
    port:
      env.SIMULATOR_PORT === undefined || env.SIMULATOR_PORT === ""
        ? STANDALONE_PORT
        : simulator.port,
    apiKey: simulator.apiKey,
    seed: simulator.seed,
    mintIntervalMs: simulator.mintIntervalMs,
    badActorEvery: simulator.badActorEvery,
  };
}
