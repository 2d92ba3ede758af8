// vitest globalSetup: builds dist/ once, before any suite, so tests that start the bot as a
// child run the compiled output as production does (and need not compile TypeScript each time).
import { buildDist } from "../scripts/build.mjs";
import { ROOT } from "./compiled.ts";

export default async function setup(): Promise<void> {
  await buildDist(ROOT);
}
