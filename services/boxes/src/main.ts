// Composition root: config -> clients -> stores/services -> app -> listen (runService does
// the rest: the DATABASE_URL check, logger, shutdown).
// Usage: tsx services/boxes/src/main.ts (configuration from the environment,
// docs/boxes.md "Configuration").
import { randomBytes } from 'node:crypto';
import { createBlobStoreFromConfig } from '@selfstack/blob';
import { createPrismaClient } from '@selfstack/db';
import { createCounterClient } from '@selfstack/bus';
import { createListener, runService } from '@selfstack/http-kit';
import { buildApp } from './app';
import { composeBoxes } from './compose';
import { createBoxReadPool } from './features/boxes/box-reads.store';
import { loadBoxesConfig } from './config';

void runService({
  name: 'boxes',
  config: (env) => loadBoxesConfig(env),
  settings: (config) => ({ logLevel: config.logLevel, databaseUrl: config.databaseUrl, redisUrl: config.redisUrl }),
  async start({ config, logger, databaseUrl, onShutdown }) {
    let signingKey = config.signingKey;
    if (signingKey === undefined) {
      // Fine for one process; replicas need a shared key or an upload URL signed by one
      // replica is refused by the others.
      signingKey = randomBytes(32).toString('base64url');
      logger.warn('BOXES_SIGNING_KEY is unset: using a random per-process key; set it when running more than one replica');
    }

    const prisma = createPrismaClient({ url: databaseUrl, logger });
    onShutdown('prisma', () => prisma.$disconnect());
    const readPool = createBoxReadPool(databaseUrl, { onIdleError: (err) => logger.warn('read pool: idle connection ended', { error: err.message }) });
    onShutdown('read pool', () => readPool.end());
    const redis = createCounterClient(config.redisUrl, logger, onShutdown);
    const blobs = createBlobStoreFromConfig(config.blob);

    const composed = composeBoxes(
      { prisma, readPool, blobs, logger, redis, redisPrefix: 'boxes:' },
      {
        signingKey,
        uploadUrlTtlMs: config.uploadUrlTtlMs,
        maxUploadBytes: config.maxUploadBytes,
        publicUrl: config.publicUrl,
        trustProxy: config.trustProxy,
        maxRequestBytes: config.maxRequestBytes,
        rateLimits: {
          api: { limit: config.rateLimits.apiPerMinute, windowMs: 60_000 },
          login: { limit: config.rateLimits.loginPerMinute, windowMs: 60_000 },
        },
        twoFactor:
          config.twoFactor.sender === 'webhook' && config.twoFactor.webhookUrl
            ? { sender: 'webhook', url: config.twoFactor.webhookUrl, token: config.twoFactor.webhookToken }
            : { sender: 'outbox' },
        codeTtlMs: config.twoFactor.codeTtlMs,
        maintenanceCheckMs: config.maintenanceCheckMs,
        maxInFlight: config.maxInFlight,
        readiness: async () => ({
          postgres: await prisma.$queryRaw`SELECT 1`.then(() => true, () => false),
          ...(redis ? { redis: await redis.ping().then(() => true, () => false) } : {}),
        }),
      },
    );

    if (config.bootstrapAdmin) {
      const { created } = await composed.admin.bootstrap(config.bootstrapAdmin);
      logger.info(created ? 'bootstrap admin created' : 'bootstrap admin present', { username: config.bootstrapAdmin.username });
    }

    const app = buildApp(composed.appDeps);
    // Box images are streamed: the connection-level cap is the upload limit, JSON bodies
    // are held to MAX_REQUEST_BYTES by the app.
    const listener = await createListener(app, { port: config.port, host: config.host, maxRequestBytes: config.maxUploadBytes + 1024 * 1024 });
    logger.info('boxes listening', { url: listener.url, public_url: config.publicUrl ?? '(from Host header)', blob_store: config.blob.kind });
    return [listener];
  },
});
