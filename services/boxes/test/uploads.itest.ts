// Uploads, downloads and the catalog (spec "Upload rules"; reference A.5, A.6): signed
// short-lived URLs, streaming with checksums, checksum mismatch, the direct callback,
// expiry, Range downloads, download counts, active-only catalog.
import { createHash, randomBytes } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import http from 'node:http';
import request from 'supertest';
import { startTestListener } from '@selfstack/testing';
import { auth, createHarness, userWithToken, type Harness } from './harness';

let h: Harness;
let alice: string;
let bob: string;

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const api = () => request(h.app);
/** supertest needs a path; upload_path is absolute (http://127.0.0.1:port/...). */
const pathOf = (url: string) => new URL(url).pathname + new URL(url).search;

beforeAll(async () => {
  h = await createHarness({ publicUrl: 'http://boxes.test:3100' });
  alice = await userWithToken(h, 'alice');
  bob = await userWithToken(h, 'bob');
  for (const name of ['pub', 'priv']) {
    await api().post('/api/v1/boxes').set(auth(alice)).send({ box: { name, is_private: name === 'priv', short_description: `${name} box` } }).expect(201);
    await api().post(`/api/v1/box/alice/${name}/versions`).set(auth(alice)).send({ version: { version: '1.0.0' } }).expect(201);
    await api().post(`/api/v1/box/alice/${name}/version/1.0.0/providers`).set(auth(alice)).send({ provider: { name: 'virtualbox' } }).expect(201);
  }
});
afterAll(async () => {
  await h.close();
});

function expectBoxesError(res: request.Response, status: number, pattern: RegExp): void {
  expect(res.status).toBe(status);
  expect(res.body).toEqual({ errors: [expect.stringMatching(pattern)], success: false });
}

