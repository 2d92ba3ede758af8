/**
 * Hostile strings for the fuzz suite: unicode (emoji, RTL and zero-width characters, lone
 * surrogates), the markup of all three targets, huge numbers, control characters, very long
 * strings, address-, ENS- and link-like text, mixed with valid fixtures so that commands get past
 * their first option and hostile text reaches the later ones and the replies.
 */
import fc from "fast-check";
import type { RenderableReply, RenderedButton } from "../src/core/reply.ts";
import type { Fixtures } from "../src/simulator/index.ts";

/**
 * Planted around some fragments to see how often input reaches a reply. Lowercase letters only:
 * they survive lowercasing (/help), ENS normalization and every escaper unchanged.
 */
export const MARK_OPEN = "qzxa";
export const MARK_CLOSE = "qzxb";

export const EMOJI = [
  "😀",
  "👍🏽",
  "👨‍👩‍👧‍👦",
  "🏳️‍🌈",
  "🇺🇦",
  "❤️",
  "🦊",
  "1️⃣",
  "🧑🏿‍💻",
  "©",
  "\u{1F9EA}",
];
export const BIDI = [
  "\u200e",
  "\u200f",
  "\u061c",
  "\u202a",
  "\u202b",
  "\u202c",
  "\u202d",
  "\u202e",
  "\u2066",
  "\u2067",
  "\u2068",
  "\u2069",
];
export const ZERO_WIDTH = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad", "\u180e"];
export const RTL_TEXT = ["שלום", "مرحبا", "\u202eevil\u202c", "עברית.eth", "عربي"];
export const DISCORD_MARKUP = [
  "**",
  "__",
  "*",
  "_",
  "~~",
  "||",
  "`",
  "``",
  "```",
  "```js\n",
  "> ",
  ">>> ",
  "# ",
  "## ",
  "-# ",
  "- ",
  "* ",
  "1. ",
  "\\",
  "\\*",
  "\\\\",
  "[x](https://evil.example)",
  "[x](<https://evil.example>)",
  "[](https://evil.example)",
  "[a](b)",
  "@everyone",
  "@here",
  "@EVERYONE",
  "<@123456789012345678>",
  "<@!123>",
  "<@&123>",
  "<#123>",
  "</cmd:123>",
  "<t:1700000000:R>",
  "<a:x:123>",
  "<:x:123>",
  "<id:customize>",
  "://",
  "https://evil.example",
  "<https://evil.example>",
  "discord.gg/abc",
];
export const HTML_MARKUP = [
  "<b>",
  "</b>",
  "<i>x</i>",
  '<a href="https://evil.example">x</a>',
  "<a href='javascript:alert(1)'>",
  "<pre>",
  "</pre>",
  "<code>",
  "<tg-spoiler>",
  '<span class="tg-spoiler">',
  "<script>alert(1)</script>",
  "<",
  ">",
  "/>",
  "&",
  "&amp;",
  "&lt;b&gt;",
  "&#65;",
  "&#x1F600;",
  "&bogus;",
  '"',
  "'",
  "<br>",
  "<blockquote>",
  '<tg-emoji emoji-id="1">',
];
export const NUMBERS = [
  "0",
  "-1",
  "+1",
  "1.5",
  "1e308",
  "1e999",
  "NaN",
  "Infinity",
  "-0",
  "0x10",
  "00000001",
  "9".repeat(78),
  "9".repeat(79),
  "1".repeat(200),
  "18446744073709551616",
  "9007199254740993",
  "1,000",
  "١٢٣",
  "２５",
  "1_000",
  "0.000000000000000000001",
];
const CONTROL = [
  ...Array.from({ length: 32 }, (_, i) => String.fromCharCode(i)),
  ...Array.from({ length: 33 }, (_, i) => String.fromCharCode(0x7f + i)),
  "\u2028",
  "\u2029",
];
const HEX = "0123456789abcdefABCDEF";

const pick = <T>(list: readonly T[]) => fc.constantFrom(...list);

