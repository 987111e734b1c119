// Concurrent writers against every route that creates or updates a named resource: 8
// identical requests (and 8 differing ones) at once, through two app instances on the same
// database and blob store. Never a 5xx; the statuses docs/registry.md promises (modelled on
// the registry reference: 409 for an existing version, see
// ../shared/reference/box-hosting-and-module-registry-apis.md "duplicate publish"); the
// resource exists once; latest_version, list/search/versions and the archive files agree.
//
// Write routes on named resources (docs/registry.md "Endpoints", "Publishing", "Tokens and
// namespaces"):
//   POST   /v1/modules/:ns/:name/:provider/:version   create-only (immutable): one 201, the rest 409 `... already exists`
//          (8 identical: extends publish.itest.ts "concurrent publishes of the same version" with two app instances)
//   DELETE /v1/modules/:ns/:name/:provider/:version   204, 404 when gone                 -> publish+delete race
//   POST   /v1/admin/namespaces                        create-only: one 201, the rest 409 `namespace <n> already exists`
//   DELETE /v1/admin/namespaces/:name                  204, 404 when gone, 409 with modules -> create+delete race,
//                                                      publish / token creation racing the namespace's deletion
//   PATCH  /v1/admin/modules/:ns/:name/:provider       update: all 200, one of the values stored
// Skipped: POST /v1/admin/tokens (each call makes a new token with a fresh id: nothing
// named to race on; its race with the namespace's deletion is covered below) and
// DELETE /v1/admin/tokens/:id (one 204, the rest 404: covered in the same way as namespaces).
import type { Express } from 'express';
import { Client } from 'pg';
import request from 'supertest';
import { sampleModuleTarGz } from './archive-fixtures';
import { ADMIN_TOKEN, bearer, createNamespace, createToken, publish, startRegistry, type Registry } from './registry-harness';

/** The request behind a supertest response (supertest's types do not declare `req`). */
const methodOf = (r: { status: number }): string => (r as unknown as { req: { method: string } }).req.method;
const pathOf = (r: { status: number }): string => (r as unknown as { req: { path: string } }).req.path;

const N = 8;
let reg: Registry;
let other: Registry;
let token = '';
const app = (i: number): Express => (i % 2 === 0 ? reg.app : other.app);
const times = <T>(fn: (i: number) => T): T[] => Array.from({ length: N }, (_, i) => fn(i));
type Res = request.Response;
const admin = bearer(ADMIN_TOKEN);

function no5xx(rs: Res[]): void {
  for (const r of rs) if (r.status >= 500) throw new Error(`5xx: ${methodOf(r)} ${pathOf(r)} ${r.status} ${r.text}`);
}
const sorted = (rs: Res[]): number[] => rs.map((r) => r.status).sort((a, b) => a - b);
function interleave(a: (i: number) => Promise<Res>, b: (i: number) => Promise<Res>): Promise<Res[]> {
  const all: Promise<Res>[] = [];
  for (let i = 0; i < N; i++) all.push(a(i), b(i));
  return Promise.all(all);
}

beforeAll(async () => {
  reg = await startRegistry();
  other = await startRegistry({}, { db: reg.db, prisma: reg.prisma, readPool: reg.readPool, blobRoot: reg.blobRoot });
  await createNamespace(reg.app, 'acme');
  token = (await createToken(reg.app, { namespace: 'acme' })).token;
});
afterAll(async () => {
  await other.close();
  await reg.close();
});

/** The module's view through every read route, checked for agreement with the rows. */
async function moduleState(name: string): Promise<string[]> {
  const versions = await request(reg.app).get(`/v1/modules/acme/${name}/aws/versions`);
  const listed = ((await request(other.app).get('/v1/modules/acme?limit=100').expect(200)).body.modules as { name: string; version: string }[]).filter((m) => m.name === name);
  const searched = ((await request(reg.app).get(`/v1/modules/search?q=${name}&limit=100`).expect(200)).body.modules as { name: string }[]).filter((m) => m.name === name);
  const detail = await request(other.app).get(`/v1/modules/acme/${name}/aws`);
  const rows = await reg.prisma.registryModuleVersion.findMany({ where: { module: { namespace: 'acme', name } }, select: { version: true, archiveKey: true } });
  const modules = await reg.prisma.registryModule.findMany({ where: { namespace: 'acme', name } });
  if (rows.length === 0) {
    expect([versions.status, listed.length, searched.length, detail.status, modules.length]).toEqual([404, 0, 0, 404, 0]);
    return [];
  }
  const vs = (versions.body.modules[0].versions as { version: string }[]).map((v) => v.version);
  expect([...vs].sort()).toEqual(rows.map((r) => r.version).sort());
  expect(modules).toHaveLength(1);
  expect(listed).toHaveLength(1);
  expect(searched).toHaveLength(1);
  expect(detail.status).toBe(200);
  // latest_version is the highest stored version, everywhere.
  const latest = [...vs].sort((a, b) => (a < b ? 1 : -1))[0];
  expect([modules[0]?.latestVersion, listed[0]?.version, detail.body.version]).toEqual([latest, latest, latest]);
  // Every stored version's archive exists.
  const files = await reg.archiveFiles();
  for (const r of rows) expect(files).toContain(r.archiveKey.split('/').pop());
  return vs;
}

