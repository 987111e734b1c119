// The box reads' held documents (box-reads.store.ts): an unchanged box is answered from the
// record already held (PostgreSQL confirms its version), and any change to a row the
// document is built from (the box, its owner, a version, a provider; through the API or
// straight in the database) is seen by the next read: the catalog, the box route and
// search never answer what was current before an acknowledged write.
import request from 'supertest';
import { createBoxReads } from '../src/features/boxes/box-reads.store';
import { auth, createHarness, userWithToken, type Harness } from './harness';

let h: Harness;
let alice = '';
const api = () => request(h.app);

beforeAll(async () => {
  h = await createHarness();
  alice = await userWithToken(h, 'alice');
  const box = await api().post('/api/v1/boxes').set(auth(alice)).send({ box: { name: 'held', short_description: 'first words', is_private: false } });
  expect(box.status).toBe(201);
  expect((await api().post('/api/v1/box/alice/held/versions').set(auth(alice)).send({ version: { version: '1.0.0' } })).status).toBe(201);
  const prov = await api().post('/api/v1/box/alice/held/version/1.0.0/providers').set(auth(alice)).send({ provider: { name: 'virtualbox', url: 'https://example.com/a.box' } });
  expect(prov.status).toBe(201);
  expect((await api().put('/api/v1/box/alice/held/version/1.0.0/release').set(auth(alice))).status).toBe(200);
});
afterAll(async () => {
  await h.close();
});

const catalog = async () => {
  const res = await api().get('/alice/held').set('Accept', 'application/json');
  expect(res.status).toBe(200);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  expect(Number(res.headers['content-length'])).toBe(Buffer.byteLength(res.text));
  return res.body as { short_description: string; versions: { version: string; providers: { name: string; checksum: string | null }[] }[] };
};
const search = async (q: string) => {
  const res = await api().get(`/api/v1/search?q=${encodeURIComponent(q)}`);
  expect(res.status).toBe(200);
  return (res.body as { boxes: { tag: string; short_description: string; downloads: number; current_version: { version: string } | null }[] }).boxes;
};

