// Concurrent writers against every route that creates or updates a named resource: 8
// identical requests (and 8 differing ones) at once. Never a 5xx; Vagrant Cloud's statuses;
// the resource exists once and holds one of the bodies sent; create/update+delete races
// leave the box, user, search and catalog routes agreeing.
//
// Write routes on named resources (docs/boxes.md "Endpoints", "Errors"; reference
// ../shared/reference/box-hosting-and-module-registry-apis.md A.1: 422 for a duplicate name,
// 404 for what is missing):
//   POST   /api/v1/boxes                                    create-only: one 201, the rest 422 `... has already been taken`
//   PUT    /api/v1/box/:u/:n                                update: all 200 (rename: 200, or 404 once the old name is gone)
//   DELETE /api/v1/box/:u/:n                                200, 404 when already gone          -> create+delete, update+delete races
//   POST   /api/v1/box/:u/:n/versions                       create-only: one 201, the rest 422
//   PUT    .../version/:v                                   update: all 200; DELETE 200/404     -> create+delete, update+delete races
//   PUT    .../version/:v/release, .../revoke               state transition: one 200, the rest 422 (docs "Version states")
//   POST   .../version/:v/providers                         create-only: one 201, the rest 422
//   PUT    .../version/:v/provider/:p                       update: all 200; DELETE 200/404     -> create+delete, update+delete races
// Skipped: PUT /api/v1/uploads/:signed-token and the direct-upload callback (concurrent
// uploads to one provider are covered by s3-storage.itest.ts "concurrent uploads");
// POST/DELETE /api/v1/authenticate (tokens are not named; each call makes a new one).
// POST /api/v1/boxes extends boxes-api.itest.ts "two concurrent creators" to 8 with different bodies.
import request from 'supertest';
import { auth, createHarness, userWithToken, type Harness } from './harness';

/** The request behind a supertest response (supertest's types do not declare `req`). */
const methodOf = (r: { status: number }): string => (r as unknown as { req: { method: string } }).req.method;

const N = 8;
let h: Harness;
let alice = '';
const api = () => request(h.app);
const times = <T>(fn: (i: number) => T): T[] => Array.from({ length: N }, (_, i) => fn(i));
type Res = request.Response;

function no5xx(rs: Res[]): void {
  for (const r of rs) if (r.status >= 500) throw new Error(`5xx: ${methodOf(r)} ${r.status} ${r.text}`);
}
const sorted = (rs: Res[]): number[] => rs.map((r) => r.status).sort((a, b) => a - b);
function expectErrors(rs: Res[], status: number, pattern: RegExp): void {
  for (const r of rs) {
    expect(r.status).toBe(status);
    expect(r.body.success).toBe(false);
    expect(r.body.errors.join(' ')).toMatch(pattern);
  }
}
function interleave(a: (i: number) => Promise<Res>, b: (i: number) => Promise<Res>): Promise<Res[]> {
  const all: Promise<Res>[] = [];
  for (let i = 0; i < N; i++) all.push(a(i), b(i));
  return Promise.all(all);
}
const create = (name: string, body: Record<string, unknown> = {}) => api().post('/api/v1/boxes').set(auth(alice)).send({ box: { name, is_private: false, ...body } });
const box = (name: string) => `/api/v1/box/alice/${name}`;

beforeAll(async () => {
  h = await createHarness();
  alice = await userWithToken(h, 'alice');
});
afterAll(async () => {
  await h.close();
});

/**
 * Every read route that shows a box agrees on whether it exists (search is left out: it
 * lists only boxes with a released version, reference A.3).
 */
async function boxViews(name: string): Promise<boolean> {
  const one = (await api().get(box(name)).set(auth(alice))).status;
  const user = ((await api().get('/api/v1/user/alice').set(auth(alice)).expect(200)).body.boxes as { name: string }[]).filter((b) => b.name === name).length;
  const catalog = (await api().get(`/alice/${name}`).set(auth(alice))).status;
  const rows = await h.prisma.box.count({ where: { name } });
  const views = [one === 200, user === 1, catalog === 200, rows === 1];
  expect([one, user, catalog, rows]).toEqual(views[0] ? [200, 1, 200, 1] : [404, 0, 404, 0]);
  return views[0] as boolean;
}

