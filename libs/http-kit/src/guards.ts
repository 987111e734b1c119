// Request guards shared by the services whose specs name them (box-hosting and module
// registry, spec "Errors"): rate limits (429 with Retry-After), maintenance mode (503) and
// load shedding (503 with Retry-After). Each service chooses its buckets and thresholds
// ("Rate limit thresholds ... not shown") and mounts the guards with `guardMiddleware`.
//
// Rate limits are fixed windows per (bucket, key), counted in Redis so every replica
// shares them (ARCHITECTURE "rate limits backed by Redis"); an in-memory counter stands
// in when REDIS_URL is unset (one process, `make dev`) and, per process, while Redis does
// not answer: Redis only ever costs accuracy, never availability (docs/operations.md
// "Failure behaviour").
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { ServiceUnavailableError, TooManyRequestsError } from '@selfstack/errors';
import type { Logger } from '@selfstack/logger';

export interface RateLimitRule {
  /** Requests allowed per window. */
  limit: number;
  windowMs: number;
}

export type RateLimitRules<B extends string = string> = Record<B, RateLimitRule>;

export interface RateLimitResult {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Milliseconds until the window resets. */
  resetMs: number;
}

export interface RateLimiter<B extends string = string> {
  hit(bucket: B, key: string): Promise<RateLimitResult>;
}

/** The part of an ioredis client the limiter uses. */
export interface RateLimitRedis {
  eval(script: string, numKeys: number, ...args: string[]): Promise<unknown>;
}

// INCR and set the expiry on the first hit, atomically; returns [count, pttl].
const HIT_SCRIPT = `
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]); ttl = tonumber(ARGV[1]) end
return {n, ttl}
`;