describe('classic upload', () => {
  const image = randomBytes(300_000);

  it('issues a signed URL on the public base URL, only to managers', async () => {
    const res = await api().get('/api/v1/box/alice/pub/version/1.0.0/provider/virtualbox/upload').set(auth(alice));
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(['upload_path']);
    expect(res.body.upload_path).toMatch(/^http:\/\/boxes\.test:3100\/api\/v1\/uploads\/[\w-]+\.[\w-]+\.[\w-]+$/);
    expectBoxesError(await api().get('/api/v1/box/alice/pub/version/1.0.0/provider/virtualbox/upload').set(auth(bob)), 403, /not allowed/);
    expectBoxesError(await api().get('/api/v1/box/alice/pub/version/1.0.0/provider/virtualbox/upload'), 401, /Authentication required/);
    expectBoxesError(await api().get('/api/v1/box/alice/priv/version/1.0.0/provider/virtualbox/upload').set(auth(bob)), 404, /alice\/priv/);
    expectBoxesError(await api().get('/api/v1/box/alice/pub/version/1.0.0/provider/nope/upload').set(auth(alice)), 404, /provider nope/);
  });

  it('streams the image in, computing checksums; the provider becomes hosted', async () => {
    const { body } = await api().get('/api/v1/box/alice/pub/version/1.0.0/provider/virtualbox/upload').set(auth(alice)).expect(200);
    const put = await api().put(pathOf(body.upload_path)).set('Content-Type', 'application/octet-stream').send(image);
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ success: true, size: image.length, checksums: { sha256: sha256(image), md5: createHash('md5').update(image).digest('hex') } });
    const prov = await api().get('/api/v1/box/alice/pub/version/1.0.0/provider/virtualbox');
    expect(prov.body).toMatchObject({ hosted: true, original_url: null, checksum: sha256(image), checksum_type: 'sha256' });
    expect(prov.body.download_url).toBe('http://boxes.test:3100/alice/boxes/pub/versions/1.0.0/providers/virtualbox.box');
    // The URL is single-use.
    expectBoxesError(await api().put(pathOf(body.upload_path)).send(Buffer.from('again')), 403, /already been used/);
  });

  it('refuses tampered and foreign-signed URLs', async () => {
    const { body } = await api().get('/api/v1/box/alice/pub/version/1.0.0/provider/virtualbox/upload').set(auth(alice)).expect(200);
    const token = pathOf(body.upload_path).split('/').pop() as string;
    const [head, payload] = token.split('.');
    expectBoxesError(await api().put(`/api/v1/uploads/${head}.${payload}.AAAA`).send(Buffer.from('x')), 403, /Invalid upload URL/);
    expectBoxesError(await api().put('/api/v1/uploads/not-a-jwt').send(Buffer.from('x')), 403, /Invalid upload URL/);
  });

  it('refuses an expired URL; asking again yields a new one that works', async () => {
    const first = (await api().get('/api/v1/box/alice/pub/version/1.0.0/provider/virtualbox/upload').set(auth(alice)).expect(200)).body.upload_path as string;
    h.clock.now = new Date(h.clock.now.getTime() + 11 * 60_000);
    try {
      expectBoxesError(await api().put(pathOf(first)).send(Buffer.from('late')), 403, /expired; request a new one/);
      const second = (await api().get('/api/v1/box/alice/pub/version/1.0.0/provider/virtualbox/upload').set(auth(alice)).expect(200)).body.upload_path as string;
      expect(second).not.toBe(first);
      expect((await api().put(pathOf(second)).send(image)).status).toBe(200);
    } finally {
      h.clock.now = new Date();
    }
  });

  it('rejects a checksum mismatch and keeps the previous good file', async () => {
    const declared = 'f'.repeat(64);
    await api().put('/api/v1/box/alice/pub/version/1.0.0/provider/virtualbox').set(auth(alice)).send({ provider: { checksum: declared, checksum_type: 'sha256' } }).expect(200);
    const { body } = await api().get('/api/v1/box/alice/pub/version/1.0.0/provider/virtualbox/upload').set(auth(alice)).expect(200);
    const other = randomBytes(1000);
    expectBoxesError(await api().put(pathOf(body.upload_path)).send(other), 422, /Checksum mismatch.*previous box file is unchanged/);
    const row = await h.prisma.boxProvider.findFirstOrThrow({ where: { name: 'virtualbox', version: { box: { name: 'pub' } } } });
    expect(row.sha256).toBe(sha256(image));
    const stored = await h.blobs.get(row.blobKey as string);
    const chunks: Buffer[] = [];
    for await (const c of stored!.stream) chunks.push(c as Buffer);
    expect(sha256(Buffer.concat(chunks))).toBe(sha256(image));
    // Declaring the right checksum makes the same upload succeed.
    await api().put('/api/v1/box/alice/pub/version/1.0.0/provider/virtualbox').set(auth(alice)).send({ provider: { checksum: sha256(image).toUpperCase(), checksum_type: 'sha256' } }).expect(200);
    const again = (await api().get('/api/v1/box/alice/pub/version/1.0.0/provider/virtualbox/upload').set(auth(alice)).expect(200)).body.upload_path as string;
    expect((await api().put(pathOf(again)).send(image)).status).toBe(200);
    // Replaced images are deleted from the blob store: one object per provider remains.
    const providerDir = path.join(h.blobRoot, 'boxes', row.id);
    expect((await readdir(providerDir)).length).toBe(1);
  });

  it('enforces the upload size limit', async () => {
    const small = await createHarness({ maxUploadBytes: 1000 });
    try {
      const t = await userWithToken(small, 'carol');
      await request(small.app).post('/api/v1/boxes').set(auth(t)).send({ box: { name: 'b' } }).expect(201);
      await request(small.app).post('/api/v1/box/carol/b/versions').set(auth(t)).send({ version: { version: '1' } }).expect(201);
      await request(small.app).post('/api/v1/box/carol/b/version/1/providers').set(auth(t)).send({ provider: { name: 'vb' } }).expect(201);
      const url = (await request(small.app).get('/api/v1/box/carol/b/version/1/provider/vb/upload').set(auth(t)).expect(200)).body.upload_path as string;
      const res = await request(small.app).put(pathOf(url)).send(randomBytes(5000));
      expectBoxesError(res, 413, /larger than the limit of 1000 bytes/);
      const url2 = (await request(small.app).get('/api/v1/box/carol/b/version/1/provider/vb/upload').set(auth(t)).expect(200)).body.upload_path as string;
      // Chunked (no Content-Length): counted while streaming.
      const listener = await startTestListener(small.app);
      try {
        const status = await new Promise<number>((resolve, reject) => {
          const req = http.request(`${listener.url}${pathOf(url2)}`, { method: 'PUT', headers: { 'Content-Type': 'application/octet-stream' } }, (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          });
          req.on('error', reject);
          for (let i = 0; i < 5; i++) req.write(randomBytes(1000));
          req.end();
        });
        expect(status).toBe(413);
      } finally {
        await listener.close();
      }
      const prov = await request(small.app).get('/api/v1/box/carol/b/version/1/provider/vb').set(auth(t));
      expect(prov.body.hosted).toBe(false);
    } finally {
      await small.close();
    }
  });
});

