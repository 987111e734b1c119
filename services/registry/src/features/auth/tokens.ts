// API token format and hashing. Tokens are 256 random bits, so a plain SHA-256 is the
// right at-rest hash (no salt/stretching needed: nothing to brute-force), and lookups go
// by hash, so no secret is ever compared in variable time.
import { createHash, randomBytes } from 'node:crypto';

export const TOKEN_PREFIX = 'rgt_';

export function generateToken(): string {
  return TOKEN_PREFIX + randomBytes(32).toString('base64url');
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** Constant-time comparison of two secrets of any length (shared: libs/password). */
export { secretsEqual } from '@selfstack/password';

/** `Authorization: Bearer <t>` (Terraform's credentials), then `X-Registry-Token: <t>`. */
export const TOKEN_HEADERS = ['authorization', 'x-registry-token'] as const;