const hex = (min: number, max: number) =>
  fc.string({ unit: pick([...HEX]), minLength: min, maxLength: max });

/** Addresses: valid (unknown to the simulator), one digit short or long, bad digits, odd case. */
const addressLike = fc.oneof(
  hex(40, 40).map((h) => `0x${h}`),
  hex(39, 39).map((h) => `0x${h}`),
  hex(41, 41).map((h) => `0x${h}`),
  hex(40, 40).map((h) => `0X${h}`),
  hex(38, 38).map((h) => `0x${h}zz`),
  hex(0, 8).map((h) => `0x${h}`),
  hex(40, 40).map((h) => `<0x${h}>`),
);

const label = fc.oneof(
  fc.string({ unit: "grapheme-ascii", minLength: 1, maxLength: 12 }),
  fc.string({ unit: "grapheme", minLength: 1, maxLength: 6 }),
  pick([...EMOJI, ...RTL_TEXT, "vitalik", "xn--80ak6aa92e", "a", "_x", "-x-", "ß", "İ"]),
);
const tld = pick([".eth", ".ETH", ".box", ".com", ".xyz", "", ".", ".eth.", "..eth"]);
const ensLike = fc
  .tuple(fc.array(label, { minLength: 1, maxLength: 3 }), tld)
  .map(([labels, end]) => `${labels.join(".")}${end}`);

const tokenIdLike = fc.oneof(
  fc.bigInt({ min: 0n, max: 10n ** 80n }).map(String),
  pick(NUMBERS),
  fc.nat().map(String),
);

const linkLike = fc.oneof(
  fc.webUrl({ withQueryParameters: true, withFragments: true }),
  fc
    .tuple(addressLike, tokenIdLike)
    .map(([a, id]) => `https://opensea.io/assets/ethereum/${a}/${id}`),
  fc.tuple(addressLike, tokenIdLike).map(([a, id]) => `https://etherscan.io/nft/${a}/${id}`),
  fc.tuple(addressLike, tokenIdLike).map(([a, id]) => `https://etherscan.io/token/${a}?a=${id}`),
  fc.tuple(addressLike, tokenIdLike).map(([a, id]) => `https://blur.io/asset/${a}/${id}`),
  addressLike.map((a) => `https://etherscan.io/address/${a}`),
  pick([
    "https://opensea.io/collection/boredapeyachtclub",
    "javascript:alert(1)",
    "data:text/html,<b>x</b>",
    "file:///etc/passwd",
    "https://evil.example/<b>x</b>",
    'https://evil.example/"onmouseover="x',
    "https://evil.example/a b",
    "https://evil.example/(x)",
    "https://evil.example/[x](y)",
    "https://evil.example/`x`",
    "http://[::1]/",
    "https://xn--80ak6aa92e.com/",
    "https://exa mple.com/",
    "<https://etherscan.io/address/0x>",
  ]),
);

const longString = fc
  .tuple(
    fc.integer({ min: 200, max: 6000 }),
    pick(["a", "*", "_", "<", "&", "😀", "\u200b", "@everyone ", " ", "\n", "x\n", "`", "\\", "é"]),
  )
  .map(([length, unit]) => unit.repeat(Math.ceil(length / unit.length)));

const loneSurrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c));

const OPTION_NAMES = [
  "limit",
  "collection",
  "collection2",
  "wallet",
  "wallets",
  "note",
  "trend",
  "min_volume",
  "min_avg_price",
  "min_collections",
  "max_days_since_purchase",
  "min_owned",
  "token_id",
  "kind",
  "item",
  "query",
  "command",
  "spam",
  "type",
  "types",
  "condition",
  "duration",
  "metric",
  "LIMIT",
  "nope",
];
const CHOICE_WORDS = [
  "volume",
  "sales",
  "max_price",
  "1d",
  "7d",
  "30d",
  "365d",
  "all",
  "exclude",
  "only",
  "erc721",
  "erc1155",
  "spam",
  "not_spam",
  "any",
  "top",
  "help",
];

