// Fault: Redis stopped and restarted under real service processes (issue 29 item 4;
// docs/operations.md "Failure behaviour"). The scheduler, boxes, registry and secrets (dev
// mode) run as real
// processes on a Redis of this suite's own. While Redis is down, writes still succeed
// (PostgreSQL is the truth), a blocked reader returns by its wait at the latest with the
// current index, rate limits are counted in memory; once Redis is back, wake-ups, the
// event stream and shared rate-limit counters work again without restarting anything.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createTestDatabase, waitFor, type TestDatabase } from '@selfstack/testing';
import { call, jsonBody, startPrivateRedis, startService, stopAll, type PrivateRedis, type ServiceProcess } from './fault-harness';
import { openStream, type StreamClient } from '../../services/scheduler/test/event-stream-client';

jest.setTimeout(180_000);

const ADMIN_TOKEN = 'faults-registry-admin-token-0123';
const BOXES_TOKEN = 'faults-boxes-admin-token-0123456789abcdef';
const SECRETS_ROOT = 'faults-secrets-root';
const job = (id: string) => ({ Job: { ID: id, Name: id, TaskGroups: [{ Name: 'g', Tasks: [{ Name: 't', Driver: 'docker' }] }] } });

describe('Redis stopped and restarted under running services', () => {
  let db: TestDatabase;
  let redis: PrivateRedis;
  let scheduler: ServiceProcess;
  let boxes: ServiceProcess;
  let registry: ServiceProcess;
  let secrets: ServiceProcess;
  let stateDir: string;
  let stream: StreamClient | undefined;

  beforeAll(async () => {
    db = await createTestDatabase();
    redis = await startPrivateRedis();
    const common = { DATABASE_URL: db.url, REDIS_URL: redis.url };
    stateDir = await mkdtemp(path.join(tmpdir(), 'faults-secrets-'));
    [scheduler, boxes, registry, secrets] = await Promise.all([
      startService('scheduler', { ...common, SCHEDULER_EVENT_HEARTBEAT: '500ms' }),
      startService('boxes', {
        ...common,
        BOXES_BOOTSTRAP_ADMIN_USERNAME: 'opsadmin',
        BOXES_BOOTSTRAP_ADMIN_PASSWORD: 'faults-admin-password',
        BOXES_BOOTSTRAP_ADMIN_TOKEN: BOXES_TOKEN,
      }),
      startService('registry', { ...common, REGISTRY_ADMIN_TOKEN: ADMIN_TOKEN }),
      startService('secrets', { ...common, SECRETS_DEV_MODE: '1', SECRETS_DEV_ROOT_TOKEN: SECRETS_ROOT, SECRETS_DEV_STATE_FILE: path.join(stateDir, 'state.json') }),
    ]);
    for (const s of [scheduler, boxes, registry, secrets]) await s.ready();
  });

  afterAll(async () => {
    stream?.close();
    await stopAll([scheduler, boxes, registry, secrets]);
    await redis?.stop();
    await db?.drop();
    if (stateDir) await rm(stateDir, { recursive: true, force: true });
  });

  /** Registers a job; returns the jobs list's index after it. */
  const putJob = async (id: string) => {
    const res = await call(`${scheduler.url}/v1/jobs`, { method: 'PUT', ...jsonBody(job(id)) });
    expect(res.status).toBe(200);
    return jobsIndex();
  };
  const jobsIndex = async () => Number((await call(`${scheduler.url}/v1/jobs`)).headers.get('x-scheduler-index'));
  const ids = (a: { json: unknown }) => (a.json as { ID: string }[]).map((j) => j.ID);
  /**
   * Blocking reads of the jobs list from `index` until it holds job `id` (the engine's own
   * writes to the job also release a reader). Each read may block `wait` but is aborted
   * after `abortMs`: with wake-ups working every read returns at the next write.
   */
  const blockUntil = async (index: number, id: string, wait: string, abortMs: number) => {
    for (let i = 0; i < 20; i++) {
      const r = await call(`${scheduler.url}/v1/jobs?index=${index}&wait=${wait}`, { timeoutMs: abortMs });
      expect(r.status).toBe(200);
      if (ids(r).includes(id)) return r;
      index = Number(r.headers.get('x-scheduler-index'));
    }
    throw new Error(`job ${id} never appeared`);
  };
  const boxesAuth = { Authorization: `Bearer ${BOXES_TOKEN}` };
  const registryAuth = { Authorization: `Bearer ${ADMIN_TOKEN}` };
  const vault = { 'X-Vault-Token': SECRETS_ROOT };
  const kvPut = async (key: string, data: Record<string, unknown>) => {
    const res = await call(`${secrets.url}/v1/secret/data/${key}`, { method: 'POST', ...jsonBody({ data }, vault) });
    expect(res.status).toBe(200);
  };
  const kvGet = async (key: string) => {
    const res = await call(`${secrets.url}/v1/secret/data/${key}`, { headers: vault });
    expect(res.status).toBe(200);
    return (res.json as { data: { data: unknown } }).data.data;
  };
  const jobKeys = () => (stream ? stream.events().filter((e) => e.Topic === 'Job').map((e) => e.Key) : []);

  it('keeps writing, returns blocked readers by their wait, and recovers without a restart', async () => {
    // Before: a blocked read is released by a write through the Redis wake-up.
    const first = await putJob('before');
    stream = await openStream(scheduler.url, '/v1/event/stream?topic=Job');
    expect(stream.status).toBe(200);
    const woken = blockUntil(first, 'wakes-the-reader', '120s', 60_000);
    const second = await putJob('wakes-the-reader');
    expect(Number((await woken).headers.get('x-scheduler-index'))).toBeGreaterThanOrEqual(second - 1);
    expect((await call(`${registry.url}/v1/modules`)).status).toBe(200);
    expect(await redis.cli('--scan', '--pattern', 'registry:rl:*')).not.toBe('');
    await kvPut('cached', { v: 1 });
    expect(await kvGet('cached')).toEqual({ v: 1 });

    // A reader blocked when Redis dies.
    const settled = await jobsIndex();
    const blockedAcross = call(`${scheduler.url}/v1/jobs?index=${settled}&wait=3s`, { timeoutMs: 30_000 });
    await redis.stop();

    // Writes succeed on every service while Redis is down.
    const during = await putJob('while-redis-is-down');
    const box = await call(`${boxes.url}/api/v1/boxes`, { method: 'POST', ...jsonBody({ box: { username: 'opsadmin', name: 'during-outage' } }, boxesAuth) });
    expect(box.status).toBe(201);
    expect(box.json).toMatchObject({ tag: 'opsadmin/during-outage' });
    const ns = await call(`${registry.url}/v1/admin/namespaces`, { method: 'POST', ...jsonBody({ name: 'outage' }, registryAuth) });
    expect(ns.status).toBe(201);
    expect((await call(`${registry.url}/v1/modules/outage`)).status).toBe(200);
    // Secrets: a write over a cached entry and a new one, both read back at once.
    await kvPut('cached', { v: 2 });
    await kvPut('outage', { written: 'while Redis was down' });
    expect(await kvGet('cached')).toEqual({ v: 2 });
    expect(await kvGet('outage')).toEqual({ written: 'while Redis was down' });

    // The reader blocked across the stop returns by its wait, with the index of the write
    // made meanwhile (Redis's wake-up was lost; the re-read at the deadline is not).
    const across = await blockedAcross;
    expect(across.status).toBe(200);
    expect(Number(across.headers.get('x-scheduler-index'))).toBeGreaterThanOrEqual(during);
    expect(ids(across)).toContain('while-redis-is-down');

    // A read blocking while Redis is down also returns by its wait.
    const now = await jobsIndex();
    const whileDown = await call(`${scheduler.url}/v1/jobs?index=${now}&wait=1s`, { timeoutMs: 30_000 });
    expect(whileDown.status).toBe(200);
    expect(Number(whileDown.headers.get('x-scheduler-index'))).toBeGreaterThanOrEqual(now);

    // Redis comes back: nothing is restarted.
    await redis.start();
    // The stream delivers the write made during the outage (replayed from PostgreSQL) ...
    await stream.waitFor('the job written while Redis was down', () => (jobKeys().includes('while-redis-is-down') ? true : undefined), 60_000);
    // ... and wake-ups work again: a long blocked read is released by a write, not its
    // wait (the subscriber reconnected).
    const latest = await jobsIndex();
    const wokenAgain = blockUntil(latest, 'after-redis-is-back', '120s', 60_000);
    await putJob('after-redis-is-back');
    expect(ids(await wokenAgain)).toContain('after-redis-is-back');
    await stream.waitFor('the job written after', () => (jobKeys().includes('after-redis-is-back') ? true : undefined), 30_000);
    expect(jobKeys()).toEqual(['before', 'wakes-the-reader', 'while-redis-is-down', 'after-redis-is-back']);

    // Rate limits are counted in Redis again (the new Redis is empty: new keys appear) once
    // each service's own Redis client has reconnected (its backoff, not the scheduler's:
    // until then a request is counted in memory), every request answered meanwhile.
    expect(await redis.cli('--scan', '--pattern', 'registry:rl:*')).toBe('');
    const countedInRedis = (prefix: string, request: () => Promise<{ status: number }>) =>
      waitFor(`${prefix} rate limits counted in Redis again`, async () => {
        expect((await request()).status).toBe(200);
        return (await redis.cli('--scan', '--pattern', `${prefix}:rl:*`)) !== '' ? true : undefined;
      }, 30_000, 200);
    await countedInRedis('registry', () => call(`${registry.url}/v1/modules`));
    await countedInRedis('boxes', () => call(`${boxes.url}/api/v1/box/opsadmin/during-outage`, { headers: boxesAuth }));

    await kvPut('cached', { v: 3 });
    expect(await kvGet('cached')).toEqual({ v: 3 });
    expect(await kvGet('outage')).toEqual({ written: 'while Redis was down' });

    // No 5xx was logged by any service.
    for (const s of [scheduler, boxes, registry, secrets]) expect(s.output()).not.toMatch(/"status":5\d\d/);
  });
});
