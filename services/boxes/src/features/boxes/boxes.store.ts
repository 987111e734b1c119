// Boxes, versions and providers (boxes.boxes, boxes.versions, boxes.providers).
// Uniqueness (box name per owner, version per box, provider per version) is enforced by
// unique indexes, so concurrent creators race in Postgres and exactly one wins; the
// losers get DuplicateError.
import { randomUUID } from 'node:crypto';
import { Prisma, type PrismaClient } from '@selfstack/db';
import { DuplicateError, isUniqueViolation } from '../accounts/accounts.store';
import type { BoxReads } from './box-reads.store';
import type { BoxRecord, ProviderRecord, SearchParams, VersionRecord } from './boxes.types';

const BOX_INCLUDE = {
  owner: { select: { id: true, username: true, billingState: true } },
  versions: { include: { providers: { orderBy: { createdAt: 'asc' } } }, orderBy: { createdAt: 'asc' } },
} as const satisfies Prisma.BoxInclude;

export interface NewBox {
  ownerId: string;
  ownerUsername: string;
  name: string;
  shortDescription: string;
  descriptionMarkdown: string;
  descriptionHtml: string;
  isPrivate: boolean;
}

export interface BoxPatch {
  name?: string;
  shortDescription?: string;
  descriptionMarkdown?: string;
  descriptionHtml?: string;
  isPrivate?: boolean;
}

export interface ProviderData {
  name: string;
  url: string | null;
  checksum: string | null;
  checksumType: string | null;
}

export type ReleaseOutcome = 'released' | 'no-valid-provider' | 'wrong-state';

export interface BoxStore {
  findBox(username: string, name: string): Promise<BoxRecord | null>;
  listByOwner(ownerId: string, includePrivate: boolean): Promise<BoxRecord[]>;
  createBox(box: NewBox): Promise<BoxRecord>;
  updateBox(box: BoxRecord, patch: BoxPatch): Promise<BoxRecord>;
  /** false when the box was already gone (a concurrent delete won). */
  deleteBox(id: string): Promise<boolean>;
  createVersion(boxId: string, data: { version: string; descriptionMarkdown: string; descriptionHtml: string }): Promise<VersionRecord>;
  updateVersion(boxId: string, id: string, data: { version?: string; descriptionMarkdown?: string; descriptionHtml?: string }): Promise<VersionRecord>;
  deleteVersion(boxId: string, id: string): Promise<boolean>;
  /** unreleased|revoked -> active, only while a usable provider exists (one transaction). */
  releaseVersion(boxId: string, id: string): Promise<ReleaseOutcome>;
  /** active -> revoked; false when the version is not active. */
  revokeVersion(boxId: string, id: string): Promise<boolean>;
  findVersion(id: string): Promise<VersionRecord | null>;
  createProvider(boxId: string, versionId: string, data: ProviderData): Promise<ProviderRecord>;
  updateProvider(boxId: string, id: string, data: Partial<ProviderData> & { hosted?: boolean; blobKey?: string | null }): Promise<ProviderRecord>;
  deleteProvider(boxId: string, id: string): Promise<boolean>;
  search(params: SearchParams, visibility: { all: true } | { ownerIds: readonly string[] }): Promise<BoxRecord[]>;
  incrementDownloads(boxId: string): Promise<void>;
}

/**
 * The row a write targets (or its parent) was deleted by a concurrent request after the
 * service's existence check: Prisma's "record to update not found" (P2025) or a foreign-key
 * violation on insert (P2003). The service answers it as the existence check would (404).
 */
export class GoneError extends Error {
  override readonly name = 'GoneError';
  constructor(readonly target: string) {
    super(`${target} no longer exists`);
  }
}

function isGone(err: unknown): boolean {
  return err instanceof Prisma.PrismaClientKnownRequestError && (err.code === 'P2025' || err.code === 'P2003');
}

function rethrowDuplicate(err: unknown, what: string): never {
  if (isUniqueViolation(err)) throw new DuplicateError(what);
  if (isGone(err)) throw new GoneError(what);
  throw err;
}

export function searchTextOf(username: string, name: string, shortDescription: string): string {
  return `${username} ${name} ${shortDescription}`.toLowerCase();
}

