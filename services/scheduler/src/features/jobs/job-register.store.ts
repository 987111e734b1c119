// The register path's SQL (issue 25, placement throughput; issue 27, the event stream's
// writes): a register holds the state store's counter lock (libs/state withWrite) from its
// first statement to its commit, and every other write waits behind it, so it reads what
// it needs in one statement, taken in the lock's own round trip (withWrite's `first`), and
// writes the evaluation, the job and the job version in one more, sent with the commit
// (`atCommit`): two round trips under the lock. It took ten statements through the model
// API before (~12 ms of lock per register), then five round trips (7-9 ms of lock under
// the event-stream bench's fan-out, where registers queued ~30 ms for it at p50).
import { evaluationRow } from '../evaluations/evaluations.store';
import { TERMINAL_EVAL_STATUSES, type Evaluation } from '../evaluations/evaluations.types';
import type { Deployment } from '../deployments/deployments.types';
import type { SqlStatement } from '@selfstack/state';
import type { Db } from '../../shared/common.types';
import type { JobRecord } from './jobs.store';
import type { Job, JobSummary } from './jobs.types';

/** What a register reads about a job, from one statement (one snapshot). */
export interface RegisterSnapshot {
  namespaceExists: boolean;
  existing: JobRecord | null;
  /** The job's deployments, oldest first (CreateIndex, then ID). */
  deployments: Deployment[];
  /** A non-terminal allocation of the job exists (isTerminalAlloc is false for it). */
  hasActiveAlloc: boolean;
  /** A non-terminal evaluation of the job exists. */
  hasOpenEval: boolean;
  /** Any evaluation of the job exists. */
  hadEvals: boolean;
}

const TERMINAL_EVALS = TERMINAL_EVAL_STATUSES.map((s) => `'${s}'`).join(', ');

const SNAPSHOT_SQL = `SELECT
  EXISTS (SELECT 1 FROM "scheduler"."namespaces" WHERE "name" = $1) AS ns,
  j."data"::text AS job, j."summary"::text AS summary,
  (SELECT COALESCE(json_agg("data" ORDER BY "create_index", "id"), '[]')::text
     FROM "scheduler"."deployments" WHERE "namespace" = $1 AND "job_id" = $2) AS deps,
  EXISTS (SELECT 1 FROM "scheduler"."allocations" WHERE "namespace" = $1 AND "job_id" = $2
            AND "desired_status" NOT IN ('stop', 'evict') AND "client_status" NOT IN ('complete', 'failed', 'lost')) AS alloc,
  EXISTS (SELECT 1 FROM "scheduler"."evaluations" WHERE "namespace" = $1 AND "job_id" = $2 AND "status" NOT IN (${TERMINAL_EVALS})) AS open,
  EXISTS (SELECT 1 FROM "scheduler"."evaluations" WHERE "namespace" = $1 AND "job_id" = $2) AS had
FROM (SELECT 1) AS one
LEFT JOIN "scheduler"."jobs" j ON j."namespace" = $1 AND j."id" = $2`;

// Each CTE takes 0 or 1 rows; data-modifying CTEs always run to completion.
const WRITE_SQL = `WITH
e AS (
  INSERT INTO "scheduler"."evaluations" ("id", "namespace", "job_id", "status", "data", "create_index", "modify_index", "priority", "ready_at", "snapshot_index")
  SELECT x."id", x."namespace", x."job_id", x."status", x."data", x."create_index", x."modify_index", x."priority", x."ready_at", x."snapshot_index"
  FROM jsonb_to_recordset($1::jsonb) AS x("id" text, "namespace" text, "job_id" text, "status" text, "data" jsonb, "create_index" bigint, "modify_index" bigint, "priority" int, "ready_at" bigint, "snapshot_index" bigint)
  ON CONFLICT ("id") DO UPDATE SET "namespace" = EXCLUDED."namespace", "job_id" = EXCLUDED."job_id", "status" = EXCLUDED."status", "data" = EXCLUDED."data",
    "create_index" = EXCLUDED."create_index", "modify_index" = EXCLUDED."modify_index", "priority" = EXCLUDED."priority",
    "ready_at" = EXCLUDED."ready_at", "snapshot_index" = EXCLUDED."snapshot_index"
  RETURNING 1
),
j AS (
  INSERT INTO "scheduler"."jobs" ("namespace", "id", "version", "type", "status", "data", "summary", "create_index", "modify_index", "job_modify_index", "parent_id")
  SELECT x."namespace", x."id", x."version", x."type", x."status", x."data", x."summary", x."create_index", x."modify_index", x."job_modify_index", x."parent_id"
  FROM jsonb_to_recordset($2::jsonb) AS x("namespace" text, "id" text, "version" int, "type" text, "status" text, "data" jsonb, "summary" jsonb, "create_index" bigint, "modify_index" bigint, "job_modify_index" bigint, "parent_id" text)
  ON CONFLICT ("namespace", "id") DO UPDATE SET "version" = EXCLUDED."version", "type" = EXCLUDED."type", "status" = EXCLUDED."status",
    "data" = EXCLUDED."data", "summary" = EXCLUDED."summary", "create_index" = EXCLUDED."create_index", "modify_index" = EXCLUDED."modify_index",
    "job_modify_index" = EXCLUDED."job_modify_index", "parent_id" = EXCLUDED."parent_id"
  RETURNING 1
),
v AS (
  INSERT INTO "scheduler"."job_versions" ("namespace", "job_id", "version", "data", "modify_index")
  SELECT x."namespace", x."job_id", x."version", x."data", x."modify_index"
  FROM jsonb_to_recordset($3::jsonb) AS x("namespace" text, "job_id" text, "version" int, "data" jsonb, "modify_index" bigint)
  ON CONFLICT ("namespace", "job_id", "version") DO UPDATE SET "data" = EXCLUDED."data", "modify_index" = EXCLUDED."modify_index"
  RETURNING 1
)
SELECT (SELECT COUNT(*) FROM e)::int AS e, (SELECT COUNT(*) FROM j)::int AS j, (SELECT COUNT(*) FROM v)::int AS v`;

