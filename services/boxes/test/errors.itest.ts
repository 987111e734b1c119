// 500s say "internal error" plus the request id and nothing else (shared ARCHITECTURE
// "Errors"); ?help=1 describes a path from its PathSpec.
import { Readable } from 'node:stream';
import request from 'supertest';
import type { BlobStore } from '@selfstack/blob';
import { auth, createHarness, userWithToken, type Harness } from './harness';

let h: Harness;
let token = '';

// A store whose writes fail the way a full disk or an unreachable S3 would.
const brokenStore: BlobStore = {
  async put(_key: string, body: Readable) {
    body.resume();
    throw new Error('ENOSPC: no space left on device, secret path /srv/blobs');
  },
  get: async () => null,
  stat: async () => null,
  delete: async () => undefined,
};

beforeAll(async () => {
  h = await createHarness({}, { blobs: brokenStore });
  token = await userWithToken(h, 'ivy');
  await request(h.app).post('/api/v1/boxes').set(auth(token)).send({ box: { name: 'b', is_private: false } }).expect(201);
  await request(h.app).post('/api/v1/box/ivy/b/versions').set(auth(token)).send({ version: { version: '1' } }).expect(201);
  await request(h.app).post('/api/v1/box/ivy/b/version/1/providers').set(auth(token)).send({ provider: { name: 'vb' } }).expect(201);
});
afterAll(async () => {
  await h.close();
});

it('a storage failure is a 500 with the request id and no internal detail; the upload can be retried', async () => {
  const url = new URL((await request(h.app).get('/api/v1/box/ivy/b/version/1/provider/vb/upload').set(auth(token)).expect(200)).body.upload_path as string).pathname;
  const res = await request(h.app).put(url).set('X-Request-Id', 'req-123').send(Buffer.from('bytes'));
  expect(res.status).toBe(500);
  expect(res.headers['x-request-id']).toBe('req-123');
  expect(res.body).toEqual({ errors: ['internal error (request id req-123)'], success: false });
  expect(JSON.stringify(res.body)).not.toContain('ENOSPC');
  const upload = await h.prisma.boxUpload.findFirstOrThrow({ where: { provider: { name: 'vb' } } });
  expect(upload.status).toBe('failed');
  const provider = await request(h.app).get('/api/v1/box/ivy/b/version/1/provider/vb');
  expect(provider.body.hosted).toBe(false);
  // A failed URL may be used again (not "already used"): the store is still broken -> 500.
  expect((await request(h.app).put(url).send(Buffer.from('bytes'))).status).toBe(500);
});

it('?help=1 documents a path from its declaration', async () => {
  const res = await request(h.app).get('/api/v1/box/ivy/b/version/1?help=1');
  expect(res.status).toBe(200);
  expect(res.headers['content-type']).toBe('application/json');
  expect(res.body.help).toMatch(/Read, update or delete a version/);
  expect(res.body.openapi.openapi).toMatch(/^3\./);
});
