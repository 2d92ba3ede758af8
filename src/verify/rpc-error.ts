/**
 * A chain node's error as the log may say it: viem's short message (or the error's name), without
 * any URL, since an RPC URL often holds a provider's API key. No viem needed to read it.
 */
export function redactedRpcError(error: unknown): string {
  const text =
    error instanceof Error
      ? ((error as { shortMessage?: string }).shortMessage ?? error.name)
      : "error";
  return text.replace(/https?:\/\/\S+/g, "<rpc url>");
}
