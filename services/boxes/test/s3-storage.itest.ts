// The service on the S3-compatible blob store (s3rver, a real local S3 server over HTTP):
// upload through a signed URL, download with Range, replace, and concurrent uploads to
// one provider leaving exactly one stored object.
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import S3rver from 's3rver';
import request from 'supertest';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { createS3BlobStore, createS3Client } from '@selfstack/blob';
import { auth, createHarness, userWithToken, type Harness } from './harness';

let server: S3rver;
let dir = '';
let h: Harness;
let token = '';
let client: ReturnType<typeof createS3Client>;
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const pathOf = (url: string) => new URL(url).pathname;
const binary = (res: request.Response, cb: (err: Error | null, body: unknown) => void): void => {
  const stream = res as unknown as NodeJS.ReadableStream;
  const parts: Buffer[] = [];
  stream.on('data', (c: Buffer) => parts.push(c));
  stream.on('end', () => cb(null, Buffer.concat(parts)));
};

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'boxes-s3-'));
  server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: dir, configureBuckets: [{ name: 'boxes' }] });
  const { port } = await server.run();
  const credentials = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };
  client = createS3Client({ endpoint: `http://127.0.0.1:${port}`, credentials });
  h = await createHarness({}, { blobs: createS3BlobStore({ client, bucket: 'boxes', prefix: 'svc/', partSize: 5 * 1024 * 1024 }) });
  token = await userWithToken(h, 'sam');
  await request(h.app).post('/api/v1/boxes').set(auth(token)).send({ box: { name: 's3box', is_private: false } }).expect(201);
  await request(h.app).post('/api/v1/box/sam/s3box/versions').set(auth(token)).send({ version: { version: '1.0.0' } }).expect(201);
  await request(h.app).post('/api/v1/box/sam/s3box/version/1.0.0/providers').set(auth(token)).send({ provider: { name: 'virtualbox' } }).expect(201);
});
afterAll(async () => {
  await h.close();
  await server.close();
  await rm(dir, { recursive: true, force: true });
});

async function uploadUrl(): Promise<string> {
  const res = await request(h.app).get('/api/v1/box/sam/s3box/version/1.0.0/provider/virtualbox/upload').set(auth(token)).expect(200);
  return pathOf(res.body.upload_path as string);
}

async function storedKeys(): Promise<string[]> {
  const listed = await client.send(new ListObjectsV2Command({ Bucket: 'boxes', Prefix: 'svc/' }));
  return (listed.Contents ?? []).map((o) => o.Key as string);
}

it('uploads (multipart-sized) and downloads through S3 with Range', async () => {
  const image = randomBytes(11 * 1024 * 1024 + 123);
  const put = await request(h.app).put(await uploadUrl()).send(image);
  expect(put.status).toBe(200);
  expect(put.body.checksums.sha256).toBe(sha256(image));
  await request(h.app).put('/api/v1/box/sam/s3box/version/1.0.0/release').set(auth(token)).expect(200);
  const full = await request(h.app).get('/sam/boxes/s3box/versions/1.0.0/providers/virtualbox.box').buffer(true).parse(binary);
  expect(full.status).toBe(200);
  expect(sha256(full.body as Buffer)).toBe(sha256(image));
  const part = await request(h.app).get('/sam/boxes/s3box/versions/1.0.0/providers/virtualbox.box').set('Range', 'bytes=-100').buffer(true).parse(binary);
  expect(part.status).toBe(206);
  expect((part.body as Buffer).equals(image.subarray(image.length - 100))).toBe(true);
  expect(await storedKeys()).toHaveLength(1);
});

it('concurrent uploads to one provider: both succeed, one image wins, one object remains', async () => {
  const a = randomBytes(200_000);
  const b = randomBytes(300_000);
  const [ua, ub] = [await uploadUrl(), await uploadUrl()];
  const [ra, rb] = await Promise.all([request(h.app).put(ua).send(a), request(h.app).put(ub).send(b)]);
  expect([ra.status, rb.status]).toEqual([200, 200]);
  const prov = await request(h.app).get('/api/v1/box/sam/s3box/version/1.0.0/provider/virtualbox');
  expect([sha256(a), sha256(b)]).toContain(prov.body.checksum);
  const keys = await storedKeys();
  expect(keys).toHaveLength(1);
  const row = await h.prisma.boxProvider.findFirstOrThrow({ where: { name: 'virtualbox' } });
  expect(keys[0]).toBe(`svc/${row.blobKey}`);
});
