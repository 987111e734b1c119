// Composition root: config -> clients -> stores/services -> app -> listen (runService does
// the rest: the DATABASE_URL check, logger, shutdown).
// Usage: tsx services/registry/src/main.ts (configuration from the environment,
// docs/registry.md "Configuration").
import { randomBytes } from 'node:crypto';
import { createBlobStoreFromConfig } from '@selfstack/blob';
import { createPrismaClient } from '@selfstack/db';
import { createCounterClient } from '@selfstack/bus';
import { createListener, runService } from '@selfstack/http-kit';
import { buildApp } from './app';
import { composeRegistry } from './compose';
import { createRegistryReadPool } from './features/modules/modules.store';
import { loadRegistryConfig } from './config';

void runService({
  name: 'registry',
  config: (env) => loadRegistryConfig(env),
  settings: (config) => ({ logLevel: config.logLevel, databaseUrl: config.databaseUrl, redisUrl: config.redisUrl }),
  async start({ config, logger, databaseUrl, onShutdown }) {
    let signingKey = config.signingKey;
    if (signingKey === undefined) {
      // Fine for one process; replicas behind a load balancer need a shared key or the
      // archive URL one of them signs fails on the others.
      signingKey = randomBytes(32).toString('base64url');
      if (!config.publicArchives) logger.warn('REGISTRY_SIGNING_KEY is unset: using a random per-process key; set it when running more than one replica');
    }
    if (config.adminToken === undefined) logger.warn('REGISTRY_ADMIN_TOKEN is unset: namespaces and tokens cannot be created');

    const prisma = createPrismaClient({ url: databaseUrl, logger });
    onShutdown('prisma', () => prisma.$disconnect());
    const readPool = createRegistryReadPool(databaseUrl, { onIdleError: (err) => logger.warn('read pool: idle connection ended', { error: err.message }) });
    onShutdown('read pool', () => readPool.end());
    const redis = createCounterClient(config.redisUrl, logger, onShutdown);
    const blobs = createBlobStoreFromConfig(config.blob);
    const deps = composeRegistry(
      { prisma, readPool, blobs, logger, redis, redisPrefix: 'registry:' },
      {
        publicReads: config.publicReads,
        publicArchives: config.publicArchives,
        signingKey,
        adminToken: config.adminToken,
        archiveUrlTtlSeconds: config.archiveUrlTtlSeconds,
        maxArchiveBytes: config.maxArchiveBytes,
        maxUnpackedBytes: config.maxUnpackedBytes,
        maxArchiveEntries: config.maxArchiveEntries,
        rateLimitPerMinute: config.rateLimitPerMinute,
        maxInFlight: config.maxInFlight,
        maintenanceCheckMs: config.maintenanceCheckMs,
        trustProxy: config.trustProxy,
      },
    );
    const app = buildApp(deps);
    const listener = await createListener(app, { port: config.port, host: config.host, maxRequestBytes: config.maxRequestBytes });
    logger.info('registry listening', { url: listener.url, public_reads: config.publicReads, public_archives: config.publicArchives, blob_store: config.blob.kind });
    return [listener];
  },
});
