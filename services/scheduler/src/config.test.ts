import { ConfigError } from '@selfstack/config';
import { IDLE_GC_MIN_HELD, idleGcOptions, loadSchedulerEnv, nodeSweepIntervalMs } from './config';

const REDIS = { REDIS_URL: 'redis://127.0.0.1:6379' };

describe('SCHEDULER_WORKERS', () => {
  it('defaults to one process and needs no Redis then', () => {
    expect(loadSchedulerEnv({}).SCHEDULER_WORKERS).toBe(1);
    expect(loadSchedulerEnv({ SCHEDULER_WORKERS: '' }).SCHEDULER_WORKERS).toBe(1);
    expect(loadSchedulerEnv({ SCHEDULER_WORKERS: '1' }).SCHEDULER_WORKERS).toBe(1);
  });

  it('takes a count or auto (any case) when Redis is configured', () => {
    expect(loadSchedulerEnv({ ...REDIS, SCHEDULER_WORKERS: '4' }).SCHEDULER_WORKERS).toBe(4);
    expect(loadSchedulerEnv({ ...REDIS, SCHEDULER_WORKERS: ' Auto ' }).SCHEDULER_WORKERS).toBe('auto');
  });

  it.each(['0', '65', '1.5', 'many', '-2'])('refuses %j', (value) => {
    expect(() => loadSchedulerEnv({ ...REDIS, SCHEDULER_WORKERS: value })).toThrow(ConfigError);
  });

  it('refuses more than one worker without REDIS_URL, naming the variable and why', () => {
    let caught: unknown;
    try {
      loadSchedulerEnv({ SCHEDULER_WORKERS: '2' });
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ConfigError);
    const problems = (caught as ConfigError).problems;
    expect(problems).toEqual([{ where: 'SCHEDULER_WORKERS', message: expect.stringContaining('needs REDIS_URL') }]);
  });
});

describe('SCHEDULER_IDLE_GC_MS', () => {
  it('defaults to 20 ms; 0 turns the idle collection off', () => {
    expect(loadSchedulerEnv({}).SCHEDULER_IDLE_GC_MS).toBe(20);
    expect(idleGcOptions(loadSchedulerEnv({}).SCHEDULER_IDLE_GC_MS)).toEqual({ idleMs: 20, minHeld: IDLE_GC_MIN_HELD });
    expect(idleGcOptions(loadSchedulerEnv({ SCHEDULER_IDLE_GC_MS: '0' }).SCHEDULER_IDLE_GC_MS)).toBeUndefined();
    expect(loadSchedulerEnv({ SCHEDULER_IDLE_GC_MS: ' ' }).SCHEDULER_IDLE_GC_MS).toBe(20);
  });

  it.each(['-1', '1.5', 'soon', '60001'])('refuses %j', (value) => {
    expect(() => loadSchedulerEnv({ SCHEDULER_IDLE_GC_MS: value })).toThrow(ConfigError);
  });
});

describe('node heartbeats', () => {
  it("defaults to the anchor's 10 s minimum TTL, 50 heartbeats a second, 10 s grace and a 5 min failover window", () => {
    const env = loadSchedulerEnv({});
    expect([env.SCHEDULER_HEARTBEAT_TTL_MIN, env.SCHEDULER_HEARTBEAT_MAX_PER_SECOND, env.SCHEDULER_HEARTBEAT_GRACE, env.SCHEDULER_HEARTBEAT_FAILOVER]).toEqual([10_000, 50, 10_000, 300_000]);
    expect(nodeSweepIntervalMs(env.SCHEDULER_HEARTBEAT_GRACE)).toBe(1_000);
    expect(nodeSweepIntervalMs(100)).toBe(100);
  });

  it('takes durations', () => {
    const env = loadSchedulerEnv({ SCHEDULER_HEARTBEAT_TTL_MIN: '2s', SCHEDULER_HEARTBEAT_GRACE: '500ms', SCHEDULER_HEARTBEAT_FAILOVER: '0s', SCHEDULER_HEARTBEAT_MAX_PER_SECOND: '5' });
    expect([env.SCHEDULER_HEARTBEAT_TTL_MIN, env.SCHEDULER_HEARTBEAT_GRACE, env.SCHEDULER_HEARTBEAT_FAILOVER, env.SCHEDULER_HEARTBEAT_MAX_PER_SECOND]).toEqual([2_000, 500, 0, 5]);
  });

  it.each([
    ['SCHEDULER_HEARTBEAT_TTL_MIN', '5ms'],
    ['SCHEDULER_HEARTBEAT_TTL_MIN', 'soon'],
    ['SCHEDULER_HEARTBEAT_GRACE', '-1s'],
    ['SCHEDULER_HEARTBEAT_MAX_PER_SECOND', '0'],
    ['SCHEDULER_HEARTBEAT_MAX_PER_SECOND', '1.5'],
  ])('refuses %s=%j', (key, value) => {
    expect(() => loadSchedulerEnv({ [key]: value })).toThrow(ConfigError);
  });
});

describe('SCHEDULER_EVENT_BATCH', () => {
  it('defaults to 25 ms; takes a duration up to 1 s, 0 = a read per wake-up', () => {
    expect(loadSchedulerEnv({}).SCHEDULER_EVENT_BATCH).toBe(25);
    expect(loadSchedulerEnv({ SCHEDULER_EVENT_BATCH: '0' }).SCHEDULER_EVENT_BATCH).toBe(0);
    expect(loadSchedulerEnv({ SCHEDULER_EVENT_BATCH: '50ms' }).SCHEDULER_EVENT_BATCH).toBe(50);
    expect(loadSchedulerEnv({ SCHEDULER_EVENT_BATCH: '1s' }).SCHEDULER_EVENT_BATCH).toBe(1000);
  });

  it.each(['2s', 'soon', '-5ms'])('refuses %j', (value) => {
    expect(() => loadSchedulerEnv({ SCHEDULER_EVENT_BATCH: value })).toThrow(ConfigError);
  });
});
