// Boxes, versions, providers, organizations and search over HTTP (spec "Endpoints",
// "States and transitions", "Errors"; reference A.2-A.4, A.7, A.9 body shapes).
import request from 'supertest';
import { auth, createHarness, userWithToken, type Harness } from './harness';

let h: Harness;
let alice: string;
let bob: string;
let admin: string;

beforeAll(async () => {
  h = await createHarness();
  alice = await userWithToken(h, 'alice');
  bob = await userWithToken(h, 'bob');
  admin = await userWithToken(h, 'root', { admin: true });
  await h.composed.admin.createOrganization({ username: 'acme', owner: 'alice', profile: 'The **acme** org' });
});
afterAll(async () => {
  await h.close();
});

function expectBoxesError(res: request.Response, status: number, pattern: RegExp): void {
  expect(res.status).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  expect(res.body.success).toBe(false);
  expect(Array.isArray(res.body.errors)).toBe(true);
  expect(res.body.errors.join(' ')).toMatch(pattern);
}

const api = () => request(h.app);

describe('boxes', () => {
  it('creates a box from the flat body the vagrant CLI sends, private by default', async () => {
    const res = await api().post('/api/v1/boxes').set(auth(alice)).set('Content-Type', 'application/json')
      .send({ username: 'alice', name: 'flat', short_description: 'sd', description: 'dd' });
    expect(res.status).toBe(201);
    expect(res.headers['content-type']).toBe('application/json');
    expect(res.body).toMatchObject({
      tag: 'alice/flat', name: 'flat', username: 'alice', short_description: 'sd',
      description_markdown: 'dd', description_html: '<p>dd</p>\n', private: true, downloads: 0, current_version: null, versions: [],
    });
    expect(res.body.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it('creates a box from the documented wrapped body, defaulting username to the caller', async () => {
    const res = await api().post('/api/v1/boxes').set(auth(alice)).send({ box: { name: 'wrapped', short_description: 'w', is_private: false } });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ tag: 'alice/wrapped', private: false, description_markdown: '', description_html: '' });
  });

  it('lets exactly one of two concurrent creators of the same name win', async () => {
    const [a, b] = await Promise.all([
      api().post('/api/v1/boxes').set(auth(alice)).send({ box: { name: 'race' } }),
      api().post('/api/v1/boxes').set(auth(alice)).send({ box: { name: 'race' } }),
    ]);
    expect([a.status, b.status].sort()).toEqual([201, 422]);
    expectBoxesError(a.status === 422 ? a : b, 422, /already been taken/);
  });

  it('refuses bad input with 403 and the boxes error shape', async () => {
    expectBoxesError(await api().post('/api/v1/boxes').set(auth(alice)).send({ box: { name: '../etc' } }), 403, /"box": name/);
    expectBoxesError(await api().post('/api/v1/boxes').set(auth(alice)).send({ box: { name: 'x', is_private: 'maybe' } }), 403, /is_private/);
    expectBoxesError(await api().post('/api/v1/boxes').set(auth(alice)).send({ short_description: 'no name' }), 403, /name is required/);
    expectBoxesError(await api().post('/api/v1/boxes').set(auth(alice)).send([1, 2]), 403, /expected a JSON object/);
    expectBoxesError(await api().post('/api/v1/boxes').set(auth(alice)).send({ box: { name: 'x'.repeat(101) } }), 403, /"box": name/);
    expectBoxesError(await api().post('/api/v1/boxes').set(auth(alice)).send({ box: { name: 'big', description: 'd'.repeat(70_000) } }), 403, /description/);
  });

  it('answers malformed JSON and oversized bodies with errors, not a crash', async () => {
    const bad = await api().post('/api/v1/boxes').set(auth(alice)).set('Content-Type', 'application/json').send('{"box": {"name": ');
    expectBoxesError(bad, 400, /failed to parse JSON/);
    const huge = await api().post('/api/v1/boxes').set(auth(alice)).set('Content-Type', 'application/json').send(`{"box":{"name":"h","description":"${'x'.repeat(33 * 1024 * 1024)}"}}`);
    expectBoxesError(huge, 413, /too large/);
  });

  it('ignores unknown fields', async () => {
    const res = await api().post('/api/v1/boxes').set(auth(alice)).send({ box: { name: 'unknowns', color: 'red' }, extra: 1 });
    expect(res.status).toBe(201);
    expect(res.body).not.toHaveProperty('color');
  });

  it('requires a valid token to create (401) and ownership or membership (403)', async () => {
    expectBoxesError(await api().post('/api/v1/boxes').send({ box: { name: 'anon' } }), 401, /Authentication required/);
    expectBoxesError(await api().post('/api/v1/boxes').set(auth('nope.atlasv1.nope')).send({ box: { name: 'anon' } }), 401, /Invalid token/);
    expectBoxesError(await api().post('/api/v1/boxes').set(auth(bob)).send({ box: { username: 'alice', name: 'intruder' } }), 403, /not allowed/);
    expectBoxesError(await api().post('/api/v1/boxes').set(auth(bob)).send({ box: { username: 'ghost', name: 'x' } }), 404, /user ghost/);
  });

  it('lets organization members and admins manage organization boxes', async () => {
    const res = await api().post('/api/v1/boxes').set(auth(alice)).send({ username: 'acme', name: 'orgbox', is_private: true });
    expect(res.status).toBe(201);
    expect(res.body.tag).toBe('acme/orgbox');
    expectBoxesError(await api().put('/api/v1/box/acme/orgbox').set(auth(bob)).send({ short_description: 'x' }), 404, /acme\/orgbox/);
    const byAdmin = await api().put('/api/v1/box/acme/orgbox').set(auth(admin)).send({ short_description: 'by admin' });
    expect(byAdmin.status).toBe(200);
    expect(byAdmin.body.short_description).toBe('by admin');
  });

  it('hides private boxes from others (404) and shows public ones (read-only, 403 on write)', async () => {
    expectBoxesError(await api().get('/api/v1/box/alice/flat'), 404, /alice\/flat/);
    expectBoxesError(await api().get('/api/v1/box/alice/flat').set(auth(bob)), 404, /alice\/flat/);
    expect((await api().get('/api/v1/box/alice/flat').set(auth(alice))).status).toBe(200);
    expect((await api().get('/api/v1/box/alice/flat').set(auth(admin))).status).toBe(200);
    const pub = await api().get('/api/v1/box/alice/wrapped');
    expect(pub.status).toBe(200);
    expect(pub.body.versions).toEqual([]);
    expectBoxesError(await api().put('/api/v1/box/alice/wrapped').set(auth(bob)).send({ short_description: 'mine' }), 403, /not allowed/);
    expectBoxesError(await api().delete('/api/v1/box/alice/wrapped').set(auth(bob)), 403, /not allowed/);
    expectBoxesError(await api().delete('/api/v1/box/alice/wrapped'), 401, /Authentication required/);
  });

  it('updates a box with the CLI body (nulls mean unchanged) and renames it', async () => {
    const res = await api().put('/api/v1/box/alice/wrapped').set(auth(alice)).send({ short_description: 'new', description: null, is_private: false });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ short_description: 'new', description_markdown: '', private: false });
    const renamed = await api().put('/api/v1/box/alice/unknowns').set(auth(alice)).send({ box: { name: 'renamed', description: '# Hi' } });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ tag: 'alice/renamed', description_html: '<h1>Hi</h1>\n' });
    expect((await api().get('/api/v1/box/alice/unknowns').set(auth(alice))).status).toBe(404);
    expectBoxesError(await api().put('/api/v1/box/alice/renamed').set(auth(alice)).send({ name: 'flat' }), 422, /already been taken/);
    expectBoxesError(await api().put('/api/v1/box/alice/renamed').set(auth(alice)).send({ name: 'a/b' }), 403, /name/);
    expectBoxesError(await api().put('/api/v1/box/alice/renamed').set(auth(alice)).send({ username: 'bob' }), 403, /cannot be moved/);
  });

  it('deletes a box and answers with it', async () => {
    await api().post('/api/v1/boxes').set(auth(alice)).send({ box: { name: 'doomed', is_private: false } }).expect(201);
    const res = await api().delete('/api/v1/box/alice/doomed').set(auth(alice));
    expect(res.status).toBe(200);
    expect(res.body.tag).toBe('alice/doomed');
    expectBoxesError(await api().get('/api/v1/box/alice/doomed'), 404, /alice\/doomed/);
    expectBoxesError(await api().delete('/api/v1/box/alice/doomed').set(auth(alice)), 404, /alice\/doomed/);
  });
});

