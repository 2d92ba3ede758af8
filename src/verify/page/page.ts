/**
 * The verification page's script (issue 27), bundled by scripts/build.mjs for the browser: no
 * framework, nothing from elsewhere (the page's Content-Security-Policy allows only its own
 * origin). It finds the wallets (EIP-6963, else `window.ethereum`), asks one for an account, has
 * the server write a Sign-In with Ethereum message for it, asks the wallet to sign it
 * (personal_sign) and sends the signature back. Every step that can fail says why in plain words.
 * Without a wallet it offers what works instead: on a phone, links that open this page in a wallet
 * app's own browser; on a desktop, a QR code of this page to scan with the phone.
 */
import { qrDrawing } from "./qr.ts";
import { openInLinks } from "./wallet-apps.ts";

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

const $ = (id: string) => document.getElementById(id) as HTMLElement;
const connect = $("connect") as HTMLButtonElement;
const status = $("status");
const choices = $("wallets");
const noWallet = $("no-wallet");

window.addEventListener("eip6963:announceProvider", (event) => {
  const detail = (event as CustomEvent<Announced>).detail;
  if (detail?.info?.uuid && typeof detail.provider?.request === "function") {
    wallets.set(detail.info.uuid, detail);
    // A wallet that announces itself late (an extension just unlocked): Connect wallet works now.
    noWallet.hidden = true;
  }
});
window.dispatchEvent(new Event("eip6963:requestProvider"));

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

/**
 * A phone (or a tablet), where wallets are apps: its primary pointer is coarse, a finger. That is
 * what the media query tells, whatever the browser calls itself (an iPad's Safari says it is a
 * Mac), while a laptop with a touch screen keeps a fine primary pointer (its touchpad) and gets
 * the QR code, which it can use. The user agent's "Android"/"iPhone"/"Mobile" also counts, for
 * the rare in-app browser that answers the media query wrong.
 */
function onPhone(): boolean {
  const coarse = typeof matchMedia === "function" && matchMedia("(pointer: coarse)").matches;
  return coarse || /Android|iPhone|iPad|iPod|Mobile/i.test(navigator.userAgent);
}

/**
 * No wallet in this browser: on a phone, links that open this page in a wallet app's browser; on
 * a desktop, this page's link as a QR code for the phone, and the advice to install an extension.
 */
function offerWithoutWallet(): void {
  const phone = onPhone();
  const openIn = $("open-in");
  const scan = $("scan");
  if (phone && openIn.hidden) {
    $("apps").replaceChildren(
      ...openInLinks(location.href).map((app) => {
        const link = document.createElement("a");
        link.id = `open-${app.id}`;
        link.className = "app";
        link.href = app.href;
        link.rel = "noreferrer";
        link.textContent = app.name;
        const item = document.createElement("li");
        item.append(link);
        return item;
      }),
    );
    openIn.hidden = false;
  }
  if (!phone && scan.hidden) {
    $("qr").replaceChildren(qrCode(location.href));
    scan.hidden = false;
  }
  noWallet.hidden = false;
}

/** The QR code of `text` as an SVG drawn here: dark modules on white, the quiet zone included. */
function qrCode(text: string): SVGSVGElement {
  const drawing = qrDrawing(text);
  const side = drawing.side;
  const svgNs = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(svgNs, "svg");
  svg.setAttribute("viewBox", `0 0 ${side} ${side}`);
  svg.setAttribute("shape-rendering", "crispEdges");
  svg.setAttribute("role", "img");
  svg.setAttribute("aria-label", "QR code of this page's link");
  const light = document.createElementNS(svgNs, "rect");
  light.setAttribute("width", String(side));
  light.setAttribute("height", String(side));
  light.setAttribute("fill", "#fff");
  const dark = document.createElementNS(svgNs, "path");
  dark.setAttribute("d", drawing.path);
  dark.setAttribute("fill", "#000");
  svg.append(light, dark);
  return svg;
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
    // Only what was proved stays: Verified, the address, the chain, and that the page can close.
    for (const id of ["intro", "connect", "wallets", "no-wallet", "expiry"]) $(id).hidden = true;
    $("address").textContent = proof.address;
    const provedOn = $("proved-on");
    const chainName =
      proof.chain === provedOn.dataset.chain ? provedOn.dataset.chainName : proof.chain;
    provedOn.textContent = `Proved on ${chainName ?? proof.chain}.`;
    provedOn.hidden = false;
    const verified = $("verified");
    verified.hidden = false;
    say("You can close this page: the bot tells the chat where you asked.", "verified");
    verified.querySelector("h2")?.focus();
  } finally {
    connect.disabled = false;
  }
}

function refusalText(answer: Refused): string {
  return answer.refusal?.message ?? "The bot refused this without saying why. Try again.";
}

/**
 * How long the page waits, once loaded, for wallets to announce themselves (EIP-6963) before it
 * says there is none: extensions answer within a few milliseconds, a wallet's browser injects
 * before the page runs.
 */
const ANNOUNCE_WAIT_MS = 400;

setTimeout(() => {
  if (found().length === 0 && $("verified").hidden) offerWithoutWallet();
}, ANNOUNCE_WAIT_MS);

connect.addEventListener("click", () => {
  const all = found();
  if (all.length === 0) {
    offerWithoutWallet();
    say(
      onPhone()
        ? "No wallet found in this browser. Open this link in your wallet app's own browser: tap your app below."
        : "No wallet found in this browser. Scan the code below with your phone to open this link there, or install a wallet extension and reload this page.",
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
