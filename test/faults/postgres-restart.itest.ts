// Fault: PostgreSQL restarted (not only connections dropped) under write load (issue 29
// item 4; docs/operations.md "Failure behaviour"). A cluster of this suite's own (initdb
// into a temp dir; the shared one is never touched), migrated with the project's runner;
// the scheduler, boxes and registry run as real processes on it. While it restarts,
// requests get either their normal answer or a 503 with Retry-After in the API's own
// error shape (never a 500, a dropped connection or a hang), acknowledged writes are all
// there afterwards, and every service recovers by itself.
import { Client } from 'pg';
import { call, jsonBody, migrateDatabase, startPrivateCluster, startService, stopAll, type Answer, type PrivateCluster, type ServiceProcess } from './fault-harness';

jest.setTimeout(240_000);

const REGISTRY_TOKEN = 'faults-registry-admin-token-0123';
const BOXES_TOKEN = 'faults-boxes-admin-token-0123456789abcdef';

interface Outcome {
  service: string;
  key: string;
  answer?: Answer;
  error?: string;
}

describe('PostgreSQL restarted under write load', () => {
  let cluster: PrivateCluster;
  let scheduler: ServiceProcess;
  let boxes: ServiceProcess;
  let registry: ServiceProcess;

  beforeAll(async () => {
    cluster = await startPrivateCluster();
    const admin = new Client({ connectionString: cluster.url('postgres') });
    await admin.connect();
    await admin.query('CREATE DATABASE faults');
    await admin.end();
    const url = cluster.url('faults');
    await migrateDatabase(url);
    [scheduler, boxes, registry] = await Promise.all([
      startService('scheduler', { DATABASE_URL: url }),
      startService('boxes', {
        DATABASE_URL: url,
        BOXES_BOOTSTRAP_ADMIN_USERNAME: 'opsadmin',
        BOXES_BOOTSTRAP_ADMIN_PASSWORD: 'faults-admin-password',
        BOXES_BOOTSTRAP_ADMIN_TOKEN: BOXES_TOKEN,
      }),
      startService('registry', { DATABASE_URL: url, REGISTRY_ADMIN_TOKEN: REGISTRY_TOKEN }),
    ]);
    for (const s of [scheduler, boxes, registry]) await s.ready();
  });

  afterAll(async () => {
    await stopAll([scheduler, boxes, registry]);
    await cluster?.destroy();
  });

  const writers: Record<string, (key: string) => Promise<Answer>> = {
    scheduler: (key) => call(`${scheduler.url}/v1/jobs`, { method: 'PUT', ...jsonBody({ Job: { ID: key, TaskGroups: [{ Name: 'g', Tasks: [{ Name: 't', Driver: 'docker' }] }] } }), timeoutMs: 60_000 }),
    boxes: (key) => call(`${boxes.url}/api/v1/boxes`, { method: 'POST', ...jsonBody({ box: { username: 'opsadmin', name: key } }, { Authorization: `Bearer ${BOXES_TOKEN}` }), timeoutMs: 60_000 }),
    registry: (key) => call(`${registry.url}/v1/admin/namespaces`, { method: 'POST', ...jsonBody({ name: key }, { Authorization: `Bearer ${REGISTRY_TOKEN}` }), timeoutMs: 60_000 }),
  };
  const ok: Record<string, number> = { scheduler: 200, boxes: 201, registry: 201 };
  /**
   * A database that cannot be reached: 503 with Retry-After, in the API's own error shape
   * (ARCHITECTURE "Errors, one shape per API"), saying so and naming the request id.
   */
  const UNAVAILABLE = /^a storage backend cannot be reached; retry later \(request id [0-9a-f-]{36}\)$/;
  const cleanFailure = (service: string, a: Answer): boolean => {
    if (a.status !== 503 || a.headers.get('retry-after') !== '1') return false;
    const type = a.headers.get('content-type') ?? '';
    if (service === 'scheduler') return type.startsWith('text/plain') && UNAVAILABLE.test(a.text);
    const body = a.json as { errors?: unknown; success?: unknown } | undefined;
    if (!type.startsWith('application/json') || !Array.isArray(body?.errors) || body.errors.length !== 1 || !UNAVAILABLE.test(String(body.errors[0]))) return false;
    return service === 'boxes' ? body.success === false : true;
  };

  it('answers every request cleanly across the restart and recovers without a service restart', async () => {
    const outcomes: Outcome[] = [];
    let phase: 'before' | 'during' | 'after' = 'before';
    let seq = 0;
    const loop = async (service: string) => {
      while (phase !== 'after' || outcomes.filter((o) => o.service === service && o.key.startsWith('after-') && o.answer?.status === ok[service]).length < 5) {
        const key = `${phase}-${service}-${seq++}`;
        try {
          outcomes.push({ service, key, answer: await writers[service]!(key) });
        } catch (err) {
          outcomes.push({ service, key, error: (err as Error).message });
        }
        if (phase === 'after' && outcomes.filter((o) => o.service === service && o.key.startsWith('after-')).length > 600) break;
        if (phase !== 'before') await new Promise((r) => setTimeout(r, 20));
      }
    };
    // Three writers per service, so several requests are in flight when it goes down.
    const loops = Object.keys(writers).flatMap((s) => [loop(s), loop(s), loop(s)]);
    while (outcomes.filter((o) => o.answer && o.answer.status < 300).length < 15) await new Promise((r) => setTimeout(r, 20));
    phase = 'during';
    await cluster.restart();
    phase = 'after';
    await Promise.all(loops);

    const tally: Record<string, number> = {};
    for (const o of outcomes) tally[`${o.key.split('-')[0]} ${o.service} ${o.answer?.status ?? o.error}`] = (tally[`${o.key.split('-')[0]} ${o.service} ${o.answer?.status ?? o.error}`] ?? 0) + 1;
    console.log(`postgres restart: ${JSON.stringify(tally)}`);
    // Requests were in flight while it restarted.
    expect(outcomes.some((o) => o.key.startsWith('during-'))).toBe(true);
    // Every request got an HTTP answer (no reset connection, no hang) ...
    expect(outcomes.filter((o) => o.error !== undefined)).toEqual([]);
    // ... either the normal one or a 503 in the API's shape, with Retry-After.
    const unclean = outcomes.filter((o) => o.answer!.status !== ok[o.service] && !cleanFailure(o.service, o.answer!));
    expect(unclean.map((o) => `${o.service} ${o.key}: ${o.answer!.status} ${o.answer!.text.slice(0, 200)}`)).toEqual([]);
    // Every service came back by itself: writes succeed after the restart.
    for (const service of Object.keys(writers)) {
      const after = outcomes.filter((o) => o.service === service && o.key.startsWith('after-'));
      expect(after.filter((o) => o.answer!.status === ok[service]).length).toBeGreaterThanOrEqual(5);
    }

    // Every acknowledged write is there.
    const acked = (service: string) => outcomes.filter((o) => o.service === service && o.answer!.status === ok[service]).map((o) => o.key);
    const jobs = ((await call(`${scheduler.url}/v1/jobs`)).json as { ID: string }[]).map((j) => j.ID);
    for (const k of acked('scheduler')) expect(jobs).toContain(k);
    const namespaces = ((await call(`${registry.url}/v1/admin/namespaces`, { headers: { Authorization: `Bearer ${REGISTRY_TOKEN}` } })).json as { namespaces: { name: string }[] }).namespaces.map((n) => n.name);
    for (const k of acked('registry')) expect(namespaces).toContain(k);
    for (const k of acked('boxes').slice(-5)) expect((await call(`${boxes.url}/api/v1/box/opsadmin/${k}`, { headers: { Authorization: `Bearer ${BOXES_TOKEN}` } })).status).toBe(200);
    // Health again everywhere.
    for (const s of [scheduler, boxes, registry]) expect((await call(`${s.url}/readyz`)).status).toBe(200);
  });
});
