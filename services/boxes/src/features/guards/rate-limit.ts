// The box-hosting service's rate-limit buckets and default thresholds (spec "Errors": 429
// "rate-limited; decrease frequency"; thresholds "not shown", so ours). The limiter, the
// 429 answer and the maintenance gate are the kit's (libs/http-kit guards.ts), shared
// with the registry.
import type { RateLimiter, RateLimitRules } from '@selfstack/http-kit';

export type RateLimitBucket = 'api' | 'login' | 'two-factor' | 'upload';

export type BoxesRateLimitRules = RateLimitRules<RateLimitBucket>;
export type BoxesRateLimiter = RateLimiter<RateLimitBucket>;

export const DEFAULT_RATE_LIMITS: BoxesRateLimitRules = {
  /** Every request, per client (token or address). */
  api: { limit: 1200, windowMs: 60_000 },
  /** Login attempts, per login name and per address. */
  login: { limit: 10, windowMs: 60_000 },
  /** Two-factor code requests, per account. */
  'two-factor': { limit: 3, windowMs: 10 * 60_000 },
  /** Upload URL requests, per client. */
  upload: { limit: 120, windowMs: 60_000 },
};
