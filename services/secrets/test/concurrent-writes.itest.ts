// Concurrent writers against every route that creates or updates a named resource: 8
// identical requests (and 8 differing ones) at once, across two replicas on the same
// database. Never a 5xx; the statuses are Vault's; the resource exists exactly once and
// holds one of the bodies sent; create+delete races leave every read route agreeing.
//
// Write routes on named resources (docs/secrets.md "Routes"; statuses from
// ../shared/reference/secrets-service-vault-api.md §2, §3, §4.7, §4.8, §5.2):
//   POST   /v1/sys/mounts/<path>              create-only: one 204, the rest 400 `path is already in use at <p>/` (§4.7)
//   DELETE /v1/sys/mounts/<path>              204 also when nothing is mounted (§4.7)          -> create+delete race
//   POST   /v1/sys/mounts/<path>/tune         update: all 204 (§4.7), incl. the v1->v2 upgrade
//   PUT    /v1/sys/policy/<name>              upsert: all 204 (§4.8)
//   PUT    /v1/sys/policies/acl/<name>        upsert: all 204 (§4.8); DELETE 204           -> create+delete race
//   POST   /v1/auth/token/create {id}         create-only with a chosen id: one 200, the rest 400
//                                            `cannot create a token with a duplicate ID` (docs/secrets.md; Vault's text)
//   PUT    /v1/<kv1>/<key>                    upsert: all 204 (§2); DELETE 204                 -> create+delete race
//   POST   /v1/<kv2>/config                   upsert: all 204 (§3.9)
//   POST   /v1/<kv2>/metadata/<key>           upsert: all 204, creates metadata with current_version 0 (§3.6)
//   PATCH  /v1/<kv2>/metadata/<key>           read-modify-write: all 204, no custom_metadata key lost
//   PATCH  /v1/<kv2>/data/<key>               read-modify-write: all 200, distinct versions, no field lost (§3.4)
//   DELETE /v1/<kv2>/metadata/<key>           204                                              -> create+delete race with data writes
// Skipped, already covered by a concurrency test:
//   POST /v1/<kv2>/data/<key>                 kv-concurrency.itest.ts (16 writers, cas races, pruning)
//   PUT  /v1/sys/init                         init-race.itest.ts
// Not named-resource writes: sys/unseal, sys/seal, token renew/revoke/lookup, capabilities-self,
// kv2 delete/undelete/destroy (version flags on an existing key, serialised like PATCH).
import type { Express } from 'express';
import request from 'supertest';
import { startUnsealedReplicas, type Harness } from './harness';

/** The request behind a supertest response (supertest's types do not declare `req`). */
const methodOf = (r: { status: number }): string => (r as unknown as { req: { method: string } }).req.method;

const N = 8;
let h: Harness;
let other: Express;
let root = '';
const as = () => ({ 'X-Vault-Token': root });
const app = (i: number): Express => (i % 2 === 0 ? h.app : other);
const times = <T>(fn: (i: number) => T): T[] => Array.from({ length: N }, (_, i) => fn(i));

function statuses(rs: { status: number }[]): number[] {
  return rs.map((r) => r.status).sort((a, b) => a - b);
}
function no5xx(rs: { status: number; text: string }[]): void {
  for (const r of rs) if (r.status >= 500) throw new Error(`5xx: ${r.status} ${r.text}`);
}
/** Interleaves 8 creators and 8 deleters (c0 d0 c1 d1 ...), fired at once. */
function interleave<T>(create: (i: number) => Promise<T>, del: (i: number) => Promise<T>): Promise<T[]> {
  const all: Promise<T>[] = [];
  for (let i = 0; i < N; i++) all.push(create(i), del(i));
  return Promise.all(all);
}

beforeAll(async () => {
  ({ h, root, other } = await startUnsealedReplicas());
});
afterAll(async () => {
  await h.close();
});

