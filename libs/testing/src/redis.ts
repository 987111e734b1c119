// Per-file Redis isolation (docs/architecture.md, "Tests"): every test file namespaces its
// keys and bus channels with its own prefix, and deletes its keys afterwards.
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { testRedisUrl } from './env';

/** A prefix unique to this call, e.g. `t:12345:9f2c1a7b:`. */
export function testRedisPrefix(): string {
  return `t:${process.pid}:${randomBytes(4).toString('hex')}:`;
}

// SCAN MATCH takes a glob: a prefix containing * ? [ ] or \ must match literally.
function globEscape(text: string): string {
  return text.replace(/[*?[\]\\]/g, (c) => `\\${c}`);
}

/**
 * Deletes every key starting with `prefix`; returns how many were deleted. Uses the given
 * client, or opens (and closes) one to `url` / REDIS_URL / the local default.
 */
export async function deleteRedisKeys(prefix: string, options: { redis?: Redis; url?: string } = {}): Promise<number> {
  if (prefix.length === 0) throw new Error('deleteRedisKeys: refusing an empty prefix (it would delete every key).');
  const redis = options.redis ?? new Redis(options.url ?? testRedisUrl(), { lazyConnect: true, maxRetriesPerRequest: 1 });
  const owned = options.redis === undefined;
  try {
    if (owned) await redis.connect();
    let cursor = '0';
    let deleted = 0;
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${globEscape(prefix)}*`, 'COUNT', 500);
      cursor = next;
      if (keys.length > 0) deleted += await redis.unlink(...keys);
    } while (cursor !== '0');
    return deleted;
  } finally {
    if (owned) redis.disconnect();
  }
}