describe('direct upload', () => {
  const image = randomBytes(50_000);

  it('receives the bytes, then the authenticated callback finalizes', async () => {
    const res = await api().get('/api/v1/box/alice/priv/version/1.0.0/provider/virtualbox/upload/direct').set(auth(alice));
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['callback', 'upload_path']);
    const callbackPath = pathOf(res.body.callback);
    expect(callbackPath).toMatch(/^\/api\/v1\/box\/alice\/priv\/version\/1\.0\.0\/provider\/virtualbox\/upload\/direct\/[0-9a-f-]{36}$/);
    // Callback before the bytes arrived.
    expectBoxesError(await api().put(callbackPath).set(auth(alice)), 422, /No completed upload/);
    expect((await api().put(pathOf(res.body.upload_path)).send(image)).status).toBe(200);
    // Not yet visible: the provider is hosted only after the callback.
    expect((await api().get('/api/v1/box/alice/priv/version/1.0.0/provider/virtualbox').set(auth(alice))).body.hosted).toBe(false);
    expectBoxesError(await api().put(callbackPath), 401, /Authentication required/);
    expectBoxesError(await api().put(callbackPath).set(auth(bob)), 404, /alice\/priv/);
    const done = await api().put(callbackPath).set(auth(alice)).send('');
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({ name: 'virtualbox', hosted: true, checksum: sha256(image), checksum_type: 'sha256' });
    // Idempotent.
    expect((await api().put(callbackPath).set(auth(alice))).status).toBe(200);
    expectBoxesError(await api().put('/api/v1/box/alice/priv/version/1.0.0/provider/virtualbox/upload/direct/00000000-0000-0000-0000-000000000000').set(auth(alice)), 404, /direct upload/);
  });
});