describe('boxes', () => {
  it('8 identical and 8 different creates: one 201 each time, seven 422; the winner\'s box exists once', async () => {
    const same = await Promise.all(times(() => create('same', { short_description: 's' })));
    no5xx(same);
    expect(sorted(same)).toEqual([201, ...times(() => 422).slice(1)]);
    expectErrors(same.filter((r) => r.status !== 201), 422, /Name has already been taken/);
    const diff = await Promise.all(times((i) => create('diff', { short_description: `s${i}`, is_private: i % 2 === 0 })));
    no5xx(diff);
    expect(sorted(diff)).toEqual([201, ...times(() => 422).slice(1)]);
    const winner = diff.findIndex((r) => r.status === 201);
    const got = await api().get(box('diff')).set(auth(alice)).expect(200);
    expect(got.body).toMatchObject({ short_description: `s${winner}`, private: winner % 2 === 0 });
    expect(await h.prisma.box.count({ where: { name: 'diff' } })).toBe(1);
  });

  it('8 different updates: all 200, one of them stored', async () => {
    await create('upd').expect(201);
    const rs = await Promise.all(times((i) => api().put(box('upd')).set(auth(alice)).send({ box: { short_description: `u${i}`, description: `d${i}` } })));
    no5xx(rs);
    expect(sorted(rs)).toEqual(times(() => 200));
    const got = await api().get(box('upd')).set(auth(alice)).expect(200);
    const i = Number(String(got.body.short_description).slice(1));
    expect(got.body).toMatchObject({ short_description: `u${i}`, description_markdown: `d${i}` });
  });

  it('8 renames to one new name: 200 or 404 (old name gone), the box exists once under the new name', async () => {
    await create('old').expect(201);
    const rs = await Promise.all(times(() => api().put(box('old')).set(auth(alice)).send({ box: { name: 'renamed' } })));
    no5xx(rs);
    for (const r of rs) expect([200, 404]).toContain(r.status);
    expect(rs.filter((r) => r.status === 200).length).toBeGreaterThanOrEqual(1);
    expect(await boxViews('old')).toBe(false);
    expect(await boxViews('renamed')).toBe(true);
  });

  it('8 creates and 8 deletes interleaved: box, user page, catalog and rows agree', async () => {
    const rs = await interleave(
      (i) => create('flap', { short_description: `f${i}` }),
      () => api().delete(box('flap')).set(auth(alice)),
    );
    no5xx(rs);
    for (const r of rs) expect(methodOf(r) === 'POST' ? [201, 422] : [200, 404]).toContain(r.status);
    await boxViews('flap');
  });

  it('8 updates and 8 deletes interleaved: 200 or 404, never a 5xx', async () => {
    await create('updel').expect(201);
    const rs = await interleave(
      (i) => api().put(box('updel')).set(auth(alice)).send({ box: { short_description: `x${i}` } }),
      () => api().delete(box('updel')).set(auth(alice)),
    );
    no5xx(rs);
    for (const r of rs) expect([200, 404]).toContain(r.status);
    expect(rs.filter((r) => methodOf(r) === 'DELETE' && r.status === 200)).toHaveLength(1);
    expect(await boxViews('updel')).toBe(false);
  });
});

