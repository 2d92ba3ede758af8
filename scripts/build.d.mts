export function buildDist(root?: string): Promise<void>;
export const PAGES: Record<
  "verify" | "dashboard",
  { script: string; style: string; target: string[] }
>;
export type PageName = keyof typeof PAGES;
export function pageDir(name: PageName): string;
export function buildPage(root: string, name: PageName, outdir?: string): Promise<void>;
export function buildPageAlone(root: string, name: PageName, outdir: string): Promise<void>;
