// The per-install salt (32 random bytes created at init, stored behind the barrier at
// `core/salt`). Token ids and KV key names are looked up by HMAC-SHA256 under it, so the
// database never holds a usable token and version rows do not reveal key names.
import { createHmac } from 'node:crypto';
import { sealedError } from '../../core/errors';
import type { Barrier } from './barrier.service';

export const SALT_PATH = 'core/salt';

export interface Salt {
  hash(value: string): string;
  load(): Promise<void>;
  clear(): void;
}

export function hmacHex(salt: Buffer, value: string): string {
  return createHmac('sha256', salt).update(value, 'utf8').digest('hex');
}

/** Memoised HMACs per unsealed salt (issue 3, item 9: every KV read hashed the token id
 * and the key name, two HMAC-SHA256 computations per request). Bounded: when full the
 * memo starts over, so memory stays flat whatever names clients send. */
const MEMO_LIMIT = 4096;

export function createSalt(deps: { barrier: Barrier }): Salt {
  let salt: Buffer | null = null;
  const memo = new Map<string, string>();
  return {
    hash(value) {
      if (!salt) throw sealedError();
      const hit = memo.get(value);
      if (hit !== undefined) return hit;
      const out = hmacHex(salt, value);
      if (memo.size >= MEMO_LIMIT) memo.clear();
      memo.set(value, out);
      return out;
    },
    async load() {
      const stored = await deps.barrier.get(SALT_PATH);
      if (!stored) throw new Error('core/salt missing from storage');
      memo.clear();
      salt = stored;
    },
    clear() {
      memo.clear();
      salt?.fill(0);
      salt = null;
    },
  };
}