/** One hostile or valid piece of an argument line. */
export function fragmentArb(fixtures: Fixtures): fc.Arbitrary<string> {
  const valid = pick([
    fixtures.collection,
    fixtures.erc1155Collection,
    fixtures.markupCollection,
    fixtures.emptyNameCollection,
    fixtures.wallet,
    fixtures.walletEns,
    fixtures.emojiEnsName,
    fixtures.dnsName,
    fixtures.token.contract,
    fixtures.token.tokenId,
    fixtures.hugeTokenId.tokenId,
    `https://opensea.io/assets/ethereum/${fixtures.token.contract}/${fixtures.token.tokenId}`,
  ]);
  const basic: fc.Arbitrary<string> = fc.oneof(
    { arbitrary: fc.string({ unit: "binary", maxLength: 24 }), weight: 3 },
    { arbitrary: fc.string({ unit: "grapheme", maxLength: 16 }), weight: 3 },
    { arbitrary: fc.string({ maxLength: 16 }), weight: 2 },
    { arbitrary: pick(EMOJI), weight: 2 },
    { arbitrary: pick(BIDI), weight: 2 },
    { arbitrary: pick(ZERO_WIDTH), weight: 2 },
    { arbitrary: pick(RTL_TEXT), weight: 1 },
    { arbitrary: pick(DISCORD_MARKUP), weight: 6 },
    { arbitrary: pick(HTML_MARKUP), weight: 5 },
    { arbitrary: pick(NUMBERS), weight: 2 },
    { arbitrary: fc.bigInt({ min: -(10n ** 100n), max: 10n ** 100n }).map(String), weight: 2 },
    { arbitrary: pick(CONTROL), weight: 3 },
    { arbitrary: loneSurrogate, weight: 1 },
    { arbitrary: longString, weight: 1 },
    { arbitrary: addressLike, weight: 3 },
    { arbitrary: ensLike, weight: 3 },
    { arbitrary: linkLike, weight: 3 },
    { arbitrary: valid, weight: 5 },
    { arbitrary: pick(CHOICE_WORDS), weight: 3 },
  );
  const composite: fc.Arbitrary<string> = fc.oneof(
    { arbitrary: basic, weight: 10 },
    // name:value and name=value options, the value hostile.
    {
      arbitrary: fc
        .tuple(pick(OPTION_NAMES), pick([":", "="]), basic)
        .map(([name, sep, value]) => `${name}${sep}${value}`),
      weight: 3,
    },
    // Quoted groups, balanced or not.
    { arbitrary: basic.map((value) => `"${value}"`), weight: 1 },
    { arbitrary: basic.map((value) => `"${value}`), weight: 1 },
    // Hostile text glued to an ENS-ish or address-ish shape, so it is quoted back in errors.
    { arbitrary: fc.tuple(basic, tld).map(([value, end]) => `${value}${end}`), weight: 2 },
    { arbitrary: basic.map((value) => `0x${value}`), weight: 1 },
  );
  return fc.oneof(
    { arbitrary: composite, weight: 4 },
    { arbitrary: composite.map((value) => `${MARK_OPEN}${value}${MARK_CLOSE}`), weight: 1 },
  );
}

const SEPARATORS = [" ", " ", " ", "  ", "\n", "\t", ",", ", ", "", "\u00a0", "\u3000"];

/** A whole argument line: up to six pieces with separators between them. */
export function argStringArb(fixtures: Fixtures): fc.Arbitrary<string> {
  const piece = fc.tuple(pick(SEPARATORS), fragmentArb(fixtures));
  return fc
    .array(piece, { minLength: 0, maxLength: 6 })
    .map((pieces) => pieces.map(([sep, text], i) => (i === 0 ? text : sep + text)).join(""));
}

