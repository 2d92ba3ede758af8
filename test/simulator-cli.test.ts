import { spawn } from "node:child_process";
import { once } from "node:events";
import { describe, expect, it } from "vitest";
import { readSimulatorSettings } from "../src/simulator/settings.ts";
import { ROOT } from "./compiled.ts";

describe("simulator settings", () => {
  it("defaults to port 8787, key sim-key, seed 1 and a mint every 5 s", () => {
    expect(readSimulatorSettings({})).toEqual({
      port: 8787,
      apiKey: "sim-key",
      seed: 1,
      mintIntervalMs: 5000,
      badActorEvery: 10,
    });
  });

  it("reads the environment and names the variable that is wrong", () => {
    expect(
      readSimulatorSettings({
        SIMULATOR_PORT: "0",
        SIMULATOR_API_KEY: "k",
        SIMULATOR_SEED: "42",
        SIMULATOR_MINT_INTERVAL_MS: "0",
        SIMULATOR_BADACTOR_EVERY: "0",
      }),
    ).toEqual({ port: 0, apiKey: "k", seed: 42, mintIntervalMs: 0, badActorEvery: 0 });
    expect(() => readSimulatorSettings({ SIMULATOR_PORT: "70000" })).toThrow(/SIMULATOR_PORT/);
    expect(() => readSimulatorSettings({ SIMULATOR_SEED: "one" })).toThrow(/SIMULATOR_SEED/);
  });
});

describe("npm run simulator", () => {
  it("prints its URL and key, serves, and stops cleanly on SIGTERM", async () => {
    const child = spawn(process.execPath, ["dist/simulator.js"], {
      cwd: ROOT,
      env: { ...process.env, SIMULATOR_PORT: "0", SIMULATOR_API_KEY: "cli-key" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.setEncoding("utf8");
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout.on("data", (chunk: string) => {
        output += chunk;
        const match = /listening on (http:\/\/\S+)/.exec(output);
        if (match?.[1] && output.includes("API key")) resolve(match[1]);
      });
      child.once("exit", () => reject(new Error(`exited early: ${output}`)));
    });
    const response = await fetch(`${url}/foundational/v1beta2/contracts?limit=1`, {
      headers: { "x-api-key": "cli-key" },
    });
    expect(response.status).toBe(200);
    expect(output).toContain("API key: cli-key");
    child.kill("SIGTERM");
    const [code] = await once(child, "exit");
    expect(code).toBe(0);
  });
});
