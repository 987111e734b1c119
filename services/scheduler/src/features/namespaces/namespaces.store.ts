// Namespaces in Postgres (scheduler.namespaces).
import { jsonValue } from '@selfstack/db';
import type { Db, JsonObject } from '../../shared/common.types';

export type Namespace = JsonObject & { Name: string; Description: string; CreateIndex: number; ModifyIndex: number };

export interface NamespaceStore {
  get(db: Db, name: string): Promise<Namespace | null>;
  list(db: Db, prefix: string): Promise<Namespace[]>;
  names(db: Db): Promise<string[]>;
  put(tx: Db, ns: Namespace): Promise<void>;
  delete(tx: Db, name: string): Promise<void>;
}

export function createNamespaceStore(): NamespaceStore {
  return {
    async get(db, name) {
      const row = await db.schedulerNamespace.findUnique({ where: { name } });
      return row ? (row.data as unknown as Namespace) : null;
    },
    async list(db, prefix) {
      const rows = await db.schedulerNamespace.findMany({
        where: prefix !== '' ? { name: { startsWith: prefix } } : {},
        orderBy: { name: 'asc' },
      });
      return rows.map((r) => r.data as unknown as Namespace);
    },
    async names(db) {
      const rows = await db.schedulerNamespace.findMany({ select: { name: true }, orderBy: { name: 'asc' } });
      return rows.map((r) => r.name);
    },
    async put(tx, ns) {
      const row = { data: jsonValue(ns), createIndex: BigInt(ns.CreateIndex), modifyIndex: BigInt(ns.ModifyIndex) };
      await tx.schedulerNamespace.upsert({ where: { name: ns.Name }, create: { name: ns.Name, ...row }, update: row });
    },
    async delete(tx, name) {
      await tx.schedulerNamespace.deleteMany({ where: { name } });
    },
  };
}