/** Valid leading arguments per command, so hostile text reaches the later options. */
function headsFor(command: string, f: Fixtures): string[] {
  const token = `${f.token.contract} ${f.token.tokenId}`;
  const heads: Record<string, string[]> = {
    whois: [f.walletEns],
    audience: [f.collection, f.markupCollection],
    owners: [f.collection, f.markupCollection],
    common: [f.collection, f.markupCollection],
    stats: [f.collection, f.markupCollection],
    profile: [f.collection, f.emptyNameCollection],
    segment: [f.collection, `${f.collection} ${f.markupCollection}`],
    nft: [token, f.token.contract],
    behaviors: [f.wallet, f.walletEns],
    walletstats: [f.wallet, f.walletEns],
    wallet: [f.wallet, f.walletEns],
    report: [`spam ${token} ${f.wallet}`, `not_spam ${f.collection} ${f.wallet}`, `spam ${token}`],
    top: ["volume 1d", "sales"],
    contracts: ["erc721", "all"],
    subscribe: ["erc721"],
    digest: ["add daily 09:00", "add weekly mon 09:00 Europe/Berlin top", "remove"],
    alerts: ["keywords include", "keywords exclude", "minters include", "quiet", "digest", "test"],
    watch: [
      `collection ${f.collection}`,
      `collection ${f.collection} owners 5 whales`,
      `wallet ${f.wallet}`,
      "list",
      "remove",
    ],
    gate: [
      `test ${f.wallet} holds 1`,
      `test ${f.wallet} behavior collector,`,
      `test ${f.walletEns} volume`,
      "add holds 1",
      "add not behavior",
      "remove",
      "log",
      "list",
    ],
    help: ["top"],
    settings: ["chain ethereum", "chain"],
  };
  return heads[command] ?? [];
}

/** An argument line for one command: hostile throughout, or after a valid start. */
export function commandArgsArb(command: string, fixtures: Fixtures): fc.Arbitrary<string> {
  const args = argStringArb(fixtures);
  const heads = headsFor(command, fixtures);
  if (heads.length === 0) return args;
  return fc.oneof(
    { arbitrary: args, weight: 3 },
    {
      arbitrary: fc
        .tuple(pick(heads), pick(SEPARATORS), args)
        .map(([head, sep, rest]) => `${head}${sep || " "}${rest}`),
      weight: 2,
    },
  );
}

/** Valid values by option name, for the Discord path (options arrive one by one). */
export function optionValueArb(option: string, fixtures: Fixtures): fc.Arbitrary<string> {
  const f = fixtures;
  const valid: Record<string, string[]> = {
    collection: [f.collection, f.markupCollection, f.emptyNameCollection],
    collection2: [f.erc1155Collection],
    item: [f.token.contract, `https://etherscan.io/nft/${f.token.contract}/${f.token.tokenId}`],
    token_id: [f.token.tokenId, f.hugeTokenId.tokenId],
    wallet: [f.wallet, f.walletEns],
    wallets: [`${f.wallet} ${f.walletEns}`],
    query: [f.walletEns, f.multiNameWallet],
    kind: ["spam", "not_spam"],
    metric: ["volume", "max_price"],
    duration: ["7d"],
    trend: ["30d"],
    limit: ["3"],
    type: ["erc1155"],
    types: ["erc721"],
    spam: ["exclude", "only"],
    condition: ["any"],
    command: ["nft", "segment"],
    chain: ["ethereum", "base"],
    setting: ["chain"],
    // /alerts' actions and /digest's.
    action: [
      "show",
      "test",
      "keywords",
      "quiet",
      "add",
      "list",
      "remove",
      "collection",
      "wallet",
      "log",
    ],
    role: ["123456789012345678", "<@&123456789012345678>", "@Holders"],
    value: ["ethereum", "default"],
    spec: [
      "daily 09:00 top volume 1d",
      "weekly sun 23:59 Asia/Tokyo",
      `${f.wallet} holds 1 ${f.collection}`,
      "holds 1 azuki, not behavior flipper",
      "1",
    ],
    target: [f.collection, `${f.collection} owners 5`, f.wallet, "1"],
  };
  const args = argStringArb(fixtures);
  const values = valid[option];
  if (!values) return args;
  return fc.oneof({ arbitrary: args, weight: 2 }, { arbitrary: pick(values), weight: 1 });
}

// ---------------------------------------------------------------------------------------------
// Replies for fuzzing the renderers directly.

