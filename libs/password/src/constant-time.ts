// Constant-time comparison of secrets (ARCHITECTURE "comparisons are constant-time"):
// tokens, node secrets, unseal key shares and hashes of them are never compared with
// `===` or Buffer.equals, whose running time tells an attacker how long a prefix matched.
import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * True when `a` and `b` hold the same bytes, in time that depends only on their lengths
 * (both are hashed to 32 bytes first, so unequal lengths leak nothing either).
 */
export function secretsEqual(a: string | Uint8Array, b: string | Uint8Array): boolean {
  const ha = createHash('sha256').update(a).digest();
  const hb = createHash('sha256').update(b).digest();
  // The digests compare in constant time; equal digests of different inputs would need a
  // SHA-256 collision, and the length check keeps the answer exact anyway.
  return timingSafeEqual(ha, hb) && byteLength(a) === byteLength(b);
}

function byteLength(v: string | Uint8Array): number {
  return typeof v === 'string' ? Buffer.byteLength(v, 'utf8') : v.byteLength;
}
