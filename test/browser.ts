/**
 * A real browser for the pages' tests (the verification page, issue 27; the managers' page, issue
 * 36: launchChromium, no wallet): Debian's Chromium
 * (`apt-get install -y chromium`; .ci/run installs it), driven by playwright-core, which downloads
 * no browser of its own. Each page gets a wallet injected the way extensions do it, EIP-1193 as
 * `window.ethereum` and announced by EIP-6963, whose accounts and signatures come from a viem
 * local account held here, in the test process: the page's script talks to it as to MetaMask.
 *
 * Without a Chromium that launches, the tests are skipped, loudly; under CI=true they fail.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import type { Hex, LocalAccount } from "viem";

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

/** What runs headless on a CI machine, with nothing calling home while the test runs. */
const FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/** How the injected wallet behaves. */
export interface WalletOptions {
  /** The account it connects with and signs with. */
  account: LocalAccount;
  /** Signs with another key than the account it gave (a forged signature). */
  signer?: LocalAccount;
  /** The person presses Reject in the wallet: at the connection, or at the signature. */
  reject?: "connect" | "sign";
  /** Its EIP-6963 name; several wallets: pass `also`. */
  name?: string;
  /** More wallets announced beside it (the page must let the person choose). */
  also?: WalletOptions[];
}

export interface WalletCall {
  wallet: string;
  method: string;
  params: unknown[];
}

export interface BrowserHarness {
  /**
   * A new page (a fresh context: nothing kept from another test) at `url`, with the wallet
   * injected, or none (`wallet` undefined: a browser with no wallet at all).
   */
  open(
    url: string,
    wallet?: WalletOptions,
  ): Promise<{ page: Page; calls: WalletCall[]; logged: string[] }>;
  close(): Promise<void>;
}

/** EIP-1193's "User Rejected Request". */
const USER_REJECTED = { code: 4001, message: "User rejected the request." };

/**
 * The page's side of the injected wallets: for each, an EIP-1193 provider forwarding to the
 * test's binding, set as window.ethereum (the first) and announced by EIP-6963 at once and at
 * every `eip6963:requestProvider`. Runs before the page's own script.
 */
function injectWallets(wallets: { id: string; name: string; uuid: string }[]): void {
  // Runs in the page: its window, typed here by what is used of it.
  const page = globalThis as unknown as {
    __verifyWallet(
      id: string,
      method: string,
      params: unknown[],
    ): Promise<{ result?: unknown; error?: { code: number; message: string } }>;
    ethereum?: unknown;
    addEventListener(type: string, listener: () => void): void;
    dispatchEvent(event: Event): boolean;
  };
  const call = page.__verifyWallet.bind(page);
  const providers = wallets.map(({ id, name, uuid }) => {
    const provider = {
      isMetaMask: false,
      async request(args: { method: string; params?: unknown[] }) {
        const answer = await call(id, args.method, args.params ?? []);
        if (answer.error) throw Object.assign(new Error(answer.error.message), answer.error);
        return answer.result;
      },
      on() {},
      removeListener() {},
    };
    const info = {
      uuid,
      name,
      icon: "data:image/svg+xml,%3Csvg%20xmlns%3D%22http%3A%2F%2Fwww.w3.org%2F2000%2Fsvg%22%2F%3E",
      rdns: `test.wallet.${id}`,
    };
    return Object.freeze({ info: Object.freeze(info), provider });
  });
  const first = providers[0];
  if (first) page.ethereum = first.provider;
  const announce = () => {
    for (const detail of providers)
      page.dispatchEvent(new CustomEvent("eip6963:announceProvider", { detail }));
  };
  page.addEventListener("eip6963:requestProvider", announce);
  announce();
}