export function createMemoryRateLimiter<B extends string>(options: { rules: RateLimitRules<B>; now?: () => number }): RateLimiter<B> {
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

export interface RedisRateLimiterOptions<B extends string> {
  redis: RateLimitRedis;
  /** Key prefix, for example `registry:`; keys are `<prefix>rl:<bucket>:<key>`. */
  prefix: string;
  rules: RateLimitRules<B>;
  /**
   * How long a hit waits for Redis before it is counted in memory instead (default 250 ms):
   * a stopped Redis must not hold every request for the client's reconnect schedule.
   */
  timeoutMs?: number;
  logger?: Logger;
  now?: () => number;
}

export function createRedisRateLimiter<B extends string>(options: RedisRateLimiterOptions<B>): RateLimiter<B> {
  const fallback = createMemoryRateLimiter({ rules: options.rules, ...(options.now ? { now: options.now } : {}) });
  const timeoutMs = options.timeoutMs ?? 250;
  let degraded = false;
  return {
    async hit(bucket, key) {
      const rule = options.rules[bucket];
      const redisKey = `${options.prefix}rl:${bucket}:${key}`;
      let timer: NodeJS.Timeout | undefined;
      try {
        const reply = await Promise.race([
          options.redis.eval(HIT_SCRIPT, 1, redisKey, String(rule.windowMs)),
          new Promise<never>((_, reject) => {
            timer = setTimeout(() => reject(new Error(`no answer from Redis within ${timeoutMs} ms`)), timeoutMs);
          }),
        ]);
        const [count, ttl] = reply as [number, number];
        if (degraded) {
          degraded = false;
          options.logger?.info('rate limits counted in Redis again');
        }
        return { allowed: count <= rule.limit, limit: rule.limit, remaining: Math.max(0, rule.limit - count), resetMs: Math.max(0, ttl) };
      } catch (err) {
        if (!degraded) {
          degraded = true;
          options.logger?.warn('Redis unavailable: rate limits counted in this process until it answers', { error: (err as Error).message });
        }
        return fallback.hit(bucket, key);
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

/** Counts a hit and throws 429 (with Retry-After) when the bucket is exhausted. */
export async function enforceRateLimit<B extends string>(limiter: RateLimiter<B>, bucket: B, key: string): Promise<RateLimitResult> {
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

// Maintenance mode: a flag kept in the service's own settings table (PostgreSQL, so every
// replica sees it); each replica re-reads it at most every `cacheMs`, so a switch takes
// effect within that delay without a restart.

export const MAINTENANCE_KEY = 'maintenance';
export const MAINTENANCE_RETRY_AFTER_SECONDS = 60;

export interface MaintenanceState {
  enabled: boolean;
  message: string;
}

export interface MaintenanceGate {
  current(): Promise<MaintenanceState>;
  /** Throws 503 (Retry-After) while maintenance mode is on. */
  check(): Promise<void>;
}

/** The stored value: null when off, `{"message": "..."}` when on. */
export function parseMaintenance(value: string | null): MaintenanceState {
  if (value === null) return { enabled: false, message: '' };
  try {
    const parsed = JSON.parse(value) as { message?: unknown };
    return { enabled: true, message: typeof parsed.message === 'string' ? parsed.message : '' };
  } catch {
    return { enabled: true, message: '' };
  }
}

export function serializeMaintenance(enabled: boolean, message?: string): string | null {
  return enabled ? JSON.stringify({ message: message ?? '' }) : null;
}

export function createMaintenanceGate(options: { read: () => Promise<string | null>; cacheMs: number; now?: () => number }): MaintenanceGate {
  const now = options.now ?? Date.now;
  let cached: { state: MaintenanceState; at: number } | undefined;
  let inflight: Promise<MaintenanceState> | undefined;
  const current = async (): Promise<MaintenanceState> => {
    if (cached && now() - cached.at < options.cacheMs) return cached.state;
    inflight ??= options
      .read()
      .then((v) => {
        const state = parseMaintenance(v);
        cached = { state, at: now() };
        return state;
      })
      .finally(() => {
        inflight = undefined;
      });
    return inflight;
  };
  return {
    current,
    async check() {
      const state = await current();
      if (state.enabled) {
        throw new ServiceUnavailableError(state.message || 'The service is in maintenance mode; try again later', {
          headers: { 'Retry-After': String(MAINTENANCE_RETRY_AFTER_SECONDS) },
        });
      }
    },
  };
}

// Load shedding (registry spec: 503 "load shedding; may retry after a delay"): above
// `maxInFlight` requests being served by this process, new ones are refused at once
// instead of queueing behind the database pool until every client times out.

export interface LoadShedder {
  /** Requests being served now. */
  inFlight(): number;
  middleware: RequestHandler;
}

export function createLoadShedder(options: { maxInFlight: number; retryAfterSeconds?: number }): LoadShedder {
  let inFlight = 0;
  const retryAfter = String(options.retryAfterSeconds ?? 1);
  return {
    inFlight: () => inFlight,
    middleware(_req: Request, res: Response, next: NextFunction) {
      if (inFlight >= options.maxInFlight) {
        next(new ServiceUnavailableError('The service is overloaded; retry after a delay', { headers: { 'Retry-After': retryAfter } }));
        return;
      }
      inFlight++;
      let done = false;
      const release = () => {
        if (done) return;
        done = true;
        inFlight--;
      };
      res.once('finish', release);
      res.once('close', release);
      next();
    },
  };
}

export interface GuardOptions<B extends string> {
  /** Checked first: 503 while on. */
  maintenance?: MaintenanceGate;
  /** Requests that pass the maintenance gate anyway (the admin API that switches it off). */
  maintenanceExempt?: (req: Request) => boolean;
  shedder?: LoadShedder;
  /** Per-client limit on every request: bucket and key (default: the client address). */
  rateLimit?: { limiter: RateLimiter<B>; bucket: B; key?: (req: Request) => string };
}

/** Maintenance gate (503) -> load shedding (503) -> per-client rate limit (429), in that order. */
export function guardMiddleware<B extends string>(options: GuardOptions<B>): RequestHandler[] {
  const handlers: RequestHandler[] = [];
  const { maintenance, shedder, rateLimit } = options;
  if (maintenance) {
    const exempt = options.maintenanceExempt;
    handlers.push((req: Request, _res: Response, next: NextFunction) => {
      if (exempt?.(req)) {
        next();
        return;
      }
      maintenance.check().then(() => next(), next);
    });
  }
  if (shedder) handlers.push(shedder.middleware);
  if (rateLimit) {
    const key = rateLimit.key ?? ((req: Request) => req.ip ?? 'unknown');
    handlers.push((req: Request, _res: Response, next: NextFunction) => {
      enforceRateLimit(rateLimit.limiter, rateLimit.bucket, key(req)).then(() => next(), next);
    });
  }
  return handlers;
}