describe('versions and providers', () => {
  beforeAll(async () => {
    await api().post('/api/v1/boxes').set(auth(alice)).send({ box: { name: 'vbox', is_private: false, short_description: 'versioned' } }).expect(201);
  });

  it('creates versions (wrapped body), unreleased, rejecting bad and duplicate numbers', async () => {
    const res = await api().post('/api/v1/box/alice/vbox/versions').set(auth(alice)).send({ version: { version: '1.0.0', description: 'first' } });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      version: '1.0.0', number: '1.0.0', status: 'unreleased', description_markdown: 'first', description_html: '<p>first</p>\n', providers: [],
    });
    expect(res.body.release_url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api\/v1\/box\/alice\/vbox\/version\/1\.0\.0\/release$/);
    expect(res.body.revoke_url).toMatch(/\/api\/v1\/box\/alice\/vbox\/version\/1\.0\.0\/revoke$/);
    expectBoxesError(await api().post('/api/v1/box/alice/vbox/versions').set(auth(alice)).send({ version: { version: '1.0.0' } }), 422, /already been taken/);
    expectBoxesError(await api().post('/api/v1/box/alice/vbox/versions').set(auth(alice)).send({ version: { version: 'v1' } }), 403, /"version": version/);
    expectBoxesError(await api().post('/api/v1/box/alice/vbox/versions').set(auth(alice)).send({ version: {} }), 403, /version number is required/);
    expectBoxesError(await api().post('/api/v1/box/alice/vbox/versions').set(auth(bob)).send({ version: { version: '9' } }), 403, /not allowed/);
    expectBoxesError(await api().post('/api/v1/box/alice/missing/versions').set(auth(alice)).send({ version: { version: '9' } }), 404, /alice\/missing/);
  });

  it('refuses to release without a usable provider, then releases (active) and revokes', async () => {
    expectBoxesError(await api().put('/api/v1/box/alice/vbox/version/1.0.0/release').set(auth(alice)), 422, /valid provider/);
    // A provider without url and without an upload is not usable yet.
    await api().post('/api/v1/box/alice/vbox/version/1.0.0/providers').set(auth(alice)).send({ provider: { name: 'libvirt' } }).expect(201);
    expectBoxesError(await api().put('/api/v1/box/alice/vbox/version/1.0.0/release').set(auth(alice)), 422, /valid provider/);
    const prov = await api().post('/api/v1/box/alice/vbox/version/1.0.0/providers').set(auth(alice))
      .send({ provider: { name: 'virtualbox', url: 'https://example.com/vb.box', checksum: 'A59E7332E8BBE896F11F478FC61FA8A6', checksum_type: 'md5' } });
    expect(prov.status).toBe(201);
    expect(prov.body).toMatchObject({
      name: 'virtualbox', hosted: false, hosted_token: null, original_url: 'https://example.com/vb.box',
      checksum: 'a59e7332e8bbe896f11f478fc61fa8a6', checksum_type: 'md5',
    });
    expect(prov.body.download_url).toMatch(/\/alice\/boxes\/vbox\/versions\/1\.0\.0\/providers\/virtualbox\.box$/);
    const rel = await api().put('/api/v1/box/alice/vbox/version/1.0.0/release').set(auth(alice));
    expect(rel.status).toBe(200);
    expect(rel.body.status).toBe('active');
    expect(rel.body.providers.map((p: { name: string }) => p.name)).toEqual(['libvirt', 'virtualbox']);
    expectBoxesError(await api().put('/api/v1/box/alice/vbox/version/1.0.0/release').set(auth(alice)), 422, /already released/);
    const box = await api().get('/api/v1/box/alice/vbox');
    expect(box.body.current_version.version).toBe('1.0.0');

    await api().post('/api/v1/box/alice/vbox/versions').set(auth(alice)).send({ version: { version: '0.9' } }).expect(201);
    expectBoxesError(await api().put('/api/v1/box/alice/vbox/version/0.9/revoke').set(auth(alice)), 422, /Only an active version/);
    const rev = await api().put('/api/v1/box/alice/vbox/version/1.0.0/revoke').set(auth(alice));
    expect(rev.status).toBe(200);
    expect(rev.body.status).toBe('revoked');
    expect((await api().get('/api/v1/box/alice/vbox')).body.current_version).toBeNull();
    expectBoxesError(await api().put('/api/v1/box/alice/vbox/version/1.0.0/revoke').set(auth(alice)), 422, /Only an active version/);
    // A revoked version can be released again.
    expect((await api().put('/api/v1/box/alice/vbox/version/1.0.0/release').set(auth(alice))).body.status).toBe('active');
  });

  it('validates providers: names, urls and checksum pairs', async () => {
    const url = '/api/v1/box/alice/vbox/version/0.9/providers';
    expectBoxesError(await api().post(url).set(auth(alice)).send({ provider: { name: 'vmware', url: 'ftp://x/y.box' } }), 403, /http or https/);
    expectBoxesError(await api().post(url).set(auth(alice)).send({ provider: { name: 'vmware', checksum: 'abc', checksum_type: 'sha256' } }), 403, /not a valid sha256/);
    expectBoxesError(await api().post(url).set(auth(alice)).send({ provider: { name: 'vmware', checksum: 'a'.repeat(64) } }), 403, /without checksum_type/);
    expectBoxesError(await api().post(url).set(auth(alice)).send({ provider: { name: 'vmware', checksum: 'a'.repeat(64), checksum_type: 'crc32' } }), 403, /checksum_type/);
    expectBoxesError(await api().post(url).set(auth(alice)).send({ provider: { name: 'vm ware' } }), 403, /"provider": name/);
    expectBoxesError(await api().post(url).set(auth(alice)).send({ provider: {} }), 403, /provider name is required/);
    for (const type of ['md5', 'sha1', 'sha256', 'sha384', 'sha512'] as const) {
      const len = { md5: 32, sha1: 40, sha256: 64, sha384: 96, sha512: 128 }[type];
      const res = await api().post(url).set(auth(alice)).send({ provider: { name: `p-${type}`, url: 'http://example.com/a.box', checksum: 'b'.repeat(len), checksum_type: type } });
      expect(res.status).toBe(201);
      expect(res.body.checksum_type).toBe(type);
    }
    expectBoxesError(await api().post(url).set(auth(alice)).send({ provider: { name: 'p-md5' } }), 422, /already has p-md5/);
  });

  it('reads, updates (CLI body with null checksums clears them) and deletes providers', async () => {
    const base = '/api/v1/box/alice/vbox/version/0.9/provider/p-sha1';
    const read = await api().get(base);
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ name: 'p-sha1', checksum_type: 'sha1' });
    const upd = await api().put(base).set(auth(alice)).send({ provider: { name: 'p-sha1', url: 'https://example.com/new.box', checksum: null, checksum_type: null } });
    expect(upd.status).toBe(200);
    expect(upd.body).toMatchObject({ original_url: 'https://example.com/new.box', checksum: null, checksum_type: null });
    const renamed = await api().put(base).set(auth(alice)).send({ provider: { name: 'qemu' } });
    expect(renamed.body.name).toBe('qemu');
    expectBoxesError(await api().get(base), 404, /provider p-sha1/);
    const del = await api().delete('/api/v1/box/alice/vbox/version/0.9/provider/qemu').set(auth(alice));
    expect(del.status).toBe(200);
    expect(del.body.name).toBe('qemu');
    expectBoxesError(await api().delete('/api/v1/box/alice/vbox/version/0.9/provider/qemu').set(auth(alice)), 404, /provider qemu/);
  });

  it('reads, updates and deletes versions', async () => {
    const read = await api().get('/api/v1/box/alice/vbox/version/0.9');
    expect(read.status).toBe(200);
    expect(read.body.version).toBe('0.9');
    const upd = await api().put('/api/v1/box/alice/vbox/version/0.9').set(auth(alice)).send({ version: { version: '0.9.1', description: 'x' } });
    expect(upd.status).toBe(200);
    expect(upd.body).toMatchObject({ version: '0.9.1', description_html: '<p>x</p>\n' });
    expectBoxesError(await api().put('/api/v1/box/alice/vbox/version/0.9.1').set(auth(alice)).send({ version: { version: '1.0.0' } }), 422, /already been taken/);
    const del = await api().delete('/api/v1/box/alice/vbox/version/0.9.1').set(auth(alice));
    expect(del.status).toBe(200);
    expect(del.body.version).toBe('0.9.1');
    expectBoxesError(await api().get('/api/v1/box/alice/vbox/version/0.9.1'), 404, /version 0\.9\.1/);
  });

  it('answers unknown API paths and methods in the boxes error shape', async () => {
    expectBoxesError(await api().get('/api/v1/nope'), 404, /not found/i);
    expectBoxesError(await api().get('/api/v1/box/alice/vbox/version/1.0.0/provider/virtualbox/extra/deep'), 404, /not found/i);
    const res = await api().patch('/api/v1/box/alice/vbox').set(auth(alice)).send({});
    expectBoxesError(res, 405, /unsupported operation/);
    expect(res.headers.allow).toContain('GET');
    expectBoxesError(await api().get('/api/v1/box/alice/%2e%2e%2f%2e%2e%2fetc'), 404, /not found/i);
    expectBoxesError(await api().get('/api/v1/box/alice/%E0%A4%A'), 400, /invalid URL escape/);
  });
});

