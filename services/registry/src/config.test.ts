import { ConfigError } from '@selfstack/config';
import { loadRegistryConfig } from './config';

describe('loadRegistryConfig', () => {
  it('applies the defaults', () => {
    const c = loadRegistryConfig({});
    expect(c).toMatchObject({
      port: 3200,
      host: '0.0.0.0',
      publicReads: true,
      publicArchives: false,
      signingKey: undefined,
      adminToken: undefined,
      archiveUrlTtlSeconds: 300,
      maxArchiveBytes: 20 * 1024 * 1024,
      maxUnpackedBytes: 200 * 1024 * 1024,
      maxArchiveEntries: 10000,
      blob: { kind: 'fs', root: '.data/blobs' },
    });
    expect(c.maxRequestBytes).toBeGreaterThan(c.maxArchiveBytes);
  });

  it('reads every variable, s3 included', () => {
    const c = loadRegistryConfig({
      PORT: '4000',
      REGISTRY_PUBLIC_READS: 'false',
      REGISTRY_PUBLIC_ARCHIVES: 'yes',
      REGISTRY_SIGNING_KEY: 's'.repeat(32),
      REGISTRY_ADMIN_TOKEN: 'a'.repeat(20),
      REGISTRY_ARCHIVE_URL_TTL: '90s',
      REGISTRY_MAX_ARCHIVE_BYTES: '1048576',
      REGISTRY_BLOB_STORE: 's3',
      REGISTRY_BLOB_S3_BUCKET: 'modules',
      REGISTRY_BLOB_S3_ENDPOINT: 'http://127.0.0.1:9000',
    });
    expect(c).toMatchObject({ port: 4000, publicReads: false, publicArchives: true, archiveUrlTtlSeconds: 90, maxArchiveBytes: 1048576 });
    expect(c.blob).toEqual({ kind: 's3', bucket: 'modules', endpoint: 'http://127.0.0.1:9000' });
  });

  it('names every problem at once', () => {
    let err: unknown;
    try {
      loadRegistryConfig({ REGISTRY_SIGNING_KEY: 'short', REGISTRY_ADMIN_TOKEN: 'x', REGISTRY_MAX_ARCHIVE_BYTES: 'lots', REGISTRY_BLOB_STORE: 's3', PORT: '99999' });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    const text = String((err as Error).message) + JSON.stringify((err as ConfigError & { problems: unknown }).problems);
    for (const v of ['REGISTRY_SIGNING_KEY', 'REGISTRY_ADMIN_TOKEN', 'REGISTRY_MAX_ARCHIVE_BYTES', 'REGISTRY_BLOB_S3_BUCKET', 'PORT']) expect(text).toContain(v);
  });

  it('says what each limit counts', () => {
    const problems = (env: Record<string, string>) => {
      try {
        loadRegistryConfig(env);
      } catch (e) {
        return (e as ConfigError).problems;
      }
      return [];
    };
    expect(problems({ REGISTRY_MAX_ARCHIVE_ENTRIES: 'many' })).toEqual([
      { where: 'REGISTRY_MAX_ARCHIVE_ENTRIES', message: 'must be a number of files and directories (digits only)' },
    ]);
    expect(problems({ REGISTRY_MAX_ARCHIVE_BYTES: 'lots' })).toEqual([{ where: 'REGISTRY_MAX_ARCHIVE_BYTES', message: 'must be a byte count (digits only)' }]);
  });
});
