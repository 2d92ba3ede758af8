/**
 * "Open in" links for a phone without a wallet in its browser (issue 27): each opens a page's full
 * URL (its token included) in the in-app browser of a wallet app, where the wallet is injected and
 * can sign. Each is the app's own universal link (an https link the app claims; a phone without
 * the app gets the app's web page, which offers to install it), in the form the app documents;
 * the source of each is beside it. Pure: the page's script and the tests both use it.
 */

export interface WalletApp {
  /** For ids and tests: `open-<id>`. */
  id: "metamask" | "coinbase" | "trust" | "rainbow" | "phantom";
  name: string;
  /** The link that opens `pageUrl` (absolute, http or https) in the app's own browser. */
  link(pageUrl: string): string;
}

export const WALLET_APPS: readonly WalletApp[] = [
  {
    id: "metamask",
    name: "MetaMask",
    // https://docs.metamask.io/sdk/guides/use-deeplinks ("Open a dapp inside the in-app browser"):
    // `https://link.metamask.io/dapp/{dappUrl}`, the URL without its scheme and not encoded
    // (example `https://link.metamask.io/dapp/app.uniswap.org`). The app opens it over https
    // (MetaMask/metamask-mobile's deep-link handler, handleDappUrl: "Enforce https").
    link: (pageUrl) => `https://link.metamask.io/dapp/${pageUrl.replace(/^https?:\/\//i, "")}`,
  },
  {
    id: "coinbase",
    name: "Coinbase Wallet",
    // https://docs.cdp.coinbase.com/coinbase-wallet/developer-guidance/mobile-dapp-integration
    // ("Dapp browser"): `https://go.cb-w.com/dapp?cb_url=[YOUR_URL]`, the URL percent-encoded.
    link: (pageUrl) => `https://go.cb-w.com/dapp?cb_url=${encodeURIComponent(pageUrl)}`,
  },
  {
    id: "trust",
    name: "Trust Wallet",
    // https://developer.trustwallet.com/developer/develop-for-trust/deeplinking ("DApp Browser"):
    // `https://link.trustwallet.com/open_url?coin_id=60&url=<url>`, coin_id the network's SLIP-44
    // index (60: Ethereum and the EVM chains); the URL encoded, as it is a query parameter
    // (Trust Wallet's own trustwallet/tw-agent-skills "trust-developer" gives it encoded).
    link: (pageUrl) =>
      `https://link.trustwallet.com/open_url?coin_id=60&url=${encodeURIComponent(pageUrl)}`,
  },
  {
    id: "rainbow",
    name: "Rainbow",
    // Rainbow documents no form (rainbow-me/rainbow issue 4600); its app's source does:
    // https://github.com/rainbow-me/rainbow/blob/develop/src/handlers/deeplinks.ts, action `dapp`
    // (the first path segment of an https link) opens the `url` query parameter in its dapp
    // browser, on the domains the app claims (ios/Rainbow/RainbowRelease.entitlements:
    // applinks:rnbwapp.com, the domain of its WalletConnect links `https://rnbwapp.com/wc?uri=`).
    link: (pageUrl) => `https://rnbwapp.com/dapp?url=${encodeURIComponent(pageUrl)}`,
  },
  {
    id: "phantom",
    name: "Phantom",
    // https://docs.phantom.com/phantom-deeplinks/other-methods/browse:
    // `https://phantom.app/ul/browse/<url>?ref=<ref>`, both URL-encoded, `ref` the requesting
    // app's URL (here the page's origin). Phantom's browser injects an EVM wallet too.
    link: (pageUrl) =>
      `https://phantom.app/ul/browse/${encodeURIComponent(pageUrl)}?ref=${encodeURIComponent(
        new URL(pageUrl).origin,
      )}`,
  },
];

/** The five links for a page, in the order the page lists them. */
export function openInLinks(pageUrl: string): { id: string; name: string; href: string }[] {
  return WALLET_APPS.map((app) => ({ id: app.id, name: app.name, href: app.link(pageUrl) }));
}
