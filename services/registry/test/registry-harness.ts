// A registry wired exactly like main.ts (composeRegistry + buildApp) over a fresh test
// database and a temporary filesystem blob store.
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Express } from 'express';
import type { Pool } from 'pg';
import request from 'supertest';
import { createFsBlobStore, type BlobStore } from '@selfstack/blob';
import { createPrismaClient, type PrismaClient } from '@selfstack/db';
import { createLogger } from '@selfstack/logger';
import { createTestDatabase, type TestDatabase } from '@selfstack/testing';
import { buildApp } from '../src/app';
import { composeRegistry, type RegistrySettings } from '../src/compose';
import { createRegistryReadPool } from '../src/features/modules/modules.store';

export const ADMIN_TOKEN = 'admin-token-for-tests-0123456789';
export const SIGNING_KEY = 'signing-key-for-tests-0123456789abcdef';

export interface Registry {
  app: Express;
  prisma: PrismaClient;
  readPool: Pool;
  db: TestDatabase;
  blobs: BlobStore;
  blobRoot: string;
  settings: RegistrySettings;
  /** Files currently stored under registry/archives/. */
  archiveFiles(): Promise<string[]>;
  close(): Promise<void>;
}

export const DEFAULT_SETTINGS: RegistrySettings = {
  publicReads: true,
  publicArchives: false,
  signingKey: SIGNING_KEY,
  adminToken: ADMIN_TOKEN,
  archiveUrlTtlSeconds: 300,
  maxArchiveBytes: 2 * 1024 * 1024,
  maxUnpackedBytes: 8 * 1024 * 1024,
  maxArchiveEntries: 500,
  // The sweeps send thousands of requests from one address; guards.itest.ts sets its own.
  rateLimitPerMinute: 1_000_000,
};

export async function startRegistry(
  overrides: Partial<RegistrySettings> = {},
  shared?: { db: TestDatabase; prisma: PrismaClient; readPool: Pool; blobRoot: string },
): Promise<Registry> {
  const db = shared?.db ?? (await createTestDatabase());
  const prisma = shared?.prisma ?? createPrismaClient({ url: db.url, poolSize: 5 });
  const readPool = shared?.readPool ?? createRegistryReadPool(db.url, { max: 5 });
  const blobRoot = shared?.blobRoot ?? (await mkdtemp(path.join(tmpdir(), 'registry-blobs-')));
  const blobs = createFsBlobStore({ root: blobRoot });
  const settings = { ...DEFAULT_SETTINGS, ...overrides };
  const logger = createLogger({ service: 'registry', silent: true });
  const app = buildApp(composeRegistry({ prisma, readPool, blobs, logger }, settings));
  return {
    app,
    prisma,
    readPool,
    db,
    blobs,
    blobRoot,
    settings,
    async archiveFiles() {
      try {
        return (await readdir(path.join(blobRoot, 'registry', 'archives'))).sort();
      } catch {
        return [];
      }
    },
    async close() {
      if (shared) return;
      await readPool.end();
      await prisma.$disconnect();
      await db.drop();
      await rm(blobRoot, { recursive: true, force: true });
    },
  };
}

export const bearer = (t: string) => ({ Authorization: `Bearer ${t}` });

export async function createNamespace(app: Express, name: string, owner = ''): Promise<void> {
  const res = await request(app).post('/v1/admin/namespaces').set(bearer(ADMIN_TOKEN)).send({ name, owner });
  if (res.status !== 201) throw new Error(`create namespace ${name}: ${res.status} ${res.text}`);
}

export async function createToken(app: Express, body: { namespace?: string; description?: string; ttl_seconds?: number } = {}): Promise<{ id: string; token: string }> {
  const res = await request(app).post('/v1/admin/tokens').set(bearer(ADMIN_TOKEN)).send(body);
  if (res.status !== 201) throw new Error(`create token: ${res.status} ${res.text}`);
  return res.body as { id: string; token: string };
}

export function publish(app: Express, address: string, archive: Buffer, token: string, query = '') {
  return request(app)
    .post(`/v1/modules/${address}${query}`)
    .set(bearer(token))
    .set('Content-Type', 'application/octet-stream')
    .send(archive);
}
