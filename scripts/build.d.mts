export function buildDist(root?: string): Promise<void>;
