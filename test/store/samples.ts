import type {
  NewContract,
  SubscriptionStore,
  SubscriptionTypes,
} from "../../src/alerts/store/types.ts";
import type { NewReport } from "../../src/store/types.ts";

export const subscribe = (
  subscriptions: SubscriptionStore,
  chatId: string,
  types: SubscriptionTypes = "all",
  platform = "telegram",
  chain = "ethereum",
) => subscriptions.upsert({ platform, chatId, chain, types, createdBy: "telegram:u1", now: 1_000 });

/** An ERC-721 contract numbered n (ERC-1155 when asked). */
export const aContract = (n: number, type = "TYPE_ERC721"): NewContract => ({
  address: `0x${n.toString(16).padStart(40, "0")}`,
  name: `Collection ${n}`,
  types: [type],
  minter: undefined,
  txHash: undefined,
  mintedAt: undefined,
});

export const aReport = (overrides: Partial<NewReport> = {}): NewReport => ({
  platform: "telegram",
  chatId: "chat-1",
  userId: "u1",
  userName: "Tester",
  wallet: "0x1111111111111111111111111111111111111111",
  contract: "0x2222222222222222222222222222222222222222",
  tokenId: "7",
  kind: "spam",
  feedback: null,
  ...overrides,
});
