const DISCORD_EPOCH = 1_420_070_400_000n;
let increment = 0n;

/** A snowflake as Discord makes them: milliseconds since 2015 in the high bits, a counter below. */
export function snowflake(at = Date.now()): string {
  increment = (increment + 1n) & 0xfffn;
  return (((BigInt(at) - DISCORD_EPOCH) << 22n) | (1n << 17n) | increment).toString();
}

export function randomToken(bytes = 24): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(bytes))).toString("base64url");
}
