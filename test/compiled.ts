import { fileURLToPath } from "node:url";

/** The project's root: children run from here, where dist/ and node_modules are. */
export const ROOT = fileURLToPath(new URL("..", import.meta.url));

/**
 * Node's arguments to run the compiled bot as production does (`node --enable-source-maps
 * dist/main.js`); test/build-setup.ts builds dist/ once before the suites.
 */
export const COMPILED_BOT = ["--enable-source-maps", "dist/main.js"];
