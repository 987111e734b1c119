import { TooManyRequestsError, ServiceUnavailableError } from '@selfstack/errors';
import { createMaintenanceGate, parseMaintenance } from './maintenance';
import { createMemoryRateLimiter, DEFAULT_RATE_LIMITS, enforceRateLimit } from './rate-limit';

describe('memory rate limiter', () => {
  it('allows `limit` hits per window, then 429 with Retry-After, then resets', async () => {
    let t = 1_000_000;
    const limiter = createMemoryRateLimiter({ rules: { ...DEFAULT_RATE_LIMITS, login: { limit: 2, windowMs: 10_000 } }, now: () => t });
    await enforceRateLimit(limiter, 'login', 'alice');
    await enforceRateLimit(limiter, 'login', 'alice');
    await enforceRateLimit(limiter, 'login', 'bob');
    t += 2500;
    const err = await enforceRateLimit(limiter, 'login', 'alice').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TooManyRequestsError);
    expect((err as TooManyRequestsError).headers).toEqual({ 'Retry-After': '8', 'X-RateLimit-Limit': '2', 'X-RateLimit-Remaining': '0' });
    t += 7500;
    await expect(enforceRateLimit(limiter, 'login', 'alice')).resolves.toMatchObject({ allowed: true, remaining: 1 });
  });
});

describe('maintenance gate', () => {
  it('parses the stored flag', () => {
    expect(parseMaintenance(null)).toEqual({ enabled: false, message: '' });
    expect(parseMaintenance('{"message":"upgrading"}')).toEqual({ enabled: true, message: 'upgrading' });
    expect(parseMaintenance('garbage')).toEqual({ enabled: true, message: '' });
  });

  it('caches reads for cacheMs and throws 503 while enabled', async () => {
    let t = 0;
    let value: string | null = null;
    let reads = 0;
    const gate = createMaintenanceGate({ read: async () => { reads++; return value; }, cacheMs: 1000, now: () => t });
    await gate.check();
    value = '{"message":"back soon"}';
    await gate.check();
    expect(reads).toBe(1);
    t = 1000;
    const err = await gate.check().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ServiceUnavailableError);
    expect((err as ServiceUnavailableError).messages).toEqual(['back soon']);
    expect(reads).toBe(2);
  });
});
