// Allocations in Postgres (scheduler.allocations), listed by CreateIndex (reference §0.3).
import { jsonValue } from '@selfstack/db';
import type { Db } from '../../shared/common.types';
import { allocResourceTotals, type Allocation } from './allocations.types';

export interface AllocListQuery {
  namespaces: readonly string[] | null;
  prefix: string;
}

export interface AllocationStore {
  get(db: Db, id: string): Promise<Allocation | null>;
  getMany(db: Db, ids: readonly string[]): Promise<Allocation[]>;
  list(db: Db, q: AllocListQuery): Promise<Allocation[]>;
  where(db: Db, w: { namespace?: string; jobId?: string; nodeId?: string; evalId?: string; deploymentId?: string }): Promise<Allocation[]>;
  put(tx: Db, alloc: Allocation): Promise<void>;
}

export function createAllocationStore(): AllocationStore {
  const select = { data: true } as const;
  const order = [{ createIndex: 'asc' as const }, { id: 'asc' as const }];
  return {
    async get(db, id) {
      const row = await db.schedulerAllocation.findUnique({ where: { id } });
      return row ? (row.data as unknown as Allocation) : null;
    },
    async getMany(db, ids) {
      const rows = await db.schedulerAllocation.findMany({ where: { id: { in: [...ids] } }, select });
      return rows.map((r) => r.data as unknown as Allocation);
    },
    async list(db, q) {
      const rows = await db.schedulerAllocation.findMany({
        where: {
          ...(q.namespaces !== null ? { namespace: { in: [...q.namespaces] } } : {}),
          ...(q.prefix !== '' ? { id: { startsWith: q.prefix } } : {}),
        },
        orderBy: q.prefix !== '' ? [{ id: 'asc' }] : order,
        select,
      });
      return rows.map((r) => r.data as unknown as Allocation);
    },
    async where(db, w) {
      const rows = await db.schedulerAllocation.findMany({ where: { ...w }, orderBy: order, select });
      return rows.map((r) => r.data as unknown as Allocation);
    },
    async put(tx, a) {
      const row = {
        namespace: a.Namespace,
        jobId: a.JobID,
        nodeId: a.NodeID,
        evalId: a.EvalID,
        deploymentId: a.DeploymentID,
        // Copied for the engine's per-node usage sums (engine/engine.store.ts).
        desiredStatus: a.DesiredStatus,
        clientStatus: a.ClientStatus,
        ...allocResourceTotals(a),
        data: jsonValue(a),
        createIndex: BigInt(a.CreateIndex),
        modifyIndex: BigInt(a.ModifyIndex),
      };
      await tx.schedulerAllocation.upsert({ where: { id: a.ID }, create: { id: a.ID, ...row }, update: row });
    },
  };
}
