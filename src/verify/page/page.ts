/**
 * The verification page's script (issue 27), bundled by scripts/build.mjs for the browser: no
 * framework, nothing from elsewhere (the page's Content-Security-Policy allows only its own
 * origin). It finds the wallets (EIP-6963, else `window.ethereum`), asks one for an account, has
 * the server write a Sign-In with Ethereum message for it, asks the wallet to sign it
 * (personal_sign) and sends the signature back. Every step that can fail says why in plain words.
 */

/** EIP-1193: what a wallet injects. */
interface Eip1193Provider {
  request(args: { method: string; params?: unknown[] }): Promise<unknown>;
}

/** EIP-6963: a wallet announcing itself, so several can live in one browser. */
interface Announced {
  info: { uuid: string; name: string; icon?: string; rdns?: string };
  provider: Eip1193Provider;
}

interface Refused {
  refusal?: { code?: string; message?: string };
}

const wallets = new Map<string, Announced>();

window.addEventListener("eip6963:announceProvider", (event) => {
  const detail = (event as CustomEvent<Announced>).detail;
  if (detail?.info?.uuid && typeof detail.provider?.request === "function")
    wallets.set(detail.info.uuid, detail);
});
window.dispatchEvent(new Event("eip6963:requestProvider"));

const $ = (id: string) => document.getElementById(id) as HTMLElement;
const connect = $("connect") as HTMLButtonElement;
const status = $("status");
const choices = $("wallets");

/** Shows where things stand; `refused` marks it as a refusal (screen readers hear it at once). */
function say(text: string, kind: "info" | "refused" | "verified" = "info"): void {
  status.textContent = text;
  status.className = kind;
  status.setAttribute("role", kind === "refused" ? "alert" : "status");
}

/** The wallets found: announced ones, else the one the browser injected as window.ethereum. */
function found(): { name: string; provider: Eip1193Provider }[] {
  const announced = [...wallets.values()].map((w) => ({ name: w.info.name, provider: w.provider }));
  if (announced.length > 0) return announced;
  const injected = (window as unknown as { ethereum?: Eip1193Provider }).ethereum;
  return injected && typeof injected.request === "function"
    ? [{ name: "your wallet", provider: injected }]
    : [];
}

/** EIP-1193's error codes, as the person should hear them. */
function walletRefusal(error: unknown, step: "connect" | "sign"): string {
  const code = (error as { code?: unknown } | null)?.code;
  if (code === 4001)
    return step === "connect"
      ? "You declined the connection in your wallet. Press Connect wallet to try again."
      : "You declined to sign in your wallet, so nothing was proved. Press Connect wallet to try again.";
  if (code === -32002)
    return "Your wallet is already asking you something: open it, answer, then try again.";
  if (code === 4100) return "Your wallet did not allow this site. Unlock it and try again.";
  const said = (error as { message?: unknown } | null)?.message;
  return `Your wallet could not ${step === "connect" ? "connect" : "sign"}${
    typeof said === "string" && said ? `: ${said}` : ""
  }. Try again, or open this link in your wallet's own browser.`;
}

/** The link's own path: the page is /…/verify/<token>, its calls go under it. */
const base = `${location.pathname.replace(/\/+$/, "")}/`;

async function post<T>(what: "challenge" | "proof", body: unknown): Promise<T | Refused> {
  let response: Response;
  try {
    response = await fetch(`${base}${what}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
      credentials: "omit",
    });
  } catch {
    return {
      refusal: { message: "The bot could not be reached. Check your connection and try again." },
    };
  }
  try {
    return (await response.json()) as T | Refused;
  } catch {
    return { refusal: { message: `The bot answered with an error (${response.status}).` } };
  }
}

/** personal_sign takes the message as hex of its UTF-8 bytes. */
function hex(text: string): string {
  let out = "0x";
  for (const byte of new TextEncoder().encode(text)) out += byte.toString(16).padStart(2, "0");
  return out;
}

async function prove(provider: Eip1193Provider): Promise<void> {
  choices.replaceChildren();
  connect.disabled = true;
  try {
    say("Asking your wallet for an account…");
    let address: string;
    try {
      const accounts = await provider.request({ method: "eth_requestAccounts" });
      const first = Array.isArray(accounts) ? accounts[0] : undefined;
      if (typeof first !== "string" || !/^0x[0-9a-fA-F]{40}$/.test(first)) {
        say("Your wallet gave no account. Unlock it, then try again.", "refused");
        return;
      }
      address = first;
    } catch (error) {
      say(walletRefusal(error, "connect"), "refused");
      return;
    }
    const challenge = await post<{ message: string }>("challenge", { address });
    if (!("message" in challenge) || typeof challenge.message !== "string") {
      say(refusalText(challenge as Refused), "refused");
      return;
    }
    say("Sign the message in your wallet. It costs nothing and sends no transaction.");
    let signature: unknown;
    try {
      signature = await provider.request({
        method: "personal_sign",
        params: [hex(challenge.message), address],
      });
    } catch (error) {
      say(walletRefusal(error, "sign"), "refused");
      return;
    }
    if (typeof signature !== "string") {
      say("Your wallet gave no signature. Try again.", "refused");
      return;
    }
    say("Checking the signature…");
    const proof = await post<{ address: string; chain: string }>("proof", {
      message: challenge.message,
      signature,
    });
    if (!("address" in proof) || typeof proof.address !== "string") {
      say(refusalText(proof as Refused), "refused");
      return;
    }
    $("verified").hidden = false;
    $("address").textContent = proof.address;
    connect.hidden = true;
    say("You can close this page: the bot tells the chat where you asked.", "verified");
  } finally {
    connect.disabled = false;
  }
}

function refusalText(answer: Refused): string {
  return answer.refusal?.message ?? "The bot refused this without saying why. Try again.";
}

connect.addEventListener("click", () => {
  const all = found();
  if (all.length === 0) {
    say(
      "No wallet found in this browser. Open this link in your wallet app's own browser (in MetaMask, Coinbase Wallet or Rainbow: the browser tab), or install a wallet extension and reload this page.",
      "refused",
    );
    return;
  }
  const only = all.length === 1 ? all[0] : undefined;
  if (only) {
    void prove(only.provider);
    return;
  }
  say("Several wallets are installed: choose the one holding the address to prove.");
  choices.replaceChildren(
    ...all.map((wallet) => {
      const button = document.createElement("button");
      button.type = "button";
      button.textContent = wallet.name;
      button.addEventListener("click", () => void prove(wallet.provider));
      return button;
    }),
  );
});