describe('versions', () => {
  const ver = (name: string, v: string) => `${box(name)}/version/${v}`;
  const createVersion = (name: string, v: string, description = '') => api().post(`${box(name)}/versions`).set(auth(alice)).send({ version: { version: v, description } });

  it('8 identical and 8 different creates of one version: one 201, seven 422', async () => {
    await create('vbox').expect(201);
    const same = await Promise.all(times(() => createVersion('vbox', '1.0.0')));
    no5xx(same);
    expect(sorted(same)).toEqual([201, ...times(() => 422).slice(1)]);
    expectErrors(same.filter((r) => r.status !== 201), 422, /Version has already been taken/);
    const diff = await Promise.all(times((i) => createVersion('vbox', '2.0.0', `d${i}`)));
    no5xx(diff);
    expect(sorted(diff)).toEqual([201, ...times(() => 422).slice(1)]);
    const winner = diff.findIndex((r) => r.status === 201);
    expect((await api().get(ver('vbox', '2.0.0')).set(auth(alice)).expect(200)).body.description_markdown).toBe(`d${winner}`);
    const got = await api().get(box('vbox')).set(auth(alice)).expect(200);
    expect(got.body.versions.map((v: { version: string }) => v.version)).toEqual(['2.0.0', '1.0.0']);
  });

  it('8 different updates of one version: all 200, one stored', async () => {
    const rs = await Promise.all(times((i) => api().put(ver('vbox', '1.0.0')).set(auth(alice)).send({ version: { description: `v${i}` } })));
    no5xx(rs);
    expect(sorted(rs)).toEqual(times(() => 200));
    const got = await api().get(ver('vbox', '1.0.0')).set(auth(alice)).expect(200);
    expect(times((i) => `v${i}`)).toContain(got.body.description_markdown);
  });

  it('8 releases then 8 revokes: one 200 and seven 422 each; the catalog follows', async () => {
    await api().post(`${ver('vbox', '1.0.0')}/providers`).set(auth(alice)).send({ provider: { name: 'virtualbox', url: 'https://example.com/a.box' } }).expect(201);
    const rel = await Promise.all(times(() => api().put(`${ver('vbox', '1.0.0')}/release`).set(auth(alice))));
    no5xx(rel);
    expect(sorted(rel)).toEqual([200, ...times(() => 422).slice(1)]);
    expectErrors(rel.filter((r) => r.status !== 200), 422, /already released/);
    expect((await api().get(box('vbox')).set(auth(alice))).body.current_version.version).toBe('1.0.0');
    const rev = await Promise.all(times(() => api().put(`${ver('vbox', '1.0.0')}/revoke`).set(auth(alice))));
    no5xx(rev);
    expect(sorted(rev)).toEqual([200, ...times(() => 422).slice(1)]);
    expectErrors(rev.filter((r) => r.status !== 200), 422, /Only an active version can be revoked/);
    expect((await api().get(box('vbox')).set(auth(alice))).body.current_version).toBeNull();
    expect((await api().get('/alice/vbox')).body.versions).toEqual([]);
  });

  it('8 creates and 8 deletes of one version interleaved: version, box and rows agree', async () => {
    const rs = await interleave(
      (i) => createVersion('vbox', '3.0.0', `f${i}`),
      () => api().delete(ver('vbox', '3.0.0')).set(auth(alice)),
    );
    no5xx(rs);
    for (const r of rs) expect(methodOf(r) === 'POST' ? [201, 422] : [200, 404]).toContain(r.status);
    const one = (await api().get(ver('vbox', '3.0.0')).set(auth(alice))).status;
    const listed = ((await api().get(box('vbox')).set(auth(alice))).body.versions as { version: string }[]).some((v) => v.version === '3.0.0');
    const rows = await h.prisma.boxVersion.count({ where: { version: '3.0.0' } });
    expect([one, listed, rows]).toEqual(one === 200 ? [200, true, 1] : [404, false, 0]);
  });

  it('8 updates and 8 deletes of one version interleaved: 200 or 404, never a 5xx', async () => {
    await createVersion('vbox', '4.0.0').expect(201);
    const rs = await interleave(
      (i) => api().put(ver('vbox', '4.0.0')).set(auth(alice)).send({ version: { description: `x${i}` } }),
      () => api().delete(ver('vbox', '4.0.0')).set(auth(alice)),
    );
    no5xx(rs);
    for (const r of rs) expect([200, 404]).toContain(r.status);
    expect(rs.filter((r) => methodOf(r) === 'DELETE' && r.status === 200)).toHaveLength(1);
    expect((await api().get(ver('vbox', '4.0.0')).set(auth(alice))).status).toBe(404);
  });

  it('8 version creates racing the deletion of their box: 201/404, never a 5xx, no orphan rows', async () => {
    await create('doomed').expect(201);
    const rs = await interleave(
      (i) => createVersion('doomed', `${i + 1}.0.0`),
      () => api().delete(box('doomed')).set(auth(alice)),
    );
    no5xx(rs);
    for (const r of rs) expect(methodOf(r) === 'POST' ? [201, 404] : [200, 404]).toContain(r.status);
    expect(await boxViews('doomed')).toBe(false);
  });
});

