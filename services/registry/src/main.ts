// Composition root: config -> clients -> stores/services -> app -> listen.
// Usage: tsx services/registry/src/main.ts (configuration from the environment,
// docs/registry.md "Configuration").
import { randomBytes } from 'node:crypto';
import { createBlobStoreFromConfig } from '@selfstack/blob';
import { ConfigError } from '@selfstack/config';
import { createPrismaClient } from '@selfstack/db';
import { createListener, installShutdown } from '@selfstack/http-kit';
import { createLogger } from '@selfstack/logger';
import { buildApp } from './app';
import { composeRegistry } from './compose';
import { loadRegistryConfig } from './config';

async function main(): Promise<void> {
  const config = loadRegistryConfig(process.env);
  if (!config.databaseUrl) {
    throw new ConfigError('invalid configuration (1 problem):', [{ where: 'DATABASE_URL', message: 'is required (make dev starts an embedded PostgreSQL and sets it)' }]);
  }
  const logger = createLogger({ service: 'registry', level: config.logLevel });
  let signingKey = config.signingKey;
  if (signingKey === undefined) {
    // Fine for one process; replicas behind a load balancer need a shared key or the
    // archive URL one of them signs fails on the others.
    signingKey = randomBytes(32).toString('base64url');
    if (!config.publicArchives) logger.warn('REGISTRY_SIGNING_KEY is unset: using a random per-process key; set it when running more than one replica');
  }
  if (config.adminToken === undefined) logger.warn('REGISTRY_ADMIN_TOKEN is unset: namespaces and tokens cannot be created');

  const prisma = createPrismaClient({ url: config.databaseUrl, logger });
  const blobs = createBlobStoreFromConfig(config.blob);
  const deps = composeRegistry(
    { prisma, blobs, logger },
    {
      publicReads: config.publicReads,
      publicArchives: config.publicArchives,
      signingKey,
      adminToken: config.adminToken,
      archiveUrlTtlSeconds: config.archiveUrlTtlSeconds,
      maxArchiveBytes: config.maxArchiveBytes,
      maxUnpackedBytes: config.maxUnpackedBytes,
      maxArchiveEntries: config.maxArchiveEntries,
    },
  );
  const app = buildApp(deps);
  const listener = await createListener(app, { port: config.port, host: config.host, maxRequestBytes: config.maxRequestBytes });
  logger.info('registry listening', { url: listener.url, public_reads: config.publicReads, public_archives: config.publicArchives, blob_store: config.blob.kind });
  installShutdown({ listeners: [listener], closers: [{ name: 'prisma', close: () => prisma.$disconnect() }], logger });
}

main().catch((err: unknown) => {
  if (err instanceof ConfigError) {
    process.stderr.write(`Error: ${err.message}\n`);
    process.exit(2);
  }
  process.stderr.write(`Error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
