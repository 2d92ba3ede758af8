import { type PageAssets, pageAssetsLoader } from "../http/page-assets.ts";

export type { PageAssets };

/** The verification page's script and style (dist/verify, else built on the fly). */
export const pageAssets: () => Promise<PageAssets> = pageAssetsLoader("verify");
