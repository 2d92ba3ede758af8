/** `npm run simulator`: the data-service simulator on its own, until SIGINT or SIGTERM. */

import { SIMULATOR_CHAIN_IDS } from "../chains.ts";
import { startSimulator } from "./index.ts";
import { readSimulatorSettings } from "./settings.ts";

async function main(): Promise<void> {
  const settings = readSimulatorSettings(process.env);
  const simulator = await startSimulator({ ...settings, chains: SIMULATOR_CHAIN_IDS });
  console.log(`simulator listening on ${simulator.url}`);
  console.log(
    `chains: ${simulator.chains.map((chain) => `${chain}=${simulator.urlOf(chain)}`).join(",")} (as CHAINS)`,
  );
  console.log(`API key: ${simulator.apiKey}`);
  console.log(
    settings.mintIntervalMs
      ? `minting a new contract every ${settings.mintIntervalMs} ms`
      : "minting disabled",
  );
  const stop = (signal: NodeJS.Signals) => {
    console.log(`${signal}: stopping`);
    simulator.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
