// Wiring of stores and services from clients and settings; used by main.ts and by the
// integration tests, so both run exactly the same graph.
import type { BlobStore } from '@selfstack/blob';
import type { PrismaClient } from '@selfstack/db';
import type { Pool } from 'pg';
import { createLoadShedder, createMaintenanceGate, createMemoryRateLimiter, createRedisRateLimiter, MAINTENANCE_KEY, type RateLimitRedis } from '@selfstack/http-kit';
import type { Logger } from '@selfstack/logger';
import type { RegistryAppDeps } from './app';
import { createAdminService } from './features/admin/admin.service';
import { createAdminStore } from './features/admin/admin.store';
import { createAuthService } from './features/auth/auth.service';
import { createArchiveSigner } from './features/downloads/signing';
import { createModuleService } from './features/modules/modules.service';
import { createModuleStore } from './features/modules/modules.store';
import { createPublishService } from './features/publish/publish.service';

export interface RegistrySettings {
  publicReads: boolean;
  publicArchives: boolean;
  signingKey: string;
  adminToken: string | undefined;
  archiveUrlTtlSeconds: number;
  maxArchiveBytes: number;
  maxUnpackedBytes: number;
  maxArchiveEntries: number;
  /** Largest README/.tf read for analysis (default 1 MiB). */
  maxTextFileBytes?: number;
  /** Requests per client (address) per minute before 429 (default 1200). */
  rateLimitPerMinute?: number;
  /** Requests served at once before 503 load shedding (0 or unset: none). */
  maxInFlight?: number;
  /** How often each replica re-reads the maintenance flag (default 2 s). */
  maintenanceCheckMs?: number;
  /** Express `trust proxy` (behind nginx: the client address from X-Forwarded-For). */
  trustProxy?: boolean;
  clock?: () => Date;
}

export const REGISTRY_RATE_LIMIT_WINDOW_MS = 60_000;

export interface RegistryClients {
  prisma: PrismaClient;
  /** node-postgres pool for the hot reads (modules.store.ts createRegistryReadPool); the caller closes it. */
  readPool: Pool;
  blobs: BlobStore;
  logger: Logger;
  /** Rate limits counted in Redis when given (shared by replicas), else in memory. */
  redis?: RateLimitRedis | undefined;
  redisPrefix?: string;
}

export function composeRegistry(clients: RegistryClients, settings: RegistrySettings): RegistryAppDeps {
  const { prisma, blobs, logger } = clients;
  const clock = settings.clock ?? (() => new Date());
  const moduleStore = createModuleStore(prisma, clients.readPool);
  const adminStore = createAdminStore(prisma);
  const auth = createAuthService({ tokens: adminStore, adminToken: settings.adminToken, publicReads: settings.publicReads, clock });
  const rules = { api: { limit: settings.rateLimitPerMinute ?? 1200, windowMs: REGISTRY_RATE_LIMIT_WINDOW_MS } };
  const signer = createArchiveSigner({ key: settings.signingKey, ttlSeconds: settings.archiveUrlTtlSeconds, clock });
  return {
    logger,
    auth,
    modules: createModuleService({ store: moduleStore, blobs, signer, publicArchives: settings.publicArchives }),
    publish: createPublishService({
      store: moduleStore,
      namespaces: adminStore,
      auth,
      blobs,
      logger,
      limits: {
        maxUnpackedBytes: settings.maxUnpackedBytes,
        maxEntries: settings.maxArchiveEntries,
        maxTextFileBytes: settings.maxTextFileBytes ?? 1024 * 1024,
      },
    }),
    admin: createAdminService({ store: adminStore, modules: moduleStore, clock }),
    maxArchiveBytes: settings.maxArchiveBytes,
    guards: {
      limiter: clients.redis
        ? createRedisRateLimiter({ redis: clients.redis, prefix: clients.redisPrefix ?? 'registry:', rules, logger })
        : createMemoryRateLimiter({ rules }),
      maintenance: createMaintenanceGate({ read: () => adminStore.getSetting(MAINTENANCE_KEY), cacheMs: settings.maintenanceCheckMs ?? 2000 }),
      ...(settings.maxInFlight ? { shedder: createLoadShedder({ maxInFlight: settings.maxInFlight }) } : {}),
    },
    ...(settings.trustProxy === undefined ? {} : { trustProxy: settings.trustProxy }),
    readiness: async () => ({ postgres: await moduleStore.ping().catch(() => false) }),
  };
}