async function countRows(like: string): Promise<number> {
  const rows = await h.prisma.$queryRawUnsafe<{ n: bigint }[]>('SELECT count(*) AS n FROM "secrets"."entries" WHERE "path" LIKE $1', like);
  return Number(rows[0]?.n);
}

describe('sys/mounts', () => {
  it('8 identical mount creations: one 204, seven "already in use"', async () => {
    const rs = await Promise.all(times((i) => request(app(i)).post('/v1/sys/mounts/same').set(as()).send({ type: 'kv', options: { version: '2' } })));
    no5xx(rs);
    expect(statuses(rs)).toEqual([204, ...times(() => 400).slice(1)]);
    for (const r of rs.filter((x) => x.status === 400)) expect(r.body).toEqual({ errors: ['path is already in use at same/'] });
    for (const a of [h.app, other]) {
      const list = await request(a).get('/v1/sys/mounts').set(as()).expect(200);
      expect(Object.keys(list.body.data).filter((k) => k === 'same/')).toHaveLength(1);
    }
  });

  it('8 different mount creations on one path: the stored mount is the winner\'s', async () => {
    const rs = await Promise.all(
      times((i) => request(app(i)).post('/v1/sys/mounts/diff').set(as()).send({ type: 'kv', description: `d${i}`, options: { version: i % 2 === 0 ? '1' : '2' } })),
    );
    no5xx(rs);
    expect(statuses(rs)).toEqual([204, ...times(() => 400).slice(1)]);
    const winner = rs.findIndex((r) => r.status === 204);
    for (const a of [h.app, other]) {
      const m = await request(a).get('/v1/sys/mounts/diff').set(as()).expect(200);
      expect(m.body.data).toMatchObject({ description: `d${winner}`, options: { version: winner % 2 === 0 ? '1' : '2' } });
    }
  });

  it('8 tunes with different descriptions: all 204, one of them stored', async () => {
    await request(h.app).post('/v1/sys/mounts/tuned').set(as()).send({ type: 'kv' }).expect(204);
    const rs = await Promise.all(times((i) => request(app(i)).post('/v1/sys/mounts/tuned/tune').set(as()).send({ description: `t${i}`, max_lease_ttl: 3600 + i })));
    no5xx(rs);
    expect(statuses(rs)).toEqual(times(() => 204));
    const t = await request(h.app).get('/v1/sys/mounts/tuned/tune').set(as()).expect(200);
    const i = Number(String(t.body.data.description).slice(1));
    expect(t.body.data).toMatchObject({ description: `t${i}`, max_lease_ttl: 3600 + i });
    const list = await request(other).get('/v1/sys/mounts').set(as()).expect(200);
    expect(Object.keys(list.body.data).filter((k) => k === 'tuned/')).toHaveLength(1);
  });

  it('8 concurrent v1->v2 upgrades: all 204, each key becomes exactly version 1', async () => {
    await request(h.app).post('/v1/sys/mounts/up').set(as()).send({ type: 'kv' }).expect(204);
    await request(h.app).put('/v1/up/k').set(as()).send({ v: 'one' }).expect(204);
    const rs = await Promise.all(times((i) => request(app(i)).post('/v1/sys/mounts/up/tune').set(as()).send({ options: { version: '2' } })));
    no5xx(rs);
    expect(statuses(rs)).toEqual(times(() => 204));
    for (const a of [h.app, other]) {
      const meta = await request(a).get('/v1/up/metadata/k').set(as()).expect(200);
      expect(meta.body.data.current_version).toBe(1);
      expect(Object.keys(meta.body.data.versions)).toEqual(['1']);
      const d = await request(a).get('/v1/up/data/k').set(as()).expect(200);
      expect(d.body.data.data).toEqual({ v: 'one' });
    }
  });

  it('8 creates and 8 deletes of one mount interleaved: every read route agrees', async () => {
    const rs = await interleave(
      (i) => request(app(i)).post('/v1/sys/mounts/flap').set(as()).send({ type: 'kv', description: `f${i}` }),
      (i) => request(app(i + 1)).delete('/v1/sys/mounts/flap').set(as()),
    );
    no5xx(rs);
    for (const r of rs) expect([204, 400]).toContain(r.status);
    // Replicas reload the table from the bus; give the last message a moment.
    await new Promise((r) => setTimeout(r, 200));
    const views: boolean[] = [];
    for (const a of [h.app, other]) {
      views.push('flap/' in (await request(a).get('/v1/sys/mounts').set(as()).expect(200)).body.data);
      views.push((await request(a).get('/v1/sys/mounts/flap').set(as())).status === 200);
      views.push((await request(a).get('/v1/sys/internal/ui/mounts/flap/x').set(as())).status === 200);
    }
    expect(new Set(views).size).toBe(1);
    if (views[0]) {
      await request(h.app).put('/v1/flap/k').set(as()).send({ a: 1 }).expect(204);
      expect((await request(other).get('/v1/flap/k').set(as())).body.data).toEqual({ a: 1 });
    }
  });
});

