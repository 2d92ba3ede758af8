/**
 * What /gate test says (issue 38): each criterion's result in plain words, what the wallet is or
 * has beside what is needed, suggestions as a sentence, names on another chain, and a footer that
 * names the chain the criteria read. A runtime on ethereum and base with the real evaluator over
 * the simulator; the simulator's demo wallet is a Collector with a Bored Ape, an Azuki and a Pudgy
 * Penguin.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiGateEvaluator } from "../src/gates/evaluate.ts";
import { GateService } from "../src/gates/service.ts";
import { gateStoreOf } from "../src/gates/store.ts";
import { silentLogger } from "../src/log.ts";
import { DEMO_WALLET } from "../src/simulator/index.ts";
import { type RuntimeSetup, startRuntime } from "./helpers.ts";

const DEMO = DEMO_WALLET.address;
let t: RuntimeSetup;
const say = async (line: string) => t.text(await t.say(line));

beforeAll(async () => {
  let service: GateService | undefined;
  const standIn = new Proxy({} as GateService, {
    get: (_, key) => {
      const value = Reflect.get(service as GateService, key);
      return typeof value === "function" ? value.bind(service) : value;
    },
  });
  t = await startRuntime({ CHAINS: "ethereum,base" }, {}, [], { services: { gates: standIn } });
  service = new GateService({
    gates: gateStoreOf(t.store),
    wallets: t.store.wallets,
    evaluator: new ApiGateEvaluator({ apis: t.apis }),
    logger: silentLogger(),
    settings: { graceHours: 24 },
  });
}, 60_000);

afterAll(async () => {
  await t?.close();
});

describe("/gate test in words", () => {
  it("a behavior criterion says what the wallet is, and what it is not", async () => {
    const whale = await say(`/gate test ${DEMO} behavior whale`);
    expect(whale).toContain(
      "✗ fail: behavior is Whale on Ethereum (the wallet is Collector, not Whale)",
    );
    expect(whale).not.toMatch(/no wallet is|needs one/);
    const notFlipper = await say(`/gate test ${DEMO} not behavior flipper`);
    expect(notFlipper).toContain("(the wallet is Collector, not Flipper)");
    // As people also say it.
    expect(await say(`/gate test ${DEMO} behavior not flipper`)).toContain(
      "(the wallet is Collector, not Flipper)",
    );
    expect(await say(`/gate test ${DEMO} not behavior collector`)).toContain(
      "✗ fail: behavior is not Collector on Ethereum (the wallet is Collector)",
    );
  });

  it("a passing spend criterion shows the wallet's figures, not its own words again", async () => {
    const text = await say(`/gate test ${DEMO} volume 1, avgprice 0.1`);
    expect(text).toMatch(
      /✓ pass: .*\(it has a volume of [\d.,]+ ETH and an average price of [\d.,]+ ETH; needs /,
    );
    expect(text).not.toMatch(/\(the wallet has NFT purchase volume/);
  });

  it("suggestions are one sentence, each name once with its address", async () => {
    const text = await say(`/gate test ${DEMO} holds 1 Ape`);
    expect(text).toMatch(/Did you mean [^?]*Bored Ape Yacht Club \(0xBC4C…f13D\)[^?]*\?/);
    expect(text).not.toMatch(/\(\(|\)\)/);
  });

  it("a wallet with a character no name may have is said to be neither, in plain words", async () => {
    const text = await say("/gate test vit@lik.eth holds 1 Azuki");
    expect(text).toContain('"vit@lik.eth" is not a wallet address or an ENS name');
    expect(text).not.toMatch(/\{[0-9a-f]+\}|disallowed character/);
  });

  it("a name on another chain is read there, and the footer names that chain", async () => {
    const named = await say(`/gate test ${DEMO} holds 1 Pudgy on base`);
    expect(named).toContain("✓ pass: holds at least 1 Pudgy Penguins on Base");
    expect(named).toMatch(/— Base$/m);
    const byAddress = await say(
      `/gate test ${DEMO} holds 1 0xBd3531dA5CF5857e7CfAA92426877b022e612cf8 on base`,
    );
    expect(byAddress).toMatch(/— Base$/m);
    expect(await say(`/gate test ${DEMO} holds 1 Azuki`)).toMatch(/— Ethereum$/m);
  });
});