describe('publish', () => {
  it('8 identical and 8 different publishes of one version: one 201, seven 409; one archive', async () => {
    const before = (await reg.archiveFiles()).length;
    const archive = sampleModuleTarGz();
    const same = await Promise.all(times((i) => publish(app(i), 'acme/twin/aws/1.0.0', archive, token)));
    no5xx(same);
    expect(sorted(same)).toEqual([201, ...times(() => 409).slice(1)]);
    for (const r of same.filter((x) => x.status === 409)) expect(r.body).toEqual({ errors: ['acme/twin/aws 1.0.0 already exists; published versions are immutable'] });
    const diff = await Promise.all(times((i) => publish(app(i), 'acme/twin/aws/2.0.0', sampleModuleTarGz({ [`w${i}.tf`]: `# ${i}\n` }), token, `?description=d${i}`)));
    no5xx(diff);
    expect(sorted(diff)).toEqual([201, ...times(() => 409).slice(1)]);
    const winner = diff.findIndex((r) => r.status === 201);
    const detail = await request(other.app).get('/v1/modules/acme/twin/aws/2.0.0').expect(200);
    expect(detail.body.description).toBe(`d${winner}`);
    expect(await moduleState('twin')).toEqual(['2.0.0', '1.0.0']);
    expect((await reg.archiveFiles()).length).toBe(before + 2);
  });

  it('8 publishes and 8 deletes of one version interleaved: 201/409 and 204/404; every read agrees', async () => {
    const rs = await interleave(
      (i) => publish(app(i), 'acme/flap/aws/1.0.0', sampleModuleTarGz({ [`f${i}.tf`]: '' }), token),
      (i) => request(app(i + 1)).delete('/v1/modules/acme/flap/aws/1.0.0').set(bearer(token)),
    );
    no5xx(rs);
    for (const r of rs) expect(methodOf(r) === 'POST' ? [201, 409] : [204, 404]).toContain(r.status);
    const vs = await moduleState('flap');
    expect(vs.length).toBeLessThanOrEqual(1);
    expect((await reg.archiveFiles()).length).toBe(await reg.prisma.registryModuleVersion.count());
  });

  it('publishes of new versions racing deletes of the only version: no 5xx, latest_version right', async () => {
    await publish(reg.app, 'acme/churn/aws/1.0.0', sampleModuleTarGz(), token).expect(201);
    const rs = await interleave(
      (i) => publish(app(i), `acme/churn/aws/2.0.${i}`, sampleModuleTarGz(), token),
      (i) => request(app(i + 1)).delete(`/v1/modules/acme/churn/aws/${i === 0 ? '1.0.0' : `2.0.${i - 1}`}`).set(bearer(token)),
    );
    no5xx(rs);
    for (const r of rs) expect(methodOf(r) === 'POST' ? [201] : [204, 404]).toContain(r.status);
    await moduleState('churn');
    expect((await reg.archiveFiles()).length).toBe(await reg.prisma.registryModuleVersion.count());
  });
  it('a publish whose module row is deleted (with its last version) while it waits for the row lock: 201, not 500', async () => {
    // Deterministic form of the race above: another transaction does what a delete of the
    // last version does (lock the module row, delete version and module, commit) while the
    // publish's INSERT ... ON CONFLICT DO NOTHING has seen the row and its lock is waiting.
    await publish(reg.app, 'acme/gone/aws/1.0.0', sampleModuleTarGz(), token).expect(201);
    const c = new Client({ connectionString: reg.db.url });
    await c.connect();
    try {
      await c.query('BEGIN');
      const m = await c.query<{ id: string }>(`SELECT id FROM "registry"."modules" WHERE "namespace" = 'acme' AND "name" = 'gone' FOR UPDATE`);
      const pending = publish(other.app, 'acme/gone/aws/2.0.0', sampleModuleTarGz(), token).then((r) => r);
      let blocked = false;
      for (let i = 0; i < 300 && !blocked; i++) {
        const rows = await reg.prisma.$queryRawUnsafe<{ n: bigint }[]>(
          `SELECT count(*) AS n FROM pg_stat_activity WHERE "datname" = current_database() AND "wait_event_type" = 'Lock' AND "query" LIKE '%FOR UPDATE%'`,
        );
        blocked = Number(rows[0]?.n) > 0;
        if (!blocked) await new Promise((r) => setTimeout(r, 10));
      }
      expect(blocked).toBe(true);
      await c.query('DELETE FROM "registry"."module_versions" WHERE "module_id" = $1', [m.rows[0]?.id]);
      await c.query('DELETE FROM "registry"."modules" WHERE "id" = $1', [m.rows[0]?.id]);
      await c.query('COMMIT');
      const r = await pending;
      expect(r.status).toBe(201);
    } finally {
      await c.end();
    }
    expect(await moduleState('gone')).toEqual(['2.0.0']);
  });
});

