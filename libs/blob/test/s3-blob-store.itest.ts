import { CreateBucketCommand, ListObjectsV2Command, ListMultipartUploadsCommand } from '@aws-sdk/client-s3';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import S3rver from 's3rver';
import { createBlobStoreFromConfig, createS3BlobStore, createS3Client, blobStoreEnvSchema } from '../src';
import { describeBlobStoreContract } from './blob-store.contract';

// A real S3-compatible server (s3rver) on a random port: the store is exercised over
// HTTP with signed requests, multipart uploads included (objects larger than partSize).
let server: S3rver;
let dir = '';
let endpoint = '';
// A getter: the SDK decorates the credentials object it is given.
const credentials = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'blob-s3-'));
  server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: dir, configureBuckets: [{ name: 'boxes' }] });
  const address = await server.run();
  endpoint = `http://127.0.0.1:${address.port}`;
});
afterAll(async () => {
  await server.close();
  await rm(dir, { recursive: true, force: true });
});

describeBlobStoreContract(
  's3 (s3rver)',
  () => createS3BlobStore({ endpoint, credentials, bucket: 'boxes', prefix: 'contract/', partSize: 5 * 1024 * 1024 }),
  { largeBytes: 12 * 1024 * 1024, atomicReadsDuringOverwrite: false },
);

describe('s3 blob store specifics', () => {
  it('writes under the prefix and leaves no multipart uploads after a failure', async () => {
    const client = createS3Client({ endpoint, credentials });
    const store = createS3BlobStore({ client, bucket: 'boxes', prefix: 'p1/' });
    const { Readable } = await import('node:stream');
    await store.put('k', Readable.from([Buffer.from('v')]));
    const listed = await client.send(new ListObjectsV2Command({ Bucket: 'boxes', Prefix: 'p1/' }));
    expect((listed.Contents ?? []).map((o) => o.Key)).toEqual(['p1/k']);
    const failing = new Readable({
      read() {
        this.push(Buffer.alloc(6 * 1024 * 1024));
        this.destroy(new Error('gone'));
      },
    });
    await expect(store.put('k2', failing)).rejects.toThrow();
    expect(await store.stat('k2')).toBeNull();
    const uploads = await client.send(new ListMultipartUploadsCommand({ Bucket: 'boxes' })).catch(() => ({ Uploads: [] }));
    expect(uploads.Uploads ?? []).toEqual([]);
  });

  it('is built from env configuration', async () => {
    await createS3Client({ endpoint, credentials }).send(new CreateBucketCommand({ Bucket: 'fromenv' }));
    const config = blobStoreEnvSchema('BOXES_', '/unused').parse({
      BOXES_BLOB_STORE: 's3',
      BOXES_BLOB_S3_BUCKET: 'fromenv',
      BOXES_BLOB_S3_ENDPOINT: endpoint,
      BOXES_BLOB_S3_ACCESS_KEY_ID: 'S3RVER',
      BOXES_BLOB_S3_SECRET_ACCESS_KEY: 'S3RVER',
    });
    expect(config).toEqual({ kind: 's3', bucket: 'fromenv', endpoint, credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } });
    const store = createBlobStoreFromConfig(config);
    const { Readable } = await import('node:stream');
    expect(await store.put('x', Readable.from([Buffer.from('hello')]))).toEqual({ key: 'x', size: 5 });
    expect((await store.stat('x'))?.size).toBe(5);
  });
});
