import {
  buildWorld,
  type Simulator,
  type SimulatorOptions,
  startSimulator,
  type World,
} from "../src/simulator/index.ts";

const worlds = new Map<number, World>();

/**
 * The simulator's data set for a seed, built once per test file (per process) and shared by
 * every simulator the file starts: building one costs 0.2-0.5 s of CPU, and the suite starts
 * some 250. Each simulator still mints into its own copy of the contract list (see
 * SimulatorOptions.world), and keeps its own requests, faults and scripted answers.
 *
 * The data set is anchored at the first build, so "now" in the data may lag the clock by as
 * long as the file has run: a data service indexed a minute ago. A test that sets the data
 * clock (`now`) gets a data set built at that clock.
 */
export function sharedWorld(seed = 1): World {
  let world = worlds.get(seed);
  if (!world) {
    world = buildWorld(seed, Date.now());
    worlds.set(seed, world);
  }
  return world;
}

/** `startSimulator` on the file's shared data set (unless the test sets its own clock or set). */
export function startTestSimulator(options: SimulatorOptions = {}): Promise<Simulator> {
  if (options.now !== undefined || options.world !== undefined) return startSimulator(options);
  return startSimulator({ ...options, world: sharedWorld(options.seed ?? 1) });
}
