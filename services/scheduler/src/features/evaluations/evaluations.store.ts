// Evaluations in Postgres (scheduler.evaluations), listed by CreateIndex (reference §0.3).
import { jsonValue } from '@selfstack/db';
import type { Db } from '../../shared/common.types';
import type { Evaluation } from './evaluations.types';

/** WaitUntil as Unix milliseconds (0 when unset or Go's zero time). */
export function waitUntilMs(ev: Evaluation): number {
  const w = ev['WaitUntil'];
  if (typeof w !== 'string' || w === '' || w.startsWith('0001-')) return 0;
  const ms = Date.parse(w);
  return Number.isFinite(ms) ? ms : 0;
}

/**
 * An evaluation as a row of scheduler.evaluations in the snake_case JSON the set-based
 * writes read back with jsonb_to_recordset (the register's and the engine's statements).
 */
export function evaluationRow(ev: Evaluation) {
  return {
    id: ev.ID,
    namespace: ev.Namespace,
    job_id: ev.JobID,
    status: ev.Status,
    data: ev,
    create_index: ev.CreateIndex,
    modify_index: ev.ModifyIndex,
    priority: ev.Priority,
    ready_at: waitUntilMs(ev),
    snapshot_index: Number(ev['SnapshotIndex'] ?? 0) || 0,
  };
}

export interface EvalListQuery {
  namespaces: readonly string[] | null;
  prefix: string;
  jobId?: string;
  status?: string;
}

export interface EvaluationStore {
  get(db: Db, id: string): Promise<Evaluation | null>;
  list(db: Db, q: EvalListQuery): Promise<Evaluation[]>;
  put(tx: Db, ev: Evaluation): Promise<void>;
  byJob(db: Db, namespace: string, jobId: string): Promise<Evaluation[]>;
}

export function createEvaluationStore(): EvaluationStore {
  return {
    async get(db, id) {
      const row = await db.schedulerEvaluation.findUnique({ where: { id } });
      return row ? (row.data as unknown as Evaluation) : null;
    },
    async list(db, q) {
      const rows = await db.schedulerEvaluation.findMany({
        where: {
          ...(q.namespaces !== null ? { namespace: { in: [...q.namespaces] } } : {}),
          ...(q.prefix !== '' ? { id: { startsWith: q.prefix } } : {}),
          ...(q.jobId !== undefined ? { jobId: q.jobId } : {}),
          ...(q.status !== undefined ? { status: q.status } : {}),
        },
        // With a prefix Nomad walks the ID index (reference §0.3).
        orderBy: q.prefix !== '' ? [{ id: 'asc' }] : [{ createIndex: 'asc' }, { id: 'asc' }],
        select: { data: true },
      });
      return rows.map((r) => r.data as unknown as Evaluation);
    },
    async put(tx, ev) {
      const row = {
        namespace: ev.Namespace,
        jobId: ev.JobID,
        status: ev.Status,
        // Read by the engine's broker (engine/broker.ts) without parsing data.
        priority: ev.Priority,
        readyAt: BigInt(waitUntilMs(ev)),
        snapshotIndex: BigInt(Number(ev['SnapshotIndex'] ?? 0) || 0),
        data: jsonValue(ev),
        createIndex: BigInt(ev.CreateIndex),
        modifyIndex: BigInt(ev.ModifyIndex),
      };
      await tx.schedulerEvaluation.upsert({ where: { id: ev.ID }, create: { id: ev.ID, ...row }, update: row });
    },
    async byJob(db, namespace, jobId) {
      const rows = await db.schedulerEvaluation.findMany({
        where: { namespace, jobId },
        orderBy: [{ createIndex: 'asc' }, { id: 'asc' }],
        select: { data: true },
      });
      return rows.map((r) => r.data as unknown as Evaluation);
    },
  };
}
