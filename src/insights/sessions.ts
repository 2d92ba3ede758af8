import { createHash, randomBytes } from "node:crypto";
import type { InsightStore } from "./store.ts";
import type { Community, DashboardSession } from "./types.ts";

/** /dashboard's link: once, within 10 minutes, as /verify's. */
export const LINK_TTL_MS = 10 * 60_000;
/** The page's session. */
export const SESSION_TTL_MS = 3_600_000;

/** Only a secret's SHA-256 is stored: a copy of the database opens no page. */
const hash = (secret: string) => createHash("sha256").update(secret).digest("hex");

/** The manager's page's one-time links and the sessions they open (issue 36). */
export class DashboardLinks {
  constructor(
    private readonly store: InsightStore,
    private readonly now: () => number,
    private readonly baseUrl: () => string,
  ) {}

  /** A one-time link to the page for this manager and community (10 minutes, once). */
  async create(community: Community, userId: string, chain: string) {
    const token = randomBytes(32).toString("base64url");
    const expiresAt = this.now() + LINK_TTL_MS;
    await this.store.putLink(hash(token), "link", { community, chain, userId, expiresAt });
    return { url: `${this.baseUrl()}/dashboard/${token}`, expiresAt };
  }

  /** Uses a link: a session (its secret id for the cookie), or undefined. */
  async open(token: string): Promise<{ id: string; session: DashboardSession } | undefined> {
    const at = this.now();
    const link = await this.store.useLink(hash(token), at);
    if (!link) return undefined;
    const id = randomBytes(32).toString("base64url");
    const session = { ...link, expiresAt: at + SESSION_TTL_MS };
    await this.store.putLink(hash(id), "session", session);
    return { id, session };
  }

  session(id: string): Promise<DashboardSession | undefined> {
    return this.store.findLink(hash(id), "session", this.now());
  }
}