describe('organizations and search', () => {
  beforeAll(async () => {
    const mk = async (token: string, username: string, name: string, opts: { priv?: boolean; sd?: string; provider?: string; release?: boolean } = {}) => {
      await api().post('/api/v1/boxes').set(auth(token)).send({ box: { username, name, is_private: opts.priv ?? false, short_description: opts.sd ?? '' } }).expect(201);
      await api().post(`/api/v1/box/${username}/${name}/versions`).set(auth(token)).send({ version: { version: '1.0.0' } }).expect(201);
      await api().post(`/api/v1/box/${username}/${name}/version/1.0.0/providers`).set(auth(token)).send({ provider: { name: opts.provider ?? 'virtualbox', url: 'https://example.com/x.box' } }).expect(201);
      if (opts.release !== false) await api().put(`/api/v1/box/${username}/${name}/version/1.0.0/release`).set(auth(token)).expect(200);
    };
    await mk(bob, 'bob', 'ubuntu-jammy', { sd: 'Ubuntu 22.04 LTS server' });
    await mk(bob, 'bob', 'debian-bookworm', { sd: 'Debian 12', provider: 'libvirt' });
    await mk(bob, 'bob', 'secret-ubuntu', { priv: true, sd: 'private ubuntu' });
    await mk(bob, 'bob', 'draft-ubuntu', { sd: 'never released ubuntu', release: false });
    await mk(alice, 'acme', 'ubuntu-acme', { priv: true, sd: 'acme internal ubuntu' });
    await h.prisma.box.updateMany({ where: { name: 'debian-bookworm' }, data: { downloads: 50 } });
    await h.prisma.box.updateMany({ where: { name: 'ubuntu-jammy' }, data: { downloads: 10 } });
  });

  it('GET /user/:username lists boxes, private ones only to members', async () => {
    const pub = await api().get('/api/v1/user/bob');
    expect(pub.status).toBe(200);
    expect(pub.body).toMatchObject({ username: 'bob', avatar_url: '', profile_markdown: '', profile_html: '' });
    expect(pub.body.boxes.map((b: { name: string }) => b.name).sort()).toEqual(['debian-bookworm', 'draft-ubuntu', 'ubuntu-jammy']);
    const own = await api().get('/api/v1/user/bob').set(auth(bob));
    expect(own.body.boxes.map((b: { name: string }) => b.name)).toContain('secret-ubuntu');
    const org = await api().get('/api/v1/user/acme').set(auth(alice));
    expect(org.body).toMatchObject({ username: 'acme', profile_html: '<p>The <strong>acme</strong> org</p>\n' });
    expect(org.body.boxes.map((b: { name: string }) => b.name)).toEqual(['orgbox', 'ubuntu-acme']);
    expect((await api().get('/api/v1/user/acme').set(auth(bob))).body.boxes).toEqual([]);
    expectBoxesError(await api().get('/api/v1/user/nobody'), 404, /user nobody/);
  });

  it('searches username, name and short description; only released boxes; private ones never leak', async () => {
    const res = await api().get('/api/v1/search?q=ubuntu');
    expect(res.status).toBe(200);
    expect(res.body.boxes.map((b: { tag: string }) => b.tag)).toEqual(['bob/ubuntu-jammy']);
    for (const b of res.body.boxes) expect(b.current_version).not.toBeNull();
    const asBob = await api().get('/api/v1/search?q=ubuntu').set(auth(bob));
    expect(asBob.body.boxes.map((b: { tag: string }) => b.tag).sort()).toEqual(['bob/secret-ubuntu', 'bob/ubuntu-jammy']);
    const asAlice = await api().get('/api/v1/search?q=UBUNTU').set(auth(alice));
    expect(asAlice.body.boxes.map((b: { tag: string }) => b.tag).sort()).toEqual(['acme/ubuntu-acme', 'bob/ubuntu-jammy']);
    expect((await api().get('/api/v1/search?q=22.04 LTS')).body.boxes.map((b: { tag: string }) => b.tag)).toEqual(['bob/ubuntu-jammy']);
    expect((await api().get('/api/v1/search?q=bob')).body.boxes.length).toBe(2);
    // LIKE wildcards in q are literal.
    expect((await api().get('/api/v1/search?q=%25')).body.boxes).toEqual([]);
    expect((await api().get('/api/v1/search?q=_')).body.boxes).toEqual([]);
  });

  it('filters by provider, sorts, orders and pages', async () => {
    expect((await api().get('/api/v1/search?provider=libvirt')).body.boxes.map((b: { tag: string }) => b.tag)).toEqual(['bob/debian-bookworm']);
    const byDownloads = (await api().get('/api/v1/search')).body.boxes.map((b: { tag: string }) => b.tag);
    expect(byDownloads.slice(0, 2)).toEqual(['bob/debian-bookworm', 'bob/ubuntu-jammy']);
    const asc = (await api().get('/api/v1/search?order=asc&sort=downloads')).body.boxes.map((b: { tag: string }) => b.tag);
    expect(asc[asc.length - 1]).toBe('bob/debian-bookworm');
    const created = (await api().get('/api/v1/search?sort=created&order=asc&q=bob')).body.boxes.map((b: { tag: string }) => b.tag);
    expect(created).toEqual(['bob/ubuntu-jammy', 'bob/debian-bookworm']);
    const p1 = await api().get('/api/v1/search?q=bob&limit=1&page=1');
    const p2 = await api().get('/api/v1/search?q=bob&limit=1&page=2');
    const p3 = await api().get('/api/v1/search?q=bob&limit=1&page=3');
    expect([p1.body.boxes[0].tag, p2.body.boxes[0].tag]).toEqual(['bob/debian-bookworm', 'bob/ubuntu-jammy']);
    expect(p3.body.boxes).toEqual([]);
    expect((await api().get('/api/v1/search?limit=1000')).status).toBe(200);
    expectBoxesError(await api().get('/api/v1/search?sort=name'), 403, /sort/);
    expectBoxesError(await api().get('/api/v1/search?limit=0'), 403, /limit/);
    expectBoxesError(await api().get('/api/v1/search?page=abc'), 403, /page/);
  });

  it('includes the fields the CLI renders for search hits', async () => {
    const [hit] = (await api().get('/api/v1/search?q=jammy')).body.boxes;
    expect(hit).toMatchObject({ tag: 'bob/ubuntu-jammy', downloads: 10, current_version: { version: '1.0.0', providers: [{ name: 'virtualbox' }] } });
    expect(hit).not.toHaveProperty('versions');
  });
});
