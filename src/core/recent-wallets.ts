import { LRUCache } from "lru-cache";
import { type Address, toChecksumAddress } from "../api/validate.ts";
import { matchesShortForm, type ShortForm } from "./known-collections.ts";

/**
 * The wallets the bot showed in each chat lately (holders, segments, samples, lookups), so the
 * short form it printed (`0x1234…abcd`) can be given back. Bounded per chat and in chats.
 */
export class RecentWallets {
  private readonly chats: LRUCache<string, Map<string, Address>>;

  constructor(
    private readonly perChat = 200,
    maxChats = 1_000,
  ) {
    this.chats = new LRUCache({ max: maxChats });
  }

  remember(chat: string, addresses: Iterable<string>): void {
    const shown = this.chats.get(chat) ?? new Map<string, Address>();
    for (const address of addresses) {
      if (!/^0x[0-9a-fA-F]{40}$/.test(address)) continue;
      const key = address.toLowerCase();
      shown.delete(key);
      shown.set(key, toChecksumAddress(address));
      if (shown.size > this.perChat) shown.delete(shown.keys().next().value ?? "");
    }
    this.chats.set(chat, shown);
  }

  /** The wallets shown in the chat whose address has this short form. */
  matching(chat: string, form: ShortForm): Address[] {
    return [...(this.chats.get(chat)?.values() ?? [])].filter((address) =>
      matchesShortForm(address, form),
    );
  }
}
