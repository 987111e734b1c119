// Deployments in Postgres (scheduler.deployments), listed by CreateIndex (reference §0.3).
import { jsonValue } from '@selfstack/db';
import type { Db } from '../../shared/common.types';
import type { Deployment } from './deployments.types';

export interface DeploymentListQuery {
  namespaces: readonly string[] | null;
  prefix: string;
}

export interface DeploymentStore {
  get(db: Db, id: string): Promise<Deployment | null>;
  list(db: Db, q: DeploymentListQuery): Promise<Deployment[]>;
  byJob(db: Db, namespace: string, jobId: string): Promise<Deployment[]>;
  put(tx: Db, d: Deployment): Promise<void>;
}

export function createDeploymentStore(): DeploymentStore {
  const order = [{ createIndex: 'asc' as const }, { id: 'asc' as const }];
  return {
    async get(db, id) {
      const row = await db.schedulerDeployment.findUnique({ where: { id } });
      return row ? (row.data as unknown as Deployment) : null;
    },
    async list(db, q) {
      const rows = await db.schedulerDeployment.findMany({
        where: {
          ...(q.namespaces !== null ? { namespace: { in: [...q.namespaces] } } : {}),
          ...(q.prefix !== '' ? { id: { startsWith: q.prefix } } : {}),
        },
        orderBy: q.prefix !== '' ? [{ id: 'asc' }] : order,
        select: { data: true },
      });
      return rows.map((r) => r.data as unknown as Deployment);
    },
    async byJob(db, namespace, jobId) {
      const rows = await db.schedulerDeployment.findMany({ where: { namespace, jobId }, orderBy: order, select: { data: true } });
      return rows.map((r) => r.data as unknown as Deployment);
    },
    async put(tx, d) {
      const row = {
        namespace: d.Namespace,
        jobId: d.JobID,
        status: d.Status,
        data: jsonValue(d),
        createIndex: BigInt(d.CreateIndex),
        modifyIndex: BigInt(d.ModifyIndex),
      };
      await tx.schedulerDeployment.upsert({ where: { id: d.ID }, create: { id: d.ID, ...row }, update: row });
    },
  };
}
