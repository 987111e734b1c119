import { blobStoreEnvSchema } from './blob-config';

describe('blobStoreEnvSchema', () => {
  const schema = blobStoreEnvSchema('BOXES_', '/var/lib/boxes');

  it('defaults to the fs store at the service default root', () => {
    expect(schema.parse({})).toEqual({ kind: 'fs', root: '/var/lib/boxes' });
    expect(schema.parse({ BOXES_BLOB_STORE: '', BOXES_BLOB_FS_ROOT: '/data' })).toEqual({ kind: 'fs', root: '/data' });
  });

  it('builds an s3 config with every option', () => {
    expect(
      schema.parse({
        BOXES_BLOB_STORE: 's3',
        BOXES_BLOB_S3_BUCKET: 'b',
        BOXES_BLOB_S3_ENDPOINT: 'http://minio:9000',
        BOXES_BLOB_S3_REGION: 'eu-west-1',
        BOXES_BLOB_S3_PREFIX: 'boxes/',
        BOXES_BLOB_S3_FORCE_PATH_STYLE: 'false',
        BOXES_BLOB_S3_ACCESS_KEY_ID: 'a',
        BOXES_BLOB_S3_SECRET_ACCESS_KEY: 's',
      }),
    ).toEqual({
      kind: 's3',
      bucket: 'b',
      endpoint: 'http://minio:9000',
      region: 'eu-west-1',
      prefix: 'boxes/',
      forcePathStyle: false,
      credentials: { accessKeyId: 'a', secretAccessKey: 's' },
    });
  });

  it('names every problem', () => {
    const r = schema.safeParse({ BOXES_BLOB_STORE: 's3', BOXES_BLOB_S3_ACCESS_KEY_ID: 'a', BOXES_BLOB_S3_ENDPOINT: 'not a url' });
    expect(r.success).toBe(false);
    const paths = r.error!.issues.map((i) => i.path.join('.')).sort();
    expect(paths).toEqual(['BOXES_BLOB_S3_BUCKET', 'BOXES_BLOB_S3_ENDPOINT', 'BOXES_BLOB_S3_SECRET_ACCESS_KEY']);
    const r2 = schema.safeParse({ BOXES_BLOB_STORE: 's3', BOXES_BLOB_S3_ACCESS_KEY_ID: 'a' });
    expect(r2.error!.issues.map((i) => i.path.join('.')).sort()).toEqual(['BOXES_BLOB_S3_BUCKET', 'BOXES_BLOB_S3_SECRET_ACCESS_KEY']);
    expect(schema.safeParse({ BOXES_BLOB_STORE: 'gcs' }).success).toBe(false);
  });
});
