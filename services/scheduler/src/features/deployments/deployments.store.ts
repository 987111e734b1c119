// Deployments in Postgres (scheduler.deployments), listed by CreateIndex (reference §0.3).
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

const PUT_SQL = `INSERT INTO "scheduler"."deployments" ("id", "namespace", "job_id", "status", "data", "create_index", "modify_index")
  VALUES ($1, $2, $3, $4, $5::jsonb, $6::bigint, $7::bigint)
  ON CONFLICT ("id") DO UPDATE SET "namespace" = EXCLUDED."namespace", "job_id" = EXCLUDED."job_id", "status" = EXCLUDED."status",
    "data" = EXCLUDED."data", "create_index" = EXCLUDED."create_index", "modify_index" = EXCLUDED."modify_index"`;

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
      // Raw SQL: it runs in the raw-SQL transactions too (a register cancelling a deployment).
      await tx.$executeRawUnsafe(PUT_SQL, d.ID, d.Namespace, d.JobID, d.Status, JSON.stringify(d), d.CreateIndex, d.ModifyIndex);
    },
  };
}
