// Wiring shared by main.ts, the admin CLI and the integration tests: stores -> services
// -> the dependencies of buildApp. Clients (Prisma, Redis, blob store) come from outside.
import type { BlobStore } from '@selfstack/blob';
import type { PrismaClient } from '@selfstack/db';
import type { Pool } from 'pg';
import type { Logger } from '@selfstack/logger';
import type { AppDeps } from './app';
import { createAccountStore, type AccountStore } from './features/accounts/accounts.store';
import { createAdminService, type AdminService } from './features/admin/admin.service';
import { createAuthService } from './features/auth/auth.service';
import { createAuthStore, type AuthStore } from './features/auth/auth.store';
import { createOutboxSender, createWebhookSender, type TwoFactorSender } from './features/auth/two-factor-sender';
import { createBoxService } from './features/boxes/boxes.service';
import { createBoxReads } from './features/boxes/box-reads.store';
import { createBoxStore } from './features/boxes/boxes.store';
import { createDownloadService } from './features/downloads/downloads.service';
import { createLoadShedder, createMaintenanceGate, createMemoryRateLimiter, createRedisRateLimiter, MAINTENANCE_KEY, type RateLimitRedis } from '@selfstack/http-kit';
import { DEFAULT_RATE_LIMITS, type BoxesRateLimiter, type BoxesRateLimitRules } from './features/guards/rate-limit';
import { createUploadService } from './features/uploads/uploads.service';
import { createUploadStore } from './features/uploads/uploads.store';
import { createPasswordHasher, DEFAULT_PASSWORD_PARAMS, type PasswordHashParams } from '@selfstack/password';

export interface ComposeClients {
  prisma: PrismaClient;
  /** The node-postgres pool of the hot box reads (createBoxReadPool), same database. */
  readPool: Pool;
  blobs: BlobStore;
  logger: Logger;
  /** Rate limits in Redis when given, else in memory. */
  redis?: RateLimitRedis | undefined;
  redisPrefix?: string;
}

export interface ComposeOptions {
  signingKey: string;
  uploadUrlTtlMs: number;
  maxUploadBytes: number;
  publicUrl?: string | undefined;
  trustProxy?: boolean | undefined;
  maxRequestBytes?: number | undefined;
  rateLimits?: Partial<BoxesRateLimitRules>;
  /** Requests served at once by this process before new ones get 503 (unset: no limit). */
  maxInFlight?: number | undefined;
  twoFactor?: { sender: 'outbox' } | { sender: 'webhook'; url: string; token?: string | undefined } | { sender: 'custom'; instance: TwoFactorSender };
  codeTtlMs?: number;
  maintenanceCheckMs?: number;
  passwordParams?: PasswordHashParams;
  now?: () => Date;
  readiness?: () => Promise<Record<string, boolean>>;
}

export interface ComposedBoxes {
  appDeps: AppDeps;
  admin: AdminService;
  accountStore: AccountStore;
  authStore: AuthStore;
  limiter: BoxesRateLimiter;
}

export function composeBoxes(clients: ComposeClients, options: ComposeOptions): ComposedBoxes {
  const { prisma, blobs, logger } = clients;
  const accountStore = createAccountStore(prisma);
  const authStore = createAuthStore(prisma);
  const boxStore = createBoxStore(prisma, createBoxReads(clients.readPool));
  const uploadStore = createUploadStore(prisma);
  const hasher = createPasswordHasher(options.passwordParams ?? DEFAULT_PASSWORD_PARAMS);
  const rules: BoxesRateLimitRules = { ...DEFAULT_RATE_LIMITS, ...options.rateLimits };
  const limiter = clients.redis
    ? createRedisRateLimiter({ redis: clients.redis, prefix: clients.redisPrefix ?? 'boxes:', rules, logger })
    : createMemoryRateLimiter({ rules });
  const tf = options.twoFactor ?? { sender: 'outbox' as const };
  const sender =
    tf.sender === 'custom'
      ? tf.instance
      : tf.sender === 'webhook'
        ? createWebhookSender({ url: tf.url, ...(tf.token ? { bearerToken: tf.token } : {}), logger })
        : createOutboxSender({ authStore, logger });
  const now = options.now;
  const authService = createAuthService({
    accountStore,
    authStore,
    hasher,
    limiter,
    sender,
    logger,
    codeTtlMs: options.codeTtlMs ?? 5 * 60_000,
    ...(now ? { now } : {}),
  });
  const boxService = createBoxService({ boxStore, accountStore, uploadStore, blobs, logger });
  const uploadService = createUploadService({
    uploadStore,
    boxService,
    blobs,
    logger,
    signingKey: options.signingKey,
    urlTtlMs: options.uploadUrlTtlMs,
    maxUploadBytes: options.maxUploadBytes,
    ...(now ? { now } : {}),
  });
  const downloadService = createDownloadService({ boxService, boxStore, blobs });
  const maintenance = createMaintenanceGate({ read: () => accountStore.getSetting(MAINTENANCE_KEY), cacheMs: options.maintenanceCheckMs ?? 2000 });
  const admin = createAdminService({ accountStore, authStore, authService, hasher });
  return {
    appDeps: {
      authService,
      boxService,
      uploadService,
      downloadService,
      blobs,
      limiter,
      maintenance,
      ...(options.maxInFlight ? { shedder: createLoadShedder({ maxInFlight: options.maxInFlight }) } : {}),
      logger,
      publicUrl: options.publicUrl,
      trustProxy: options.trustProxy,
      maxRequestBytes: options.maxRequestBytes,
      ...(options.readiness ? { readiness: options.readiness } : {}),
    },
    admin,
    accountStore,
    authStore,
    limiter,
  };
}
