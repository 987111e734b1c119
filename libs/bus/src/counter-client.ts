// The Redis client a service keeps its rate-limit counters on (boxes, registry): counters
// with expiry, not bus messages, so a connection of their own. Absent without a URL (the
// limiter then counts in memory); closed at shutdown.
import { Redis } from 'ioredis';
import type { BusLogger } from './bus';

export function createCounterClient(
  url: string | undefined,
  logger: BusLogger,
  onShutdown: (name: string, close: () => Promise<unknown>) => void,
): Redis | undefined {
  if (!url) {
    logger.warn('REDIS_URL is unset: rate limits are counted in memory (one process only)');
    return undefined;
  }
  const redis = new Redis(url, { maxRetriesPerRequest: 2, enableOfflineQueue: true });
  redis.on('error', (err: Error) => logger.warn('redis error', { error: err.message }));
  onShutdown('redis', () => redis.quit());
  return redis;
}
