// Jobs, their versions and summaries in Postgres (scheduler.jobs, scheduler.job_versions).
import { jsonValue, type Prisma } from '@selfstack/db';
import type { Db } from '../../shared/common.types';
import type { Job, JobSummary } from './jobs.types';

export interface JobRecord {
  job: Job;
  summary: JobSummary;
}

function toRecord(row: { data: Prisma.JsonValue; summary: Prisma.JsonValue }): JobRecord {
  return { job: row.data as unknown as Job, summary: row.summary as unknown as JobSummary };
}

export interface JobStore {
  get(db: Db, namespace: string, id: string): Promise<JobRecord | null>;
  /** Every job of every namespace, by namespace then ID (jsonb parsed once, as text). */
  all(db: Db): Promise<JobRecord[]>;
  versions(db: Db, namespace: string, id: string): Promise<Job[]>;
  put(tx: Db, record: JobRecord): Promise<void>;
  putVersion(tx: Db, job: Job): Promise<void>;
  delete(tx: Db, namespace: string, id: string): Promise<void>;
  countInNamespace(db: Db, namespace: string): Promise<number>;
}

export function createJobStore(): JobStore {
  return {
    async get(db, namespace, id) {
      const row = await db.schedulerJob.findUnique({ where: { namespace_id: { namespace, id } } });
      return row ? toRecord(row) : null;
    },
    async all(db) {
      const rows = await db.$queryRawUnsafe<Array<{ d: string; s: string }>>(
        'SELECT data::text AS d, summary::text AS s FROM "scheduler"."jobs" ORDER BY "namespace" COLLATE "C", "id" COLLATE "C"',
      );
      return rows.map((r) => ({ job: JSON.parse(r.d) as Job, summary: JSON.parse(r.s) as JobSummary }));
    },
    async versions(db, namespace, id) {
      const rows = await db.schedulerJobVersion.findMany({
        where: { namespace, jobId: id },
        orderBy: { version: 'desc' },
        select: { data: true },
      });
      return rows.map((r) => r.data as unknown as Job);
    },
    async put(tx, { job, summary }) {
      const row = {
        version: job.Version,
        type: job.Type,
        status: job.Status,
        data: jsonValue(job),
        summary: jsonValue(summary),
        createIndex: BigInt(job.CreateIndex),
        modifyIndex: BigInt(job.ModifyIndex),
        jobModifyIndex: BigInt(job.JobModifyIndex),
        parentId: typeof job['ParentID'] === 'string' ? job['ParentID'] : '',
      };
      await tx.schedulerJob.upsert({
        where: { namespace_id: { namespace: job.Namespace, id: job.ID } },
        create: { namespace: job.Namespace, id: job.ID, ...row },
        update: row,
      });
    },
    async putVersion(tx, job) {
      const row = { data: jsonValue(job), modifyIndex: BigInt(job.ModifyIndex) };
      await tx.schedulerJobVersion.upsert({
        where: { namespace_jobId_version: { namespace: job.Namespace, jobId: job.ID, version: job.Version } },
        create: { namespace: job.Namespace, jobId: job.ID, version: job.Version, ...row },
        update: row,
      });
    },
    async delete(tx, namespace, id) {
      await tx.schedulerJob.deleteMany({ where: { namespace, id } });
      await tx.schedulerJobVersion.deleteMany({ where: { namespace, jobId: id } });
    },
    async countInNamespace(db, namespace) {
      return db.schedulerJob.count({ where: { namespace } });
    },
  };
}