export interface RegisterWrite {
  /** The register's evaluation (none for periodic and parameterized jobs). */
  ev: Evaluation | null;
  /** The job row (the job and its summary), when it changed. */
  record: JobRecord | null;
  /** Also store `record.job` as a job version (a new version was registered). */
  version: boolean;
}

export interface JobRegisterStore {
  /** The snapshot's statement: withWrite's `first`, read right after the counter lock is taken. */
  snapshotStatement(namespace: string, jobId: string): SqlStatement;
  parseSnapshot(rows: unknown[]): RegisterSnapshot;
  snapshot(db: Db, namespace: string, jobId: string): Promise<RegisterSnapshot>;
  /**
   * The statement writing what `w` holds (null: nothing to write): the same rows as
   * EvaluationStore.put, JobStore.put and JobStore.putVersion. Its result is not needed,
   * so the register queues it for the commit's round trip (withWrite's atCommit).
   */
  writeStatement(w: RegisterWrite): SqlStatement | null;
}

type SnapshotRow = { ns: boolean; job: string | null; summary: string | null; deps: string; alloc: boolean; open: boolean; had: boolean };

export function createJobRegisterStore(): JobRegisterStore {
  const self: JobRegisterStore = {
    snapshotStatement: (namespace, jobId) => ({ text: SNAPSHOT_SQL, values: [namespace, jobId] }),

    parseSnapshot(rows) {
      const r = rows[0] as SnapshotRow | undefined;
      if (!r) throw new Error('register snapshot returned no row');
      return {
        namespaceExists: r.ns,
        existing: r.job !== null && r.summary !== null ? { job: JSON.parse(r.job) as Job, summary: JSON.parse(r.summary) as JobSummary } : null,
        deployments: JSON.parse(r.deps) as Deployment[],
        hasActiveAlloc: r.alloc,
        hasOpenEval: r.open,
        hadEvals: r.had,
      };
    },

    async snapshot(db, namespace, jobId) {
      return self.parseSnapshot(await db.$queryRawUnsafe<SnapshotRow[]>(SNAPSHOT_SQL, namespace, jobId));
    },

    writeStatement({ ev, record, version }) {
      if (!ev && !record) return null;
      const evals = ev ? [evaluationRow(ev)] : [];
      const job = record?.job;
      const jobs = record && job
        ? [{
            namespace: job.Namespace,
            id: job.ID,
            version: job.Version,
            type: job.Type,
            status: job.Status,
            data: job,
            summary: record.summary,
            create_index: job.CreateIndex,
            modify_index: job.ModifyIndex,
            job_modify_index: job.JobModifyIndex,
            parent_id: typeof job['ParentID'] === 'string' ? job['ParentID'] : '',
          }]
        : [];
      const versions = job && version ? [{ namespace: job.Namespace, job_id: job.ID, version: job.Version, data: job, modify_index: job.ModifyIndex }] : [];
      return { text: WRITE_SQL, values: [JSON.stringify(evals), JSON.stringify(jobs), JSON.stringify(versions)] };
    },
  };
  return self;
}