describe('box reads: held documents', () => {
  it('answers the same record while the box is unchanged, a new one after a change', async () => {
    const reads = createBoxReads(h.readPool);
    const first = await reads.findBox('alice', 'held');
    expect(first?.name).toBe('held');
    expect(await reads.findBox('alice', 'held')).toBe(first);
    const hits = await reads.search({ q: 'held', sort: 'downloads', order: 'desc', limit: 10, page: 1 }, { ownerIds: [] });
    expect(hits.map((b) => b.name)).toEqual(['held']);
    const again = await reads.search({ q: 'held', sort: 'downloads', order: 'desc', limit: 10, page: 1 }, { ownerIds: [] });
    expect(again).toBe(hits);

    await h.prisma.box.updateMany({ where: { name: 'held' }, data: { downloads: 7 } });
    const changed = await reads.findBox('alice', 'held');
    expect(changed).not.toBe(first);
    expect(changed?.downloads).toBe(7);
    const searched = await reads.search({ q: 'held', sort: 'downloads', order: 'desc', limit: 10, page: 1 }, { ownerIds: [] });
    expect(searched[0]?.downloads).toBe(7);
    expect(await reads.findBox('alice', 'missing')).toBeNull();
  });

  it('runs a held search again after any committed write, also one to a box it did not answer', async () => {
    const reads = createBoxReads(h.readPool);
    const params = { q: 'held', sort: 'downloads', order: 'desc', limit: 10, page: 1 } as const;
    const before = await reads.search(params, { ownerIds: [] });
    expect(await reads.search(params, { ownerIds: [] })).toBe(before);
    // A new matching box: it is in no held answer, only the change log tells.
    await h.prisma.$executeRawUnsafe(`INSERT INTO boxes.boxes (id, owner_id, name, is_private, downloads, search_text)
      SELECT 'other-held', id, 'other-held', false, 1000, 'alice other-held' FROM boxes.accounts WHERE username = 'alice'`);
    await h.prisma.$executeRawUnsafe(`INSERT INTO boxes.versions (id, box_id, version, status) VALUES ('other-held-v', 'other-held', '1.0.0', 'active')`);
    const after = await reads.search(params, { ownerIds: [] });
    expect(after.map((b) => b.name)).toEqual(['other-held', ...before.map((b) => b.name)]);
    expect(after[1]).toBe(before[0]);
    // A write that rolled back changes nothing (and leaves no change-log row).
    await expect(h.prisma.$transaction(async (tx) => {
      await tx.box.updateMany({ where: { name: 'other-held' }, data: { downloads: 0 } });
      throw new Error('roll back');
    })).rejects.toThrow('roll back');
    expect(await reads.search(params, { ownerIds: [] })).toBe(after);
    await h.prisma.$executeRawUnsafe(`DELETE FROM boxes.boxes WHERE id = 'other-held'`);
    expect((await reads.search(params, { ownerIds: [] })).map((b) => b.name)).toEqual(before.map((b) => b.name));
  });

  it('sees every change to a row of the document, through the API or in the database', async () => {
    expect((await catalog()).short_description).toBe('first words');
    expect((await search('first words')).map((b) => b.tag)).toEqual(['alice/held']);

    // The box row.
    expect((await api().put('/api/v1/box/alice/held').set(auth(alice)).send({ box: { short_description: 'second words' } })).status).toBe(200);
    expect((await catalog()).short_description).toBe('second words');
    expect(await search('first words')).toEqual([]);
    expect((await search('second words'))[0]?.short_description).toBe('second words');
    expect((await api().get('/api/v1/box/alice/held')).body.short_description).toBe('second words');

    // A provider row, written behind the API's back (no touch of the box row).
    await h.prisma.boxProvider.updateMany({ where: { name: 'virtualbox' }, data: { checksum: 'd41d8cd98f00b204e9800998ecf8427e', checksumType: 'md5' } });
    expect((await catalog()).versions[0]?.providers[0]?.checksum).toBe('d41d8cd98f00b204e9800998ecf8427e');

    // A new version and its provider; then the version row alone (status).
    expect((await api().post('/api/v1/box/alice/held/versions').set(auth(alice)).send({ version: { version: '2.0.0' } })).status).toBe(201);
    expect((await api().post('/api/v1/box/alice/held/version/2.0.0/providers').set(auth(alice)).send({ provider: { name: 'libvirt', url: 'https://example.com/b.box' } })).status).toBe(201);
    expect((await catalog()).versions.map((v) => v.version)).toEqual(['1.0.0']);
    await h.prisma.boxVersion.updateMany({ where: { version: '2.0.0' }, data: { status: 'active' } });
    expect((await catalog()).versions.map((v) => v.version)).toEqual(['2.0.0', '1.0.0']);
    expect((await search('second words'))[0]?.current_version?.version).toBe('2.0.0');

    // A provider deleted (a row fewer).
    expect((await api().delete('/api/v1/box/alice/held/version/2.0.0/provider/libvirt').set(auth(alice))).status).toBe(200);
    expect((await catalog()).versions.find((v) => v.version === '2.0.0')?.providers).toEqual([]);

    // The owner row: a delinquent owner's public box is still read, a private one is 402.
    await h.prisma.boxAccount.updateMany({ where: { username: 'alice' }, data: { billingState: 'delinquent' } });
    expect((await api().put('/api/v1/box/alice/held').set(auth(alice)).send({ box: { short_description: 'x' } })).status).toBe(402);
    await h.prisma.box.updateMany({ where: { name: 'held' }, data: { isPrivate: true } });
    expect((await api().get('/alice/held').set(auth(alice))).status).toBe(402);
    expect((await api().get('/alice/held')).status).toBe(404);
    expect(await search('second words')).toEqual([]);
    await h.prisma.boxAccount.updateMany({ where: { username: 'alice' }, data: { billingState: 'ok' } });
    expect((await api().get('/alice/held').set(auth(alice))).status).toBe(200);

    // Deleted, then a new box under the same name.
    expect((await api().delete('/api/v1/box/alice/held').set(auth(alice))).status).toBe(200);
    expect((await api().get('/alice/held').set(auth(alice))).status).toBe(404);
    expect((await api().post('/api/v1/boxes').set(auth(alice)).send({ box: { name: 'held', short_description: 'reborn', is_private: false } })).status).toBe(201);
    expect((await api().get('/api/v1/box/alice/held')).body).toMatchObject({ short_description: 'reborn', versions: [] });
  });
});