/** Hostile text for a reply field; short most of the time, sometimes very long. */
function hostileTextArb(): fc.Arbitrary<string> {
  const piece = fc.oneof(
    { arbitrary: fc.string({ unit: "binary", maxLength: 20 }), weight: 3 },
    { arbitrary: fc.string({ unit: "grapheme", maxLength: 12 }), weight: 2 },
    { arbitrary: pick(DISCORD_MARKUP), weight: 6 },
    { arbitrary: pick(HTML_MARKUP), weight: 5 },
    { arbitrary: pick(EMOJI), weight: 2 },
    { arbitrary: pick(BIDI), weight: 1 },
    { arbitrary: pick(ZERO_WIDTH), weight: 1 },
    { arbitrary: pick(CONTROL), weight: 2 },
    { arbitrary: pick(NUMBERS), weight: 1 },
    { arbitrary: loneSurrogate, weight: 1 },
    { arbitrary: pick(["\n", "\n\n", " ", "\t", "\r\n"]), weight: 3 },
    { arbitrary: linkLike, weight: 1 },
  );
  return fc.oneof(
    { arbitrary: fc.array(piece, { maxLength: 8 }).map((parts) => parts.join("")), weight: 12 },
    { arbitrary: longString, weight: 1 },
    {
      arbitrary: fc
        .tuple(fc.array(piece, { maxLength: 4 }), fc.integer({ min: 1, max: 60 }))
        .map(([parts, times]) => parts.join("").repeat(times)),
      weight: 2,
    },
  );
}

const urlArb = fc.oneof(linkLike, hostileTextArb());

/** Button ids as the runtime makes them: 22 characters of base64url, unique within a reply. */
const buttonIdArb = fc.string({
  unit: pick([..."ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"]),
  minLength: 22,
  maxLength: 22,
});

const PNG_1X1 = Uint8Array.from(
  Buffer.from(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
    "base64",
  ),
);

/** Any reply a command could return, every string in it hostile. */
export function replyArb(): fc.Arbitrary<RenderableReply> {
  const text = hostileTextArb();
  const buttons: fc.Arbitrary<RenderedButton[]> = fc
    .uniqueArray(buttonIdArb, { maxLength: 30 })
    .chain((ids) =>
      fc.tuple(
        ...ids.map((id) =>
          fc.record(
            {
              label: text,
              id: fc.constant(id),
              style: pick(["primary", "secondary", "success", "danger"] as const),
            },
            { requiredKeys: ["label", "id"] },
          ),
        ),
      ),
    );
  return fc.record(
    {
      title: text,
      url: urlArb,
      text,
      fields: fc.array(
        fc.record(
          { name: text, value: text, inline: fc.boolean() },
          { requiredKeys: ["name", "value"] },
        ),
        { maxLength: 30 },
      ),
      table: fc.integer({ min: 0, max: 7 }).chain((width) =>
        fc.record(
          {
            columns: fc.array(text, { minLength: width, maxLength: width }),
            rows: fc.array(fc.array(text, { maxLength: width + 1 }), { maxLength: 60 }),
            align: fc.array(pick(["left", "right"] as const), { maxLength: width }),
          },
          { requiredKeys: ["columns", "rows"] },
        ),
      ),
      links: fc.array(fc.record({ label: text, url: urlArb }), { maxLength: 40 }),
      image: fc.oneof(
        fc.record({ kind: fc.constant("url" as const), url: urlArb, alt: text }),
        fc.record({
          kind: fc.constant("png" as const),
          data: fc.constant(PNG_1X1),
          name: text,
          alt: text,
        }),
      ),
      files: fc.array(
        fc.record({
          name: text,
          contentType: fc.constant("text/csv"),
          data: fc.uint8Array({ minLength: 1, maxLength: 16 }),
        }),
        { maxLength: 12 },
      ),
      footer: text,
      buttons,
      private: fc.boolean(),
      replaceOriginal: fc.boolean(),
      tone: pick(["info", "success", "warning", "error"] as const),
    },
    { requiredKeys: [] },
  );
}
