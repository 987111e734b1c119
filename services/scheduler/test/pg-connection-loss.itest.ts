// Reliability: Postgres ends the app's idle pooled connections (a restart, an operator's
// pg_terminate_backend). The process must not crash on the pool's 'error' event, the next
// read must return what was written before on a fresh connection, the next write must
// commit, and a blocking query that was waiting meanwhile must still wake on that write
// (the state store re-reads Postgres after the bus wake-up).
import request from 'supertest';
import { openBackendTerminator, type BackendTerminator } from '@selfstack/testing';
import { minimalJob, registerJob, startHarness, type Harness } from './harness';

let h: Harness;
let terminator: BackendTerminator;
beforeAll(async () => {
  h = await startHarness();
  // Our own connection: the one backend of the test database left alone.
  terminator = await openBackendTerminator(h.db.url);
});
afterAll(async () => {
  await terminator.close();
  await h.close();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('scheduler Postgres connection loss', () => {
  it('survives its idle connections being terminated, keeps the data and still wakes blocked queries', async () => {
    const first = await registerJob(h.app, minimalJob('pgl-1'));
    // Concurrent reads so the pool holds several idle connections.
    const reads = await Promise.all(Array.from({ length: 4 }, () => request(h.app).get('/v1/job/pgl-1')));
    for (const r of reads) expect(r.status).toBe(200);
    const index = Number(reads[0]!.headers['x-scheduler-index']);
    expect(index).toBeGreaterThanOrEqual(Number(first['Index']));

    // A blocking query waiting across the termination.
    const blocked = request(h.app).get(`/v1/jobs?index=${index}&wait=20s`);
    const pending = blocked.then((r) => r);
    await sleep(200);
    expect(await terminator.terminateOthers()).toBeGreaterThan(0);

    const read = await request(h.app).get('/v1/job/pgl-1');
    expect(read.status).toBe(200);
    expect(read.body.ID).toBe('pgl-1');
    const write = await registerJob(h.app, minimalJob('pgl-2'));
    expect(Number(write['Index'])).toBeGreaterThan(index);

    const res = await pending;
    expect(res.status).toBe(200);
    expect(Number(res.headers['x-scheduler-index'])).toBe(Number(write['Index']));
    expect(res.body.map((j: { ID: string }) => j.ID).sort()).toEqual(['pgl-1', 'pgl-2']);
  });
});
