import { ConfigError } from '@selfstack/config';
import { loadBoxesConfig } from './config';

describe('boxes configuration', () => {
  it('has working defaults', () => {
    const c = loadBoxesConfig({});
    expect(c).toMatchObject({
      port: 3100,
      host: '0.0.0.0',
      publicUrl: undefined,
      uploadUrlTtlMs: 600_000,
      maxUploadBytes: 100 * 1024 ** 3,
      trustProxy: false,
      bootstrapAdmin: undefined,
      twoFactor: { sender: 'outbox', codeTtlMs: 300_000 },
      rateLimits: { apiPerMinute: 1200, loginPerMinute: 10 },
      maintenanceCheckMs: 2000,
      maxInFlight: 0,
      blob: { kind: 'fs', root: '.data/boxes-blobs' },
    });
  });

  it('reads every option', () => {
    const c = loadBoxesConfig({
      PORT: '8080',
      BOXES_PUBLIC_URL: 'https://boxes.example.com',
      BOXES_SIGNING_KEY: 'k'.repeat(32),
      BOXES_UPLOAD_URL_TTL: '90s',
      BOXES_MAX_UPLOAD_BYTES: '1000',
      BOXES_TRUST_PROXY: 'true',
      BOXES_BOOTSTRAP_ADMIN_USERNAME: 'root',
      BOXES_BOOTSTRAP_ADMIN_PASSWORD: 'long-enough-pw',
      BOXES_BOOTSTRAP_ADMIN_TOKEN: 't'.repeat(40),
      BOXES_TWO_FACTOR_SENDER: 'webhook',
      BOXES_TWO_FACTOR_WEBHOOK_URL: 'https://sms.example.com/send',
      BOXES_BLOB_STORE: 's3',
      BOXES_BLOB_S3_BUCKET: 'boxes',
      BOXES_BLOB_S3_ENDPOINT: 'http://minio:9000',
    });
    expect(c).toMatchObject({
      port: 8080,
      publicUrl: 'https://boxes.example.com',
      uploadUrlTtlMs: 90_000,
      maxUploadBytes: 1000,
      trustProxy: true,
      bootstrapAdmin: { username: 'root', password: 'long-enough-pw', token: 't'.repeat(40) },
      twoFactor: { sender: 'webhook', webhookUrl: 'https://sms.example.com/send' },
      blob: { kind: 's3', bucket: 'boxes', endpoint: 'http://minio:9000' },
    });
  });

  it('names every problem at once', () => {
    let err: unknown;
    try {
      loadBoxesConfig({
        BOXES_PUBLIC_URL: 'ftp://x',
        BOXES_SIGNING_KEY: 'short',
        BOXES_TWO_FACTOR_SENDER: 'webhook',
        BOXES_BOOTSTRAP_ADMIN_USERNAME: 'root',
        BOXES_UPLOAD_URL_TTL: 'soon',
        BOXES_BLOB_STORE: 's3',
      });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    const where = (err as ConfigError).problems.map((p) => p.where).sort();
    expect(where).toEqual(
      expect.arrayContaining(['BOXES_BLOB_S3_BUCKET', 'BOXES_BOOTSTRAP_ADMIN_PASSWORD', 'BOXES_PUBLIC_URL', 'BOXES_SIGNING_KEY', 'BOXES_TWO_FACTOR_WEBHOOK_URL', 'BOXES_UPLOAD_URL_TTL']),
    );
  });
});
