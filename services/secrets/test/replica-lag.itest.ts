// Replicas learn of mount-table changes from the bus, which has latency (and can lose a
// message while Redis reconnects). A replica must not answer "no such mount" for a mount
// another replica has enabled: on a miss it re-reads the table from storage before it
// answers. Here the second replica has a bus of its own, so it hears nothing at all: every
// answer below comes from that re-read.
import type { Express } from 'express';
import request from 'supertest';
import { testRedisPrefix } from '@selfstack/testing';
import { initAndUnseal, startHarness, type Harness } from './harness';
import type { SecretsServices } from '../src/services';

let h: Harness;
let deaf: { services: SecretsServices; app: Express };
let root = '';
const as = () => ({ 'X-Vault-Token': root });

beforeAll(async () => {
  h = await startHarness();
  const init = await initAndUnseal(h.app);
  root = init.rootToken;
  deaf = await h.replica({ busPrefix: testRedisPrefix() });
  await request(deaf.app).put('/v1/sys/unseal').send({ key: init.keys[0] }).expect(200);
});
afterAll(async () => {
  jest.restoreAllMocks();
  await h.close();
});

describe('a replica that never heard of a new mount', () => {
  it('serves it at once: KV v1 write and read, and every sys route that names it', async () => {
    await request(h.app).post('/v1/sys/mounts/late1').set(as()).send({ type: 'kv', description: 'made elsewhere' }).expect(204);
    // The replica's table in memory does not have it (no bus message reaches it)...
    expect(deaf.services.mounts.match('late1/k')).toBeUndefined();
    // ...yet its first request succeeds.
    const put = await request(deaf.app).put('/v1/late1/k').set(as()).send({ v: 'one' });
    expect(put.status).toBe(204);
    expect(put.text).toBe('');
    const got = await request(h.app).get('/v1/late1/k').set(as()).expect(200);
    expect(got.body.data).toEqual({ v: 'one' });
    expect(got.headers['content-type']).toMatch(/^application\/json/);

    await request(h.app).post('/v1/sys/mounts/late2').set(as()).send({ type: 'kv', options: { version: '2' } }).expect(204);
    const read = await request(deaf.app).get('/v1/sys/mounts/late2').set(as()).expect(200);
    expect(read.body.data).toMatchObject({ type: 'kv', options: { version: '2' } });

    await request(h.app).post('/v1/sys/mounts/late3').set(as()).send({ type: 'kv', config: { max_lease_ttl: '2h' } }).expect(204);
    const tune = await request(deaf.app).get('/v1/sys/mounts/late3/tune').set(as()).expect(200);
    expect(tune.body.data).toMatchObject({ max_lease_ttl: 7200 });

    await request(h.app).post('/v1/sys/mounts/late4').set(as()).send({ type: 'kv', options: { version: '2' } }).expect(204);
    const ui = await request(deaf.app).get('/v1/sys/internal/ui/mounts/late4/data/x').set(as()).expect(200);
    expect(ui.body.data).toMatchObject({ path: 'late4/', type: 'kv', options: { version: '2' } });
    const v2 = await request(deaf.app).post('/v1/late4/data/x').set(as()).send({ data: { a: 1 } }).expect(200);
    expect(v2.body.data).toMatchObject({ version: 1 });

    await request(h.app).post('/v1/sys/mounts/late5').set(as()).send({ type: 'kv' }).expect(204);
    const list = await request(deaf.app).get('/v1/sys/mounts').set(as()).expect(200);
    expect(Object.keys(list.body.data)).toEqual(expect.arrayContaining(['late1/', 'late2/', 'late3/', 'late4/', 'late5/', 'secret/']));
  });

  it('a path under no mount is still a 404 with Vault\'s text, and concurrent misses share their re-reads', async () => {
    const load = jest.spyOn(deaf.services.mounts, 'load');
    const rs = await Promise.all(Array.from({ length: 20 }, (_, i) => request(deaf.app).get(`/v1/nowhere${i}/k`).set(as())));
    for (const [i, r] of rs.entries()) {
      expect(r.status).toBe(404);
      expect(r.body).toEqual({ errors: [`no handler for route "nowhere${i}/k". route entry not found.`] });
    }
    // One read in flight plus at most one queued behind it, never one per request.
    expect(load.mock.calls.length).toBeGreaterThanOrEqual(1);
    expect(load.mock.calls.length).toBeLessThanOrEqual(2);
    load.mockRestore();
  });

  it('a token the ACL denies gets 403 without a re-read', async () => {
    const created = await request(h.app).post('/v1/auth/token/create').set(as()).send({ policies: ['default'] }).expect(200);
    const token = created.body.auth.client_token as string;
    const load = jest.spyOn(deaf.services.mounts, 'load');
    const r = await request(deaf.app).get('/v1/nowhere/k').set('X-Vault-Token', token);
    expect(r.status).toBe(403);
    expect(r.body).toEqual({ errors: ['1 error occurred:\n\t* permission denied\n\n'] });
    expect(load).not.toHaveBeenCalled();
    load.mockRestore();
  });

  it('a disabled mount on the other replica: the miss re-read also forgets it', async () => {
    await request(h.app).post('/v1/sys/mounts/gone').set(as()).send({ type: 'kv' }).expect(204);
    await request(deaf.app).put('/v1/gone/k').set(as()).send({ v: 1 }).expect(204);
    await request(h.app).delete('/v1/sys/mounts/gone').set(as()).expect(204);
    // A listing re-reads the table: the deaf replica agrees with storage.
    const list = await request(deaf.app).get('/v1/sys/mounts').set(as()).expect(200);
    expect(Object.keys(list.body.data)).not.toContain('gone/');
    const r = await request(deaf.app).get('/v1/gone/k').set(as());
    expect(r.status).toBe(404);
    expect(r.body).toEqual({ errors: ['no handler for route "gone/k". route entry not found.'] });
  });
});