/** Writes through Prisma; the reads (box by name, owner listing, search) are `reads`. */
export function createBoxStore(prisma: PrismaClient, reads: BoxReads): BoxStore {
  // Changes below a box move its updated_at (search sort "updated").
  // updateMany: a box deleted concurrently is not an error here (the caller's own row
  // write reports it).
  const touchBox = (tx: Prisma.TransactionClient, boxId: string) => tx.box.updateMany({ where: { id: boxId }, data: { updatedAt: new Date() } });

  return {
    findBox: (username, name) => reads.findBox(username, name),
    listByOwner: (ownerId, includePrivate) => reads.listByOwner(ownerId, includePrivate),

    async createBox(box) {
      try {
        return await prisma.box.create({
          data: {
            id: randomUUID(),
            ownerId: box.ownerId,
            name: box.name,
            shortDescription: box.shortDescription,
            descriptionMarkdown: box.descriptionMarkdown,
            descriptionHtml: box.descriptionHtml,
            isPrivate: box.isPrivate,
            searchText: searchTextOf(box.ownerUsername, box.name, box.shortDescription),
          },
          include: BOX_INCLUDE,
        });
      } catch (err) {
        return rethrowDuplicate(err, 'box');
      }
    },

    async updateBox(box, patch) {
      const name = patch.name ?? box.name;
      const shortDescription = patch.shortDescription ?? box.shortDescription;
      try {
        return await prisma.box.update({
          where: { id: box.id },
          data: { ...patch, searchText: searchTextOf(box.owner.username, name, shortDescription) },
          include: BOX_INCLUDE,
        });
      } catch (err) {
        return rethrowDuplicate(err, 'box');
      }
    },

    async deleteBox(id) {
      return (await prisma.box.deleteMany({ where: { id } })).count > 0;
    },

    async createVersion(boxId, data) {
      try {
        return await prisma.$transaction(async (tx) => {
          const v = await tx.boxVersion.create({ data: { id: randomUUID(), boxId, ...data }, include: { providers: true } });
          await touchBox(tx, boxId);
          return v;
        });
      } catch (err) {
        return rethrowDuplicate(err, 'version');
      }
    },

    async updateVersion(boxId, id, data) {
      try {
        return await prisma.$transaction(async (tx) => {
          const v = await tx.boxVersion.update({ where: { id }, data, include: { providers: { orderBy: { createdAt: 'asc' } } } });
          await touchBox(tx, boxId);
          return v;
        });
      } catch (err) {
        return rethrowDuplicate(err, 'version');
      }
    },

    deleteVersion: (boxId, id) =>
      prisma.$transaction(async (tx) => {
        const r = await tx.boxVersion.deleteMany({ where: { id } });
        await touchBox(tx, boxId);
        return r.count > 0;
      }),

    releaseVersion: (boxId, id) =>
      prisma.$transaction(async (tx) => {
        // Lock the version row: a concurrent provider delete or second release waits.
        await tx.$queryRaw`SELECT id FROM "boxes"."versions" WHERE id = ${id} FOR UPDATE`;
        const usable = await tx.boxProvider.count({ where: { versionId: id, OR: [{ url: { not: null } }, { blobKey: { not: null } }] } });
        if (usable === 0) return 'no-valid-provider' as const;
        const r = await tx.boxVersion.updateMany({ where: { id, status: { in: ['unreleased', 'revoked'] } }, data: { status: 'active' } });
        if (r.count === 0) return 'wrong-state' as const;
        await touchBox(tx, boxId);
        return 'released' as const;
      }),

    revokeVersion: (boxId, id) =>
      prisma.$transaction(async (tx) => {
        const r = await tx.boxVersion.updateMany({ where: { id, status: 'active' }, data: { status: 'revoked' } });
        if (r.count > 0) await touchBox(tx, boxId);
        return r.count > 0;
      }),

    findVersion: (id) => prisma.boxVersion.findUnique({ where: { id }, include: { providers: { orderBy: { createdAt: 'asc' } } } }),

    async createProvider(boxId, versionId, data) {
      try {
        return await prisma.$transaction(async (tx) => {
          const p = await tx.boxProvider.create({ data: { id: randomUUID(), versionId, ...data } });
          await touchBox(tx, boxId);
          return p;
        });
      } catch (err) {
        return rethrowDuplicate(err, 'provider');
      }
    },

    async updateProvider(boxId, id, data) {
      try {
        return await prisma.$transaction(async (tx) => {
          const p = await tx.boxProvider.update({ where: { id }, data });
          await touchBox(tx, boxId);
          return p;
        });
      } catch (err) {
        return rethrowDuplicate(err, 'provider');
      }
    },

    deleteProvider: (boxId, id) =>
      prisma.$transaction(async (tx) => {
        const r = await tx.boxProvider.deleteMany({ where: { id } });
        await touchBox(tx, boxId);
        return r.count > 0;
      }),

    search: (params, visibility) => reads.search(params, visibility),

    async incrementDownloads(boxId) {
      await prisma.box.updateMany({ where: { id: boxId }, data: { downloads: { increment: 1 } } });
    },
  };
}