describe('providers', () => {
  const prov = (p: string) => `${box('pbox')}/version/1.0.0/provider/${p}`;
  const createProvider = (name: string, url: string) => api().post(`${box('pbox')}/version/1.0.0/providers`).set(auth(alice)).send({ provider: { name, url } });

  beforeAll(async () => {
    await create('pbox').expect(201);
    await api().post(`${box('pbox')}/versions`).set(auth(alice)).send({ version: { version: '1.0.0' } }).expect(201);
  });

  it('8 identical and 8 different creates of one provider: one 201, seven 422', async () => {
    const same = await Promise.all(times(() => createProvider('virtualbox', 'https://example.com/v.box')));
    no5xx(same);
    expect(sorted(same)).toEqual([201, ...times(() => 422).slice(1)]);
    expectErrors(same.filter((r) => r.status !== 201), 422, /Provider has already been taken/);
    const diff = await Promise.all(times((i) => createProvider('libvirt', `https://example.com/${i}.box`)));
    no5xx(diff);
    expect(sorted(diff)).toEqual([201, ...times(() => 422).slice(1)]);
    const winner = diff.findIndex((r) => r.status === 201);
    expect((await api().get(prov('libvirt')).set(auth(alice)).expect(200)).body.original_url).toBe(`https://example.com/${winner}.box`);
    expect(await h.prisma.boxProvider.count({ where: { name: 'libvirt' } })).toBe(1);
  });

  it('8 different updates of one provider: all 200, one stored', async () => {
    const rs = await Promise.all(
      times((i) => api().put(prov('virtualbox')).set(auth(alice)).send({ provider: { url: `https://example.com/u${i}.box`, checksum_type: 'sha1', checksum: String(i).repeat(40) } })),
    );
    no5xx(rs);
    expect(sorted(rs)).toEqual(times(() => 200));
    const got = await api().get(prov('virtualbox')).set(auth(alice)).expect(200);
    const i = Number(/u(\d)\.box$/.exec(got.body.original_url as string)?.[1]);
    expect(got.body).toMatchObject({ original_url: `https://example.com/u${i}.box`, checksum: String(i).repeat(40), checksum_type: 'sha1' });
  });

  it('8 creates and 8 deletes of one provider interleaved: provider, version and rows agree', async () => {
    const rs = await interleave(
      (i) => createProvider('flap', `https://example.com/f${i}.box`),
      () => api().delete(prov('flap')).set(auth(alice)),
    );
    no5xx(rs);
    for (const r of rs) expect(methodOf(r) === 'POST' ? [201, 422] : [200, 404]).toContain(r.status);
    const one = (await api().get(prov('flap')).set(auth(alice))).status;
    const listed = ((await api().get(`${box('pbox')}/version/1.0.0`).set(auth(alice))).body.providers as { name: string }[]).some((p) => p.name === 'flap');
    const rows = await h.prisma.boxProvider.count({ where: { name: 'flap' } });
    expect([one, listed, rows]).toEqual(one === 200 ? [200, true, 1] : [404, false, 0]);
  });

  it('8 updates and 8 deletes of one provider interleaved: 200 or 404, never a 5xx', async () => {
    await createProvider('updel', 'https://example.com/x.box').expect(201);
    const rs = await interleave(
      (i) => api().put(prov('updel')).set(auth(alice)).send({ provider: { url: `https://example.com/y${i}.box` } }),
      () => api().delete(prov('updel')).set(auth(alice)),
    );
    no5xx(rs);
    for (const r of rs) expect([200, 404]).toContain(r.status);
    expect(rs.filter((r) => methodOf(r) === 'DELETE' && r.status === 200)).toHaveLength(1);
    expect((await api().get(prov('updel')).set(auth(alice))).status).toBe(404);
  });

  it('8 provider creates racing the deletion of their version: 201/404, never a 5xx', async () => {
    await api().post(`${box('pbox')}/versions`).set(auth(alice)).send({ version: { version: '9.0.0' } }).expect(201);
    const rs = await interleave(
      (i) => api().post(`${box('pbox')}/version/9.0.0/providers`).set(auth(alice)).send({ provider: { name: `p${i}`, url: 'https://example.com/z.box' } }),
      () => api().delete(`${box('pbox')}/version/9.0.0`).set(auth(alice)),
    );
    no5xx(rs);
    for (const r of rs) expect(methodOf(r) === 'POST' ? [201, 404] : [200, 404]).toContain(r.status);
    expect((await api().get(`${box('pbox')}/version/9.0.0`).set(auth(alice))).status).toBe(404);
  });
});
