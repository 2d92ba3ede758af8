/** The alert subscription types a channel can choose, shared by /subscribe and /subscriptions. */
export const TYPE_CHOICES = [
  { value: "all", name: "All NFT collections" },
  { value: "erc721", name: "ERC-721 (with legacy and CryptoPunks)", aliases: ["721"] },
  { value: "erc1155", name: "ERC-1155", aliases: ["1155"] },
] as const;
