// Shamir's secret sharing over GF(256) for the root key (issue 3, item 2). The maths is
// the audited `shamir-secret-sharing` package (Cure53 + Zellic audits; same field and
// tables as Vault's shamir package). It refuses 1-of-1 splits, which Vault allows: with
// one share the share *is* the key, exactly as Vault's seal does.
import { combine, split } from 'shamir-secret-sharing';

export async function splitKey(key: Uint8Array, shares: number, threshold: number): Promise<Buffer[]> {
  if (shares === 1 && threshold === 1) return [Buffer.from(key)];
  // Plain Uint8Array copies: the library checks `instanceof Uint8Array`, which a Buffer
  // from another realm (jest's sandbox) fails.
  const parts = await split(Uint8Array.from(key), shares, threshold);
  return parts.map((p) => Buffer.from(p));
}

/** Reconstructs the key; with fewer than `threshold` shares the result is garbage, never the key. */
export async function combineShares(parts: readonly Uint8Array[]): Promise<Buffer> {
  if (parts.length === 1) return Buffer.from(parts[0] as Uint8Array);
  return Buffer.from(await combine(parts.map((p) => Uint8Array.from(p))));
}
