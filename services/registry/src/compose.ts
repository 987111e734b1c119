// Wiring of stores and services from clients and settings; used by main.ts and by the
// integration tests, so both run exactly the same graph.
import type { BlobStore } from '@selfstack/blob';
import type { PrismaClient } from '@selfstack/db';
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
  clock?: () => Date;
}

export function composeRegistry(clients: { prisma: PrismaClient; blobs: BlobStore; logger: Logger }, settings: RegistrySettings): RegistryAppDeps {
  const { prisma, blobs, logger } = clients;
  const clock = settings.clock ?? (() => new Date());
  const moduleStore = createModuleStore(prisma);
  const adminStore = createAdminStore(prisma);
  const auth = createAuthService({ tokens: adminStore, adminToken: settings.adminToken, publicReads: settings.publicReads, clock });
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
    readiness: async () => ({ postgres: await moduleStore.ping().catch(() => false) }),
  };
}
