import ipaddr from "ipaddr.js";

/**
 * The one gate for image links that come from the data service (NFT metadata is whatever its
 * creator wrote). Discord and Telegram fetch an image link themselves, so a link into a private
 * network (a cloud metadata endpoint, a router, localhost) must never reach them: only public
 * http(s) links leave the bot, and ipfs:// links rewritten through the configured gateway.
 *
 * Host names are not resolved (the platform resolves them, not us): IP literals are judged by
 * their range, and names that only mean something inside a network are refused.
 */
export function publicImageUrl(uri: string | undefined, ipfsGateway: string): string | undefined {
  if (!uri) return undefined;
  const ipfs = /^ipfs:\/\/(?:ipfs\/)?(.+)$/i.exec(uri.trim());
  if (ipfs?.[1]) {
    const url = parseUrl(ipfsGateway + ipfs[1]);
    // The path may not lead the link off the operator's gateway.
    return url && url.origin === new URL(ipfsGateway).origin ? url.href : undefined;
  }
  const url = parseUrl(uri.trim());
  if (!url || (url.protocol !== "https:" && url.protocol !== "http:")) return undefined;
  return isPublicHost(url.hostname) ? url.href : undefined;
}

function parseUrl(text: string): URL | undefined {
  try {
    return new URL(text);
  } catch {
    return undefined;
  }
}

/** Names that resolve only inside a network (RFC 6761, RFC 6762, and in common use). */
const LOCAL_NAME = /(?:^|\.)(?:localhost|local|internal|intranet|lan|home\.arpa)$/;

/**
 * WHATWG URL parsing has already turned every IPv4 spelling (decimal, hex, octal, short forms)
 * into dotted quads and lower-cased names, so what is left to judge is the canonical host.
 */
function isPublicHost(hostname: string): boolean {
  const host = hostname.replace(/^\[(.*)\]$/, "$1").replace(/\.$/, "");
  // Only a literal goes to ipaddr: it judges a name by throwing inside, on every image shown.
  const literal = host.includes(":") || /^\d{1,3}(?:\.\d{1,3}){3}$/.test(host);
  if (literal && ipaddr.isValid(host)) {
    // process() turns IPv4-mapped IPv6 (::ffff:a.b.c.d) into the IPv4 it stands for.
    return ipaddr.process(host).range() === "unicast";
  }
  // A single label (http://metadata/) is a name on the local network.
  return host.includes(".") && !LOCAL_NAME.test(host);
}
