export function buildDist(root?: string): Promise<void>;
export const PAGE_DIR: string;
export function buildVerifyPage(root?: string, outdir?: string): Promise<void>;
export function buildVerifyPageAlone(root: string, outdir: string): Promise<void>;