/** The wallet's answers, in the test process. */
async function answer(
  wallet: WalletOptions,
  method: string,
  params: unknown[],
): Promise<{ result?: unknown; error?: { code: number; message: string } }> {
  const address = wallet.account.address;
  switch (method) {
    case "eth_requestAccounts":
      return wallet.reject === "connect" ? { error: USER_REJECTED } : { result: [address] };
    case "eth_accounts":
      return { result: [address] };
    case "eth_chainId":
      return { result: "0x1" };
    case "personal_sign": {
      if (wallet.reject === "sign") return { error: USER_REJECTED };
      const [message, from] = params as [Hex, string];
      if (from?.toLowerCase() !== address.toLowerCase())
        return { error: { code: 4100, message: "Unknown account." } };
      const signer = wallet.signer ?? wallet.account;
      return { result: await signer.signMessage({ message: { raw: message } }) };
    }
    default:
      return { error: { code: 4200, message: `Unsupported method ${method}` } };
  }
}

/** Says why Chromium did not launch and skips (undefined), or fails under CI=true. */
function cannotLaunch(error: unknown): undefined {
  const why = `Chromium cannot launch: ${(error as Error).message.split("\n")[0]}`;
  if (process.env.CI === "true") throw new Error(`${why} (CI=true: the browser tests must run)`);
  process.stderr.write(`\n*** SKIPPING the browser tests: ${why} ***\n\n`);
  return undefined;
}

/**
 * Chromium for pages that need no wallet (the managers' page), launched once for a test file:
 * each `newContext()` is a fresh profile with cookies of its own (a second browser, say), with its
 * own viewport. Undefined (after saying why on stderr) when it cannot launch outside CI.
 */
export async function launchChromium(): Promise<Browser | undefined> {
  try {
    if (!existsSync(CHROMIUM_PATH))
      throw new Error(`${CHROMIUM_PATH} is missing (apt-get install -y chromium)`);
    return await chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: FLAGS });
  } catch (error) {
    return cannotLaunch(error);
  }
}

/**
 * Chromium, launched once for a test file; undefined (after saying why on stderr) when it cannot
 * launch outside CI.
 */
export async function launchBrowser(): Promise<BrowserHarness | undefined> {
  const userDataDir = mkdtempSync(join(tmpdir(), "chromium-"));
  let context: BrowserContext;
  try {
    if (!existsSync(CHROMIUM_PATH))
      throw new Error(`${CHROMIUM_PATH} is missing (apt-get install -y chromium)`);
    context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: CHROMIUM_PATH,
      headless: true,
      args: FLAGS,
      // Nothing of the machine's own (locale, time zone) leaks into what the page shows.
      locale: "en-US",
      timezoneId: "UTC",
    });
  } catch (error) {
    rmSync(userDataDir, { recursive: true, force: true });
    return cannotLaunch(error);
  }
  for (const page of context.pages()) await page.close();
  let opened = 0;
  return {
    async open(url, wallet) {
      const all = wallet ? [wallet, ...(wallet.also ?? [])] : [];
      const calls: WalletCall[] = [];
      const page = await context.newPage();
      /** The page's console and errors: a CSP violation is logged there. */
      const logged: string[] = [];
      page.on("console", (message) => logged.push(`${message.type()}: ${message.text()}`));
      page.on("pageerror", (error) => logged.push(`error: ${error.message}`));
      // Every page of this context shares the binding: each page's wallets answer by their ids.
      opened++;
      const ids = all.map((w, index) => ({ id: `wallet-${opened}-${index}`, w }));
      await page.exposeBinding(
        "__verifyWallet",
        async (_source, id: string, method: string, params: unknown[]) => {
          const found = ids.find((entry) => entry.id === id);
          if (!found) return { error: { code: 4100, message: "No such wallet." } };
          calls.push({ wallet: found.w.name ?? "Test Wallet", method, params });
          return answer(found.w, method, params);
        },
      );
      if (all.length > 0)
        await page.addInitScript(
          injectWallets,
          ids.map(({ id, w }, index) => ({
            id,
            name: w.name ?? "Test Wallet",
            uuid: `00000000-0000-4000-8000-${String(index).padStart(12, "0")}`,
          })),
        );
      await page.goto(url);
      return { page, calls, logged };
    },
    async close() {
      await context.close();
      rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}
