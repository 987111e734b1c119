// Rate limits (spec "Errors": 429 "rate-limited; decrease frequency"). Fixed windows per
// (bucket, key), counted in Redis so every replica shares them (shared ARCHITECTURE:
// "rate limits backed by Redis"); an in-memory counter stands in when REDIS_URL is unset
// (single process, `make dev`).
import { TooManyRequestsError } from '@selfstack/errors';
import type { Redis } from 'ioredis';

export interface RateLimitRule {
  /** Requests allowed per window. */
  limit: number;
  windowMs: number;
}

export type RateLimitBucket = 'api' | 'login' | 'two-factor' | 'upload';

export type RateLimitRules = Record<RateLimitBucket, RateLimitRule>;

export const DEFAULT_RATE_LIMITS: RateLimitRules = {
  /** Every request, per client (token or address). */
  api: { limit: 1200, windowMs: 60_000 },
  /** Login attempts, per login name and per address. */
  login: { limit: 10, windowMs: 60_000 },
  /** Two-factor code requests, per account. */
  'two-factor': { limit: 3, windowMs: 10 * 60_000 },
  /** Upload URL requests, per client. */
  upload: { limit: 120, windowMs: 60_000 },
};

export interface RateLimitResult {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Milliseconds until the window resets. */
  resetMs: number;
}

export interface RateLimiter {
  hit(bucket: RateLimitBucket, key: string): Promise<RateLimitResult>;
}

// INCR and set the expiry on the first hit, atomically; returns [count, pttl].
const HIT_SCRIPT = `
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]); ttl = tonumber(ARGV[1]) end
return {n, ttl}
`;

export function createRedisRateLimiter(options: { redis: Redis; prefix: string; rules: RateLimitRules }): RateLimiter {
  return {
    async hit(bucket, key) {
      const rule = options.rules[bucket];
      const redisKey = `${options.prefix}rl:${bucket}:${key}`;
      const [count, ttl] = (await options.redis.eval(HIT_SCRIPT, 1, redisKey, String(rule.windowMs))) as [number, number];
      return { allowed: count <= rule.limit, limit: rule.limit, remaining: Math.max(0, rule.limit - count), resetMs: Math.max(0, ttl) };
    },
  };
}

export function createMemoryRateLimiter(options: { rules: RateLimitRules; now?: () => number }): RateLimiter {
  const now = options.now ?? Date.now;
  const windows = new Map<string, { count: number; resetAt: number }>();
  let lastSweep = now();
  return {
    async hit(bucket, key) {
      const rule = options.rules[bucket];
      const t = now();
      if (t - lastSweep > 60_000) {
        for (const [k, w] of windows) if (w.resetAt <= t) windows.delete(k);
        lastSweep = t;
      }
      const id = `${bucket}:${key}`;
      let w = windows.get(id);
      if (!w || w.resetAt <= t) {
        w = { count: 0, resetAt: t + rule.windowMs };
        windows.set(id, w);
      }
      w.count++;
      return { allowed: w.count <= rule.limit, limit: rule.limit, remaining: Math.max(0, rule.limit - w.count), resetMs: w.resetAt - t };
    },
  };
}

/** Counts a hit and throws 429 (with Retry-After) when the bucket is exhausted. */
export async function enforceRateLimit(limiter: RateLimiter, bucket: RateLimitBucket, key: string): Promise<RateLimitResult> {
  const r = await limiter.hit(bucket, key);
  if (!r.allowed) {
    throw new TooManyRequestsError('Rate limit exceeded; decrease the frequency of requests', {
      headers: {
        'Retry-After': String(Math.max(1, Math.ceil(r.resetMs / 1000))),
        'X-RateLimit-Limit': String(r.limit),
        'X-RateLimit-Remaining': '0',
      },
    });
  }
  return r;
}
