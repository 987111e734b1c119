// Integration-test harness: a fresh database cloned from the migrated template, its own
// Redis key prefix, a temporary fs blob store, and the app built exactly as main.ts
// builds it (composeBoxes + buildApp). Cheap password hashing keeps tests fast.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import type { Pool } from 'pg';
import type { Express } from 'express';
import { createFsBlobStore, type BlobStore } from '@selfstack/blob';
import { createPrismaClient, type PrismaClient } from '@selfstack/db';
import { createLogger } from '@selfstack/logger';
import { createTestDatabase, deleteRedisKeys, testRedisPrefix, testRedisUrl, type TestDatabase } from '@selfstack/testing';
import { buildApp } from '../src/app';
import { composeBoxes, type ComposeOptions, type ComposedBoxes } from '../src/compose';
import { createBoxReadPool } from '../src/features/boxes/box-reads.store';

export interface Harness {
  app: Express;
  composed: ComposedBoxes;
  prisma: PrismaClient;
  /** The app's pool of box reads. */
  readPool: Pool;
  blobs: BlobStore;
  blobRoot: string;
  redis: Redis;
  redisPrefix: string;
  /** Mutable clock used by the services (upload URL expiry, two-factor codes). */
  clock: { now: Date };
  close(): Promise<void>;
}

export const SIGNING_KEY = 'test-signing-key-0123456789abcdef0123456789';

export async function createHarness(options: Partial<ComposeOptions> = {}, overrides: { blobs?: BlobStore } = {}): Promise<Harness> {
  const db: TestDatabase = await createTestDatabase();
  const prisma = createPrismaClient({ url: db.url });
  const readPool = createBoxReadPool(db.url);
  const blobRoot = await mkdtemp(path.join(tmpdir(), 'boxes-blobs-'));
  const blobs = overrides.blobs ?? createFsBlobStore({ root: blobRoot });
  const redis = new Redis(testRedisUrl(), { maxRetriesPerRequest: 1 });
  const redisPrefix = testRedisPrefix();
  const clock = { now: new Date() };
  const logger = createLogger({ service: 'boxes-test', silent: true });
  const composed = composeBoxes(
    { prisma, readPool, blobs, logger, redis, redisPrefix },
    {
      signingKey: SIGNING_KEY,
      uploadUrlTtlMs: 10 * 60_000,
      maxUploadBytes: 64 * 1024 * 1024,
      maintenanceCheckMs: 0,
      passwordParams: { memoryKiB: 1024, iterations: 1, parallelism: 1 },
      now: () => clock.now,
      ...options,
    },
  );
  const app = buildApp(composed.appDeps);
  return {
    app,
    composed,
    prisma,
    readPool,
    blobs,
    blobRoot,
    redis,
    redisPrefix,
    clock,
    async close() {
      await readPool.end();
      await prisma.$disconnect();
      await deleteRedisKeys(redisPrefix, { redis });
      redis.disconnect();
      await db.drop();
      await rm(blobRoot, { recursive: true, force: true });
    },
  };
}

/** Creates a user and returns a token for it. */
export async function userWithToken(h: Harness, username: string, extra: { admin?: boolean; email?: string } = {}): Promise<string> {
  await h.composed.admin.createUser({ username, password: `${username}-password`, email: extra.email ?? `${username}@example.com`, admin: extra.admin ?? false });
  return (await h.composed.admin.createToken(username, 'test')).token;
}

export const auth = (token: string) => ({ Authorization: `Bearer ${token}` });