describe('namespaces', () => {
  it('8 identical and 8 different creates: one 201, seven 409; one row', async () => {
    const same = await Promise.all(times((i) => request(app(i)).post('/v1/admin/namespaces').set(admin).send({ name: 'ns1', owner: 'o' })));
    no5xx(same);
    expect(sorted(same)).toEqual([201, ...times(() => 409).slice(1)]);
    for (const r of same.filter((x) => x.status === 409)) expect(r.body).toEqual({ errors: ['namespace ns1 already exists'] });
    const diff = await Promise.all(times((i) => request(app(i)).post('/v1/admin/namespaces').set(admin).send({ name: 'ns2', owner: `o${i}` })));
    no5xx(diff);
    expect(sorted(diff)).toEqual([201, ...times(() => 409).slice(1)]);
    const winner = diff.findIndex((r) => r.status === 201);
    const list = (await request(other.app).get('/v1/admin/namespaces').set(admin).expect(200)).body.namespaces as { name: string; owner: string }[];
    expect(list.filter((n) => n.name === 'ns2')).toEqual([expect.objectContaining({ owner: `o${winner}` })]);
    expect(await reg.prisma.registryNamespace.count({ where: { name: { in: ['ns1', 'ns2'] } } })).toBe(2);
  });

  it('8 creates and 8 deletes interleaved: 201/409 and 204/404; list and publishing agree', async () => {
    const rs = await interleave(
      () => request(app(0)).post('/v1/admin/namespaces').set(admin).send({ name: 'nsflap' }),
      (i) => request(app(i + 1)).delete('/v1/admin/namespaces/nsflap').set(admin),
    );
    no5xx(rs);
    for (const r of rs) expect(methodOf(r) === 'POST' ? [201, 409] : [204, 404]).toContain(r.status);
    const listed = ((await request(reg.app).get('/v1/admin/namespaces').set(admin).expect(200)).body.namespaces as { name: string }[]).some((n) => n.name === 'nsflap');
    const pub = await publish(other.app, 'nsflap/m/aws/1.0.0', sampleModuleTarGz(), ADMIN_TOKEN);
    expect(pub.status).toBe(listed ? 201 : 404);
  });

  it('publishes into a namespace racing its deletion: 201/404 and 204/409/404, never a module without its namespace', async () => {
    await createNamespace(reg.app, 'doomed');
    const rs = await interleave(
      (i) => publish(app(i), `doomed/m${i}/aws/1.0.0`, sampleModuleTarGz(), ADMIN_TOKEN),
      (i) => request(app(i + 1)).delete('/v1/admin/namespaces/doomed').set(admin),
    );
    no5xx(rs);
    for (const r of rs) expect(methodOf(r) === 'POST' ? [201, 404] : [204, 404, 409]).toContain(r.status);
    const ns = await reg.prisma.registryNamespace.count({ where: { name: 'doomed' } });
    const modules = await reg.prisma.registryModule.count({ where: { namespace: 'doomed' } });
    if (ns === 0) expect(modules).toBe(0);
    expect(modules).toBe(rs.filter((r) => methodOf(r) === 'POST' && r.status === 201).length);
  });

  it('token creations for a namespace racing its deletion: 201/400 and 204/404, no token of a missing namespace', async () => {
    await createNamespace(reg.app, 'tokns');
    const rs = await interleave(
      (i) => request(app(i)).post('/v1/admin/tokens').set(admin).send({ namespace: 'tokns', description: `t${i}` }),
      (i) => request(app(i + 1)).delete('/v1/admin/namespaces/tokns').set(admin),
    );
    no5xx(rs);
    for (const r of rs) {
      if (methodOf(r) === 'DELETE') expect([204, 404]).toContain(r.status);
      else if (r.status !== 201) expect([r.status, r.body]).toEqual([400, { errors: ['namespace tokns does not exist; create it first'] }]);
    }
    const tokens = ((await request(other.app).get('/v1/admin/tokens').set(admin).expect(200)).body.tokens as { namespace: string | null }[]).filter((t) => t.namespace === 'tokns');
    expect(await reg.prisma.registryNamespace.count({ where: { name: 'tokns' } })).toBe(0);
    expect(tokens).toHaveLength(0);
  });
});

describe('admin module flags', () => {
  it('8 PATCHes of verified: all 200, the stored value is one of them, list filter agrees', async () => {
    await publish(reg.app, 'acme/flag/aws/1.0.0', sampleModuleTarGz(), token).expect(201);
    const rs = await Promise.all(times((i) => request(app(i)).patch('/v1/admin/modules/acme/flag/aws').set(admin).send({ verified: i % 2 === 0 })));
    no5xx(rs);
    expect(sorted(rs)).toEqual(times(() => 200));
    const row = await reg.prisma.registryModule.findFirstOrThrow({ where: { namespace: 'acme', name: 'flag' } });
    const verified = ((await request(other.app).get('/v1/modules/acme?verified=true&limit=100').expect(200)).body.modules as { name: string }[]).some((m) => m.name === 'flag');
    expect(verified).toBe(row.verified);
    expect((await request(reg.app).get('/v1/modules/acme/flag/aws').expect(200)).body.verified).toBe(row.verified);
  });
});