describe('policies', () => {
  const hcl = (i: number) => `path "p${i}/*" { capabilities = ["read"] }`;

  it.each([['/v1/sys/policy/'], ['/v1/sys/policies/acl/']])('8 identical and 8 different writes via %s: all 204, one stored once', async (base) => {
    const name = base.includes('acl') ? 'pacl' : 'plegacy';
    const same = await Promise.all(times((i) => request(app(i)).put(`${base}${name}`).set(as()).send({ policy: hcl(0) })));
    no5xx(same);
    expect(statuses(same)).toEqual(times(() => 204));
    const diff = await Promise.all(times((i) => request(app(i)).put(`${base}${name}`).set(as()).send({ policy: hcl(i) })));
    no5xx(diff);
    expect(statuses(diff)).toEqual(times(() => 204));
    const stored = await request(other).get(`/v1/sys/policies/acl/${name}`).set(as()).expect(200);
    expect(times(hcl)).toContain(stored.body.data.policy);
    const legacy = await request(h.app).get(`/v1/sys/policy/${name}`).set(as()).expect(200);
    expect(legacy.body.rules).toBe(stored.body.data.policy);
    const list = await request(h.app).get('/v1/sys/policies/acl?list=true').set(as()).expect(200);
    expect((list.body.data.keys as string[]).filter((k) => k === name)).toHaveLength(1);
    expect(await countRows(`%policy%${name}`)).toBe(1);
  });

  it('8 writes and 8 deletes of one policy interleaved: reads and list agree', async () => {
    const rs = await interleave(
      (i) => request(app(i)).put('/v1/sys/policies/acl/flappol').set(as()).send({ policy: hcl(i) }),
      (i) => request(app(i + 1)).delete('/v1/sys/policies/acl/flappol').set(as()),
    );
    no5xx(rs);
    expect(statuses(rs)).toEqual(Array.from({ length: 2 * N }, () => 204));
    const views: boolean[] = [];
    for (const a of [h.app, other]) {
      views.push((await request(a).get('/v1/sys/policies/acl/flappol').set(as())).status === 200);
      views.push((await request(a).get('/v1/sys/policy/flappol').set(as())).status === 200);
      views.push(((await request(a).get('/v1/sys/policies/acl?list=true').set(as())).body.data.keys as string[]).includes('flappol'));
      views.push(((await request(a).get('/v1/sys/policy').set(as())).body.keys as string[]).includes('flappol'));
    }
    expect(new Set(views).size).toBe(1);
  });
});

