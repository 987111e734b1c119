// ACL policies, tokens (secrets stored as sha256 hashes) and the bootstrap marker.
import { jsonValue } from '@selfstack/db';
import type { Db, JsonObject } from '../../shared/common.types';

export type AclPolicy = JsonObject & { Name: string; Description: string; Rules: string; CreateIndex: number; ModifyIndex: number };
export type AclToken = JsonObject & {
  AccessorID: string;
  Name: string;
  Type: string;
  Policies: string[] | null;
  Global: boolean;
  CreateTime: string;
  ExpirationTime: string | null;
  CreateIndex: number;
  ModifyIndex: number;
};

export interface AclStore {
  getPolicy(db: Db, name: string): Promise<AclPolicy | null>;
  getPolicies(db: Db, names: readonly string[]): Promise<AclPolicy[]>;
  listPolicies(db: Db, prefix: string): Promise<AclPolicy[]>;
  putPolicy(tx: Db, p: AclPolicy): Promise<void>;
  deletePolicy(tx: Db, name: string): Promise<void>;
  getToken(db: Db, accessorId: string): Promise<AclToken | null>;
  getTokenBySecretHash(db: Db, hash: string): Promise<AclToken | null>;
  listTokens(db: Db, prefix: string): Promise<AclToken[]>;
  putToken(tx: Db, t: AclToken, secretHash: string | null): Promise<void>;
  deleteToken(tx: Db, accessorId: string): Promise<void>;
  bootstrapIndex(db: Db): Promise<number | null>;
  markBootstrapped(tx: Db, index: number): Promise<void>;
}

export function createAclStore(): AclStore {
  return {
    async getPolicy(db, name) {
      const row = await db.schedulerAclPolicy.findUnique({ where: { name } });
      return row ? (row.data as unknown as AclPolicy) : null;
    },
    async getPolicies(db, names) {
      const rows = await db.schedulerAclPolicy.findMany({ where: { name: { in: [...names] } } });
      return rows.map((r) => r.data as unknown as AclPolicy);
    },
    async listPolicies(db, prefix) {
      const rows = await db.schedulerAclPolicy.findMany({
        where: prefix !== '' ? { name: { startsWith: prefix } } : {},
        orderBy: { name: 'asc' },
      });
      return rows.map((r) => r.data as unknown as AclPolicy);
    },
    async putPolicy(tx, p) {
      const row = { data: jsonValue(p), createIndex: BigInt(p.CreateIndex), modifyIndex: BigInt(p.ModifyIndex) };
      await tx.schedulerAclPolicy.upsert({ where: { name: p.Name }, create: { name: p.Name, ...row }, update: row });
    },
    async deletePolicy(tx, name) {
      await tx.schedulerAclPolicy.deleteMany({ where: { name } });
    },
    async getToken(db, accessorId) {
      const row = await db.schedulerAclToken.findUnique({ where: { accessorId } });
      return row ? (row.data as unknown as AclToken) : null;
    },
    async getTokenBySecretHash(db, hash) {
      const row = await db.schedulerAclToken.findUnique({ where: { secretHash: hash } });
      return row ? (row.data as unknown as AclToken) : null;
    },
    async listTokens(db, prefix) {
      const rows = await db.schedulerAclToken.findMany({
        where: prefix !== '' ? { accessorId: { startsWith: prefix } } : {},
        orderBy: prefix !== '' ? [{ accessorId: 'asc' }] : [{ createIndex: 'asc' }, { accessorId: 'asc' }],
      });
      return rows.map((r) => r.data as unknown as AclToken);
    },
    async putToken(tx, t, secretHash) {
      const row = { data: jsonValue(t), createIndex: BigInt(t.CreateIndex), modifyIndex: BigInt(t.ModifyIndex) };
      if (secretHash !== null) {
        await tx.schedulerAclToken.upsert({
          where: { accessorId: t.AccessorID },
          create: { accessorId: t.AccessorID, secretHash, ...row },
          update: { secretHash, ...row },
        });
      } else {
        await tx.schedulerAclToken.update({ where: { accessorId: t.AccessorID }, data: row });
      }
    },
    async deleteToken(tx, accessorId) {
      await tx.schedulerAclToken.deleteMany({ where: { accessorId } });
    },
    async bootstrapIndex(db) {
      const row = await db.schedulerAclBootstrap.findUnique({ where: { id: 1 } });
      return row ? Number(row.index) : null;
    },
    async markBootstrapped(tx, index) {
      await tx.schedulerAclBootstrap.create({ data: { id: 1, index: BigInt(index) } });
    },
  };
}
