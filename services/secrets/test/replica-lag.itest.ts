// Replicas learn of mount-table and policy changes from the bus, which has latency (and can
// lose a message while Redis reconnects). A replica must not answer "no such mount" for a
// mount another replica has enabled (on a miss it re-reads the table from storage before it
// answers), must not write into a mount another one has disabled or upgraded, and must not
// remember a policy as missing. Here the second replica has a bus of its own, so it hears nothing at all: every
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
    // Far fewer re-reads than requests (how many overlap depends on arrival times)...
    expect(load.mock.calls.length).toBeGreaterThanOrEqual(1);
    expect(load.mock.calls.length).toBeLessThan(20);
    // ...and misses that overlap exactly share: one read, plus one queued behind it.
    load.mockClear();
    const misses = await Promise.all(Array.from({ length: 20 }, (_, i) => deaf.services.mounts.resolve(`elsewhere${i}/k`)));
    expect(misses).toEqual(Array.from({ length: 20 }, () => undefined));
    expect(load).toHaveBeenCalledTimes(2);
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

  it('a v1 write on a replica that missed the upgrade to v2 is served as v2, and nothing lands in the old layout', async () => {
    await request(h.app).post('/v1/sys/mounts/upg').set(as()).send({ type: 'kv' }).expect(204);
    await request(deaf.app).put('/v1/upg/a').set(as()).send({ v: 'before' }).expect(204);
    expect(deaf.services.mounts.get('upg')?.options.version).toBe('1');
    await request(h.app).post('/v1/sys/mounts/upg/tune').set(as()).send({ options: { version: '2' } }).expect(204);
    // The deaf replica still holds the v1 entry in memory...
    expect(deaf.services.mounts.get('upg')?.options.version).toBe('1');
    // ...its write is refused by the stored table inside the transaction and served again
    // as a v2 request, answered as a replica that knew would answer it (Vault's 404 with the
    // "Invalid path for a versioned K/V secrets engine" warning).
    const put = await request(deaf.app).put('/v1/upg/b').set(as()).send({ v: 'after' });
    const fresh = await request(h.app).put('/v1/upg/b').set(as()).send({ v: 'after' });
    expect(put.status).toBe(404);
    expect(fresh.status).toBe(404);
    expect({ ...put.body, request_id: '' }).toEqual({ ...fresh.body, request_id: '' });
    expect(put.body.warnings).toEqual([expect.stringMatching(/^Invalid path for a versioned K\/V secrets engine/)]);
    expect(deaf.services.mounts.get('upg')?.options.version).toBe('2');
    // No v1 row was left behind under the mount: only the v2 layout of key a.
    const mount = deaf.services.mounts.get('upg');
    const rows = await h.prisma.$queryRawUnsafe<{ path: string }[]>('SELECT "path" FROM "secrets"."entries" WHERE "path" LIKE $1 ORDER BY "path"', `logical/${mount?.uuid}/%`);
    expect(rows.map((r) => r.path).some((p) => p === `logical/${mount?.uuid}/b`)).toBe(false);
    const a = await request(deaf.app).get('/v1/upg/data/a').set(as()).expect(200);
    expect(a.body.data.data).toEqual({ v: 'before' });
    // A v2 write through the same replica now works.
    const v2 = await request(deaf.app).post('/v1/upg/data/b').set(as()).send({ data: { v: 'after' } }).expect(200);
    expect(v2.body.data.version).toBe(1);
  });

  it('a v1 write or delete on a replica that missed a disable writes nothing and answers 404', async () => {
    await request(h.app).post('/v1/sys/mounts/dis').set(as()).send({ type: 'kv' }).expect(204);
    await request(deaf.app).put('/v1/dis/k').set(as()).send({ v: 1 }).expect(204);
    const uuid = deaf.services.mounts.get('dis')?.uuid;
    await request(h.app).delete('/v1/sys/mounts/dis').set(as()).expect(204);
    expect(deaf.services.mounts.get('dis')).toBeDefined();
    const put = await request(deaf.app).put('/v1/dis/k2').set(as()).send({ v: 2 });
    expect(put.status).toBe(404);
    expect(put.body).toEqual({ errors: ['no handler for route "dis/k2". route entry not found.'] });
    const rows = await h.prisma.$queryRawUnsafe<{ n: bigint }[]>('SELECT count(*) AS n FROM "secrets"."entries" WHERE "path" LIKE $1', `logical/${uuid}/%`);
    expect(Number(rows[0]?.n)).toBe(0);

    // The same for a delete (a fresh mount, so the replica is stale again).
    await request(h.app).post('/v1/sys/mounts/dis2').set(as()).send({ type: 'kv' }).expect(204);
    await request(deaf.app).put('/v1/dis2/k').set(as()).send({ v: 1 }).expect(204);
    await request(h.app).delete('/v1/sys/mounts/dis2').set(as()).expect(204);
    expect(deaf.services.mounts.get('dis2')).toBeDefined();
    const del = await request(deaf.app).delete('/v1/dis2/k').set(as());
    expect(del.status).toBe(404);
    expect(del.body).toEqual({ errors: ['no handler for route "dis2/k". route entry not found.'] });
    expect(deaf.services.mounts.get('dis2')).toBeUndefined();
  });

  it('v1 writes racing an upgrade on the other replica: every 204 is readable afterwards through v2', async () => {
    await request(h.app).post('/v1/sys/mounts/race').set(as()).send({ type: 'kv' }).expect(204);
    await request(deaf.app).put('/v1/race/seed').set(as()).send({ v: 0 }).expect(204);
    const writes = Array.from({ length: 12 }, (_, i) => request(deaf.app).put(`/v1/race/k${i}`).set(as()).send({ v: i }));
    const upgrade = request(h.app).post('/v1/sys/mounts/race/tune').set(as()).send({ options: { version: '2' } });
    const [up, ...rs] = await Promise.all([upgrade, ...writes]);
    expect(up.status).toBe(204);
    for (const [i, r] of rs.entries()) {
      // Before the upgrade: stored as v1 and moved by it. After: re-served as v2 (the 404 above).
      expect([204, 404]).toContain(r.status);
      if (r.status === 204) {
        const got = await request(h.app).get(`/v1/race/data/k${i}`).set(as()).expect(200);
        expect(got.body.data.data).toEqual({ v: i });
      }
    }
  });

  it('a policy created on another replica applies at once to a token that named it before it existed', async () => {
    await request(h.app).put('/v1/secret/data/pol/x').set(as()).send({ data: { a: 1 } }).expect(200);
    const created = await request(h.app).post('/v1/auth/token/create').set(as()).send({ policies: ['later'] }).expect(200);
    const token = created.body.auth.client_token as string;
    // The deaf replica looks the missing policy up (and must not remember that it was missing).
    const before = await request(deaf.app).get('/v1/secret/data/pol/x').set('X-Vault-Token', token);
    expect(before.status).toBe(403);
    expect(before.body).toEqual({ errors: ['1 error occurred:\n\t* permission denied\n\n'] });
    await request(h.app).put('/v1/sys/policy/later').set(as()).send({ policy: 'path "secret/data/pol/*" { capabilities = ["read"] }' }).expect(204);
    const after = await request(deaf.app).get('/v1/secret/data/pol/x').set('X-Vault-Token', token);
    expect(after.status).toBe(200);
    expect(after.body.data.data).toEqual({ a: 1 });
  });
});