describe('auth/token/create with an explicit id', () => {
  it('8 creators of one id: one 200, seven "duplicate ID"; the token exists once', async () => {
    const rs = await Promise.all(
      times((i) => request(app(i)).post('/v1/auth/token/create').set(as()).send({ id: 'racy-token', policies: ['default'], meta: { writer: String(i) } })),
    );
    no5xx(rs);
    expect(statuses(rs)).toEqual([200, ...times(() => 400).slice(1)]);
    for (const r of rs.filter((x) => x.status === 400)) expect(r.body).toEqual({ errors: ['cannot create a token with a duplicate ID'] });
    const winner = rs.findIndex((r) => r.status === 200);
    const self = await request(other).get('/v1/auth/token/lookup-self').set('X-Vault-Token', 'racy-token').expect(200);
    expect(self.body.data.meta).toEqual({ writer: String(winner) });
    expect(self.body.data.accessor).toBe(rs[winner]?.body.auth.accessor);
    const accessors = await request(h.app).get('/v1/auth/token/accessors?list=true').set(as()).expect(200);
    const live = rs.map((r) => r.body.auth?.accessor as string | undefined).filter((a): a is string => a !== undefined);
    for (const a of live) expect(accessors.body.data.keys).toContain(a);
    expect(live).toHaveLength(1);
  });
});

describe('KV v1', () => {
  beforeAll(async () => {
    await request(h.app).post('/v1/sys/mounts/kv1').set(as()).send({ type: 'kv' }).expect(204);
  });

  it('8 identical and 8 different writes: all 204, one body stored once', async () => {
    const same = await Promise.all(times((i) => request(app(i)).put('/v1/kv1/k').set(as()).send({ v: 'same' })));
    no5xx(same);
    expect(statuses(same)).toEqual(times(() => 204));
    const diff = await Promise.all(times((i) => request(app(i)).put('/v1/kv1/k').set(as()).send({ v: `w${i}`, [`f${i}`]: i })));
    no5xx(diff);
    expect(statuses(diff)).toEqual(times(() => 204));
    const r = await request(other).get('/v1/kv1/k').set(as()).expect(200);
    const i = Number(String(r.body.data.v).slice(1));
    expect(r.body.data).toEqual({ v: `w${i}`, [`f${i}`]: i });
    const list = await request(h.app).get('/v1/kv1/?list=true').set(as()).expect(200);
    expect(list.body.data.keys).toEqual(['k']);
  });

  it('8 writes and 8 deletes interleaved: read and list agree', async () => {
    const rs = await interleave(
      (i) => request(app(i)).put('/v1/kv1/dir/flap').set(as()).send({ v: i }),
      (i) => request(app(i + 1)).delete('/v1/kv1/dir/flap').set(as()),
    );
    no5xx(rs);
    expect(statuses(rs)).toEqual(Array.from({ length: 2 * N }, () => 204));
    const read = await request(h.app).get('/v1/kv1/dir/flap').set(as());
    const list = await request(other).get('/v1/kv1/dir/?list=true').set(as());
    expect([read.status, list.status]).toEqual(read.status === 200 ? [200, 200] : [404, 404]);
  });
});