describe('downloads and catalog', () => {
  beforeAll(async () => {
    await api().put('/api/v1/box/alice/pub/version/1.0.0/release').set(auth(alice)).expect(200);
    await api().post('/api/v1/box/alice/pub/versions').set(auth(alice)).send({ version: { version: '2.0.0' } }).expect(201);
    await api().post('/api/v1/box/alice/pub/version/2.0.0/providers').set(auth(alice)).send({ provider: { name: 'libvirt', url: 'https://mirror.example.com/b.box' } }).expect(201);
  });

  it('serves the catalog on HEAD and GET with application/json, active versions only', async () => {
    const head = await api().head('/alice/pub');
    expect(head.status).toBe(200);
    expect(head.headers['content-type']).toBe('application/json');
    const res = await api().get('/alice/pub').set('Accept', 'application/json');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/json');
    const prov = await h.prisma.boxProvider.findFirstOrThrow({ where: { name: 'virtualbox', version: { box: { name: 'pub' } } } });
    expect(res.body).toEqual({
      name: 'alice/pub',
      description: 'pub box',
      short_description: 'pub box',
      versions: [
        {
          version: '1.0.0', status: 'active', description_html: '', description_markdown: '',
          providers: [{ name: 'virtualbox', url: 'http://boxes.test:3100/alice/boxes/pub/versions/1.0.0/providers/virtualbox.box', checksum: prov.checksum, checksum_type: 'sha256' }],
        },
      ],
    });
    await api().put('/api/v1/box/alice/pub/version/2.0.0/release').set(auth(alice)).expect(200);
    const after = await api().get('/alice/pub');
    expect(after.body.versions.map((v: { version: string }) => v.version)).toEqual(['2.0.0', '1.0.0']);
    await api().put('/api/v1/box/alice/pub/version/2.0.0/revoke').set(auth(alice)).expect(200);
    expect((await api().get('/alice/pub')).body.versions.map((v: { version: string }) => v.version)).toEqual(['1.0.0']);
  });

  it('hides private catalogs and missing boxes (404), serves private ones to the owner by Bearer or access_token', async () => {
    expectBoxesError(await api().get('/alice/priv'), 404, /alice\/priv/);
    expectBoxesError(await api().get('/alice/priv').set(auth(bob)), 404, /alice\/priv/);
    expectBoxesError(await api().get('/alice/missing'), 404, /alice\/missing/);
    expect((await api().head('/alice/missing')).status).toBe(404);
    expect((await api().get('/alice/priv').set(auth(alice))).status).toBe(200);
    expect((await api().get(`/alice/priv?access_token=${alice}`)).status).toBe(200);
    expect((await api().get('/alice/priv').set('X-Atlas-Token', alice)).status).toBe(200);
    expect((await api().get('/alice/priv').set('X-Legacy-Token', alice)).status).toBe(200);
  });

  it('serves the file with Range support and counts downloads once per fetch', async () => {
    const prov = await h.prisma.boxProvider.findFirstOrThrow({ where: { name: 'virtualbox', version: { box: { name: 'pub' } } } });
    const stored = await h.blobs.get(prov.blobKey as string);
    const chunks: Buffer[] = [];
    for await (const c of stored!.stream) chunks.push(c as Buffer);
    const image = Buffer.concat(chunks);
    const url = '/alice/boxes/pub/versions/1.0.0/providers/virtualbox.box';
    const before = (await api().get('/api/v1/box/alice/pub')).body.downloads as number;

    const full = await api().get(url).buffer(true).parse((res, cb) => {
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('end', () => cb(null, Buffer.concat(parts)));
    });
    expect(full.status).toBe(200);
    expect(full.headers['content-type']).toBe('application/octet-stream');
    expect(full.headers['accept-ranges']).toBe('bytes');
    expect(full.headers['content-length']).toBe(String(image.length));
    expect(full.headers.etag).toBe(`"${sha256(image)}"`);
    expect(sha256(full.body as Buffer)).toBe(sha256(image));

    const part = await api().get(url).set('Range', 'bytes=10-19').buffer(true).parse((res, cb) => {
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('end', () => cb(null, Buffer.concat(parts)));
    });
    expect(part.status).toBe(206);
    expect(part.headers['content-range']).toBe(`bytes 10-19/${image.length}`);
    expect((part.body as Buffer).equals(image.subarray(10, 20))).toBe(true);

    const bad = await api().get(url).set('Range', `bytes=${image.length}-`);
    expect(bad.status).toBe(416);
    expect(bad.headers['content-range']).toBe(`bytes */${image.length}`);

    const head = await api().head(url);
    expect(head.status).toBe(200);
    expect(head.headers['content-length']).toBe(String(image.length));

    // Full GET counts, resumed range (start > 0) and HEAD do not.
    expect((await api().get('/api/v1/box/alice/pub')).body.downloads).toBe(before + 1);
  });

  it('redirects url providers, hides unreleased versions from others, 404s unknown files', async () => {
    await api().put('/api/v1/box/alice/pub/version/2.0.0/release').set(auth(alice)).expect(200);
    const res = await api().get('/alice/boxes/pub/versions/2.0.0/providers/libvirt.box');
    expect(res.status).toBe(302);
    expect(res.headers.location).toBe('https://mirror.example.com/b.box');
    await api().post('/api/v1/box/alice/pub/versions').set(auth(alice)).send({ version: { version: '3.0.0' } }).expect(201);
    await api().post('/api/v1/box/alice/pub/version/3.0.0/providers').set(auth(alice)).send({ provider: { name: 'libvirt', url: 'https://mirror.example.com/c.box' } }).expect(201);
    expectBoxesError(await api().get('/alice/boxes/pub/versions/3.0.0/providers/libvirt.box'), 404, /unreleased/);
    expect((await api().get('/alice/boxes/pub/versions/3.0.0/providers/libvirt.box').set(auth(alice))).status).toBe(302);
    expectBoxesError(await api().get('/alice/boxes/pub/versions/1.0.0/providers/virtualbox.zip'), 404, /virtualbox\.zip/);
    expectBoxesError(await api().get('/alice/boxes/priv/versions/1.0.0/providers/virtualbox.box'), 404, /alice\/priv/);
    // The owner may fetch an unreleased version's file.
    expect((await api().get('/alice/boxes/priv/versions/1.0.0/providers/virtualbox.box').set(auth(alice))).status).toBe(200);
    expectBoxesError(await api().post('/alice/pub').send({}), 405, /unsupported operation/);
  });

  it('deleting a provider removes its stored file', async () => {
    const prov = await h.prisma.boxProvider.findFirstOrThrow({ where: { name: 'virtualbox', version: { box: { name: 'priv' } } } });
    expect(await h.blobs.stat(prov.blobKey as string)).not.toBeNull();
    await api().delete('/api/v1/box/alice/priv/version/1.0.0/provider/virtualbox').set(auth(alice)).expect(200);
    expect(await h.blobs.stat(prov.blobKey as string)).toBeNull();
  });
});
