import type { Rng } from "./random.ts";

/** Word lists for synthetic collection, token and ENS names. */

const ADJECTIVES = [
  "bored",
  "cosmic",
  "lazy",
  "pixel",
  "neon",
  "golden",
  "quiet",
  "wild",
  "tiny",
  "cyber",
  "lucky",
  "frozen",
  "electric",
  "ancient",
  "mutant",
  "silent",
  "hidden",
  "crypto",
  "rare",
  "based",
  "sunny",
  "misty",
  "rusty",
  "velvet",
] as const;

const NOUNS = [
  "apes",
  "otters",
  "lizards",
  "punks",
  "foxes",
  "koalas",
  "robots",
  "wizards",
  "cats",
  "ghosts",
  "toads",
  "owls",
  "whales",
  "dragons",
  "pandas",
  "moons",
  "gardens",
  "machines",
  "voxels",
  "squids",
  "bears",
  "llamas",
  "kites",
  "clouds",
] as const;

const SUFFIXES = ["", "", "", " Club", " Society", " Genesis", " Collective", " Editions"];

/**
 * Collection names that exercise escaping in chat renderers. The first one is the empty name,
 * the second the markup fixture; their positions are relied on by the generator.
 */
export const EMPTY_NAME = "";
export const MARKUP_NAME = "@everyone <b>x</b> **bold** [link](https://evil.example) 🚨";
export const TRICKY_NAMES: readonly string[] = [
  "🐸 Pepe Frens 🐸",
  "<script>alert('x')</script> Club",
  "__Under__ ~~Strike~~ `Code` ||Spoiler||",
  "Café Déjà Vu ☕",
  "@here Free Mint",
  "Ｆｕｌｌｗｉｄｔｈ Apes",
  "Zero\u200bWidth Punks",
  "مجموعة الفن الرقمي",
  "_italic_ *star* > quote # heading",
  "&amp; &lt;Entities&gt; & <i>tags</i>",
  "👨‍👩‍👧‍👦 Family Emoji 🏳️‍🌈",
  "Multi\nLine Collection",
  `The Extremely Long Collection Name ${"That Keeps Going ".repeat(10)}End`,
  "[Click](javascript:alert(1)) Gallery",
  "Backslash \\ and *asterisk* Society",
];

export const SPAM_NAMES: readonly string[] = [
  "🎁 Claim 5 ETH at evil.example",
  "$ETH Airdrop Voucher",
  "Visit reward-nft.example to claim",
  "USDC Bonus Pass 💰",
  "You won! @everyone claim now",
  "Free Mint Ticket (airdrop)",
  "Uniswap LP Reward Claim",
  "OpenSea Gift Card ✅",
];

export const FUNGIBLE_TOKENS: readonly { name: string; symbol: string; decimals: number }[] = [
  { name: "Wrapped Ether", symbol: "WETH", decimals: 18 },
  { name: "USD Coin", symbol: "USDC", decimals: 6 },
  { name: "Dai Stablecoin", symbol: "DAI", decimals: 18 },
  { name: "Tether USD", symbol: "USDT", decimals: 6 },
  { name: "ApeCoin", symbol: "APE", decimals: 18 },
  { name: "Blur", symbol: "BLUR", decimals: 18 },
  { name: "Chainlink Token", symbol: "LINK", decimals: 18 },
  { name: "Wrapped BTC", symbol: "WBTC", decimals: 8 },
  { name: "Pepe", symbol: "PEPE", decimals: 18 },
  { name: "Simulated Dollar 💵", symbol: "SIMD", decimals: 2 },
  { name: "Ωmega Ünïcode Token", symbol: "ΩUT", decimals: 18 },
  { name: "Uniswap", symbol: "UNI", decimals: 18 },
];

const DNS_TLDS = ["xyz", "com", "org", "io", "art"] as const;
const SUBDOMAIN_LABELS = ["pay", "vault", "nft", "wallet", "hot", "cold", "gallery"] as const;

function title(word: string): string {
  return word.charAt(0).toUpperCase() + word.slice(1);
}

export function collectionName(rng: Rng): string {
  return `${title(rng.pick(ADJECTIVES))} ${title(rng.pick(NOUNS))}${rng.pick(SUFFIXES)}`;
}

/** Upper-case initials of the name's words, e.g. "Bored Apes Club" -> "BAC". */
export function symbolOf(name: string): string {
  const letters = name
    .split(/\s+/)
    .map((word) => word.replace(/[^A-Za-z]/g, "").charAt(0))
    .join("")
    .toUpperCase();
  return letters.slice(0, 5);
}

/** A label for an ENS name, unique within `taken` (the caller adds the TLD). */
export function ensLabel(rng: Rng, taken: ReadonlySet<string>, tld: string): string {
  for (;;) {
    const base = `${rng.pick(ADJECTIVES)}${rng.pick(NOUNS)}`;
    const label = rng.chance(0.5) ? `${base}${rng.int(1, 9999)}` : base;
    if (!taken.has(`${label}.${tld}`)) return label;
  }
}

export function dnsTld(rng: Rng): string {
  return rng.pick(DNS_TLDS);
}

export function subdomainLabel(rng: Rng): string {
  return rng.pick(SUBDOMAIN_LABELS);
}

export const TRAIT_TYPES = ["Background", "Eyes", "Mouth", "Hat", "Fur", "Clothes"] as const;
export const TRAIT_VALUES = [
  "Blue",
  "Gold",
  "Laser",
  "Sleepy",
  "Crown",
  "None",
  "Zombie",
  "Rainbow",
  "Noir",
  "Mint",
] as const;