describe('KV v2 (config, metadata, patch, delete)', () => {
  it('8 different config writes: all 204, one stored', async () => {
    const rs = await Promise.all(times((i) => request(app(i)).post('/v1/secret/config').set(as()).send({ max_versions: 20 + i, cas_required: false })));
    no5xx(rs);
    expect(statuses(rs)).toEqual(times(() => 204));
    const c = await request(h.app).get('/v1/secret/config').set(as()).expect(200);
    expect(times((i) => 20 + i)).toContain(c.body.data.max_versions);
    expect((await request(other).get('/v1/secret/config').set(as()).expect(200)).body.data).toEqual(c.body.data);
  });

  it('8 identical and 8 different metadata writes on a fresh key: all 204, metadata exists once, no version', async () => {
    const same = await Promise.all(times((i) => request(app(i)).post('/v1/secret/metadata/m1').set(as()).send({ max_versions: 5 })));
    no5xx(same);
    expect(statuses(same)).toEqual(times(() => 204));
    const diff = await Promise.all(
      times((i) => request(app(i)).post('/v1/secret/metadata/m2').set(as()).send({ max_versions: 5 + i, custom_metadata: { w: String(i) } })),
    );
    no5xx(diff);
    expect(statuses(diff)).toEqual(times(() => 204));
    const m = await request(other).get('/v1/secret/metadata/m2').set(as()).expect(200);
    expect(m.body.data.current_version).toBe(0);
    expect(m.body.data.versions).toEqual({});
    const i = Number(m.body.data.custom_metadata.w);
    expect(m.body.data.max_versions).toBe(5 + i);
    const list = await request(h.app).get('/v1/secret/metadata/?list=true').set(as()).expect(200);
    expect((list.body.data.keys as string[]).filter((k) => k === 'm1' || k === 'm2')).toEqual(['m1', 'm2']);
  });

  it('8 metadata PATCHes adding different custom_metadata keys: all 204, none lost', async () => {
    await request(h.app).post('/v1/secret/metadata/mp').set(as()).send({ custom_metadata: { base: 'b' } }).expect(204);
    const rs = await Promise.all(
      times((i) => request(app(i)).patch('/v1/secret/metadata/mp').set(as()).set('Content-Type', 'application/merge-patch+json').send({ custom_metadata: { [`k${i}`]: String(i) } })),
    );
    no5xx(rs);
    expect(statuses(rs)).toEqual(times(() => 204));
    const m = await request(other).get('/v1/secret/metadata/mp').set(as()).expect(200);
    expect(m.body.data.custom_metadata).toEqual({ base: 'b', ...Object.fromEntries(times((i) => [`k${i}`, String(i)])) });
  });

  it('8 data PATCHes of different fields: all 200, versions 2..9 once each, no field lost', async () => {
    await request(h.app).post('/v1/secret/data/pk').set(as()).send({ data: { base: 0 } }).expect(200);
    const rs = await Promise.all(
      times((i) => request(app(i)).patch('/v1/secret/data/pk').set(as()).set('Content-Type', 'application/merge-patch+json').send({ data: { [`f${i}`]: i } })),
    );
    no5xx(rs);
    expect(statuses(rs)).toEqual(times(() => 200));
    expect(rs.map((r) => r.body.data.version as number).sort((a, b) => a - b)).toEqual(times((i) => i + 2));
    const d = await request(other).get('/v1/secret/data/pk').set(as()).expect(200);
    expect(d.body.data.data).toEqual({ base: 0, ...Object.fromEntries(times((i) => [`f${i}`, i])) });
    expect(d.body.data.metadata.version).toBe(N + 1);
  });

  it('8 data writes and 8 metadata deletes interleaved: data, metadata and list agree', async () => {
    const rs = await interleave(
      (i) => request(app(i)).post('/v1/secret/data/dflap').set(as()).send({ data: { w: i } }),
      (i) => request(app(i + 1)).delete('/v1/secret/metadata/dflap').set(as()),
    );
    no5xx(rs);
    for (const r of rs) expect(r.status).toBe(methodOf(r) === 'DELETE' ? 204 : 200);
    const data = await request(h.app).get('/v1/secret/data/dflap').set(as());
    const meta = await request(other).get('/v1/secret/metadata/dflap').set(as());
    const list = await request(h.app).get('/v1/secret/metadata/?list=true').set(as());
    const listed = list.status === 200 && (list.body.data.keys as string[]).includes('dflap');
    if (data.status === 200) {
      expect(meta.status).toBe(200);
      expect(listed).toBe(true);
      // Versions restart at 1 after a metadata delete: the current version and the stored rows match.
      const cur = meta.body.data.current_version as number;
      expect(data.body.data.metadata.version).toBe(cur);
      expect(Object.keys(meta.body.data.versions).map(Number)).toEqual(times((i) => i + 1).filter((v) => v <= cur && v > cur - 10));
    } else {
      expect([data.status, meta.status, listed]).toEqual([404, 404, false]);
    }
  });
});
