// Namespaces and API tokens (registry.namespaces, registry.tokens). Tokens are stored as
// SHA-256 hashes only; see auth/tokens.ts.
import { Prisma, type PrismaClient } from '@selfstack/db';
import type { NamespaceRecord, TokenRecord } from './admin.types';

export class NamespaceExistsError extends Error {
  override readonly name = 'NamespaceExistsError';
}
export class NamespaceInUseError extends Error {
  override readonly name = 'NamespaceInUseError';
}
export class NamespaceMissingError extends Error {
  override readonly name = 'NamespaceMissingError';
}

export interface AdminStore {
  createNamespace(name: string, owner: string): Promise<NamespaceRecord>;
  listNamespaces(): Promise<NamespaceRecord[]>;
  findNamespace(name: string): Promise<NamespaceRecord | null>;
  /** False when it did not exist; throws NamespaceInUseError when modules remain. */
  deleteNamespace(name: string): Promise<boolean>;
  /** Throws NamespaceMissingError when the token's namespace no longer exists. */
  createToken(input: { id: string; tokenHash: string; description: string; namespace: string | null; expiresAt: Date | null }): Promise<TokenRecord>;
  listTokens(): Promise<TokenRecord[]>;
  findTokenByHash(hash: string): Promise<TokenRecord | null>;
  deleteToken(id: string): Promise<boolean>;
  /** registry.settings: service-wide switches (maintenance mode); null when unset. */
  getSetting(key: string): Promise<string | null>;
  /** null deletes the setting. */
  setSetting(key: string, value: string | null): Promise<void>;
}

const tokenSelect = { id: true, description: true, namespace: true, createdAt: true, expiresAt: true } as const;

export function createAdminStore(prisma: PrismaClient): AdminStore {
  return {
    async createNamespace(name, owner) {
      try {
        return await prisma.registryNamespace.create({ data: { name, owner }, select: { name: true, owner: true, createdAt: true } });
      } catch (err) {
        if (err instanceof Prisma.PrismaClientKnownRequestError && err.code === 'P2002') throw new NamespaceExistsError(`namespace ${name} already exists`);
        throw err;
      }
    },
    listNamespaces() {
      return prisma.registryNamespace.findMany({ select: { name: true, owner: true, createdAt: true }, orderBy: { name: 'asc' } });
    },
    findNamespace(name) {
      return prisma.registryNamespace.findUnique({ where: { name }, select: { name: true, owner: true, createdAt: true } });
    },
    async deleteNamespace(name) {
      try {
        const r = await prisma.registryNamespace.deleteMany({ where: { name } });
        return r.count > 0;
      } catch (err) {
        // modules.namespace is ON DELETE RESTRICT.
        if (err instanceof Prisma.PrismaClientKnownRequestError && (err.code === 'P2003' || err.code === 'P2014')) {
          throw new NamespaceInUseError(`namespace ${name} still has modules; delete their versions first`);
        }
        if (err instanceof Error && /23503|foreign key/i.test(err.message)) throw new NamespaceInUseError(`namespace ${name} still has modules; delete their versions first`);
        throw err;
      }
    },
    async createToken(input) {
      try {
        return await prisma.registryToken.create({ data: input, select: tokenSelect });
      } catch (err) {
        // The namespace was deleted after the service checked it (tokens.namespace is a
        // foreign key): answer as that check would.
        if (err instanceof Prisma.PrismaClientKnownRequestError && err.code === 'P2003') throw new NamespaceMissingError(`namespace ${input.namespace ?? ''} does not exist; create it first`);
        throw err;
      }
    },
    listTokens() {
      return prisma.registryToken.findMany({ select: tokenSelect, orderBy: { createdAt: 'asc' } });
    },
    findTokenByHash(tokenHash) {
      return prisma.registryToken.findUnique({ where: { tokenHash }, select: tokenSelect });
    },
    async deleteToken(id) {
      const r = await prisma.registryToken.deleteMany({ where: { id } });
      return r.count > 0;
    },
    async getSetting(key) {
      const row = await prisma.registrySetting.findUnique({ where: { key }, select: { value: true } });
      return row?.value ?? null;
    },
    async setSetting(key, value) {
      if (value === null) await prisma.registrySetting.deleteMany({ where: { key } });
      else await prisma.registrySetting.upsert({ where: { key }, create: { key, value }, update: { value } });
    },
  };
}
