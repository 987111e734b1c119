// The engine's SQL (raw, batched): one-statement snapshots of an evaluation's inputs, the
// broker's candidate list, bulk allocation upserts, per-node usage (node_usage, which
// triggers on allocations keep: migration 20261127151000_scheduler_node_usage) and the
// facts a job's status and summary are computed from. Stores are the only place touching the database
// (docs/architecture.md); these statements are the engine's.
import type { Db } from '../shared/common.types';
import type { Allocation } from '../features/allocations/allocations.types';
import { allocResourceTotals } from '../features/allocations/allocations.types';
import type { Deployment } from '../features/deployments/deployments.types';
import type { Job, JobSummary } from '../features/jobs/jobs.types';
import type { Node } from '../features/nodes/nodes.types';
import type { Evaluation } from '../features/evaluations/evaluations.types';
import { evaluationRow } from '../features/evaluations/evaluations.store';
import type { Resources } from './engine.types';

const LIVE = `"desired_status" = 'run' AND "client_status" NOT IN ('complete', 'failed', 'lost')`;
const ACTIVE_DEPLOYMENT = `('running', 'paused', 'initializing', 'pending', 'blocked', 'unblocking')`;

export interface RawSnapshot {
  index: number;
  nodesIndex: number;
  job: Job | null;
  allocs: Allocation[];
  deployment: Deployment | null;
  usage: Map<string, Resources>;
}

function usageMap(rows: Array<[string, number, number, number]>): Map<string, Resources> {
  const m = new Map<string, Resources>();
  for (const [node, cpu, mem, disk] of rows) m.set(node, { cpu: Number(cpu), memoryMb: Number(mem), diskMb: Number(disk) });
  return m;
}

export interface JobFacts {
  hasActiveDeployment: boolean;
  hasActiveAlloc: boolean;
  hasActiveEval: boolean;
  hadEvals: boolean;
  /** task group -> client status -> count */
  counts: Record<string, Record<string, number>>;
}

export interface CandidateJob {
  namespace: string;
  jobId: string;
}

export function createEngineStore() {
  return {
    /** Everything an evaluation reads, from one statement (one consistent snapshot). */
    async snapshot(db: Db, namespace: string, jobId: string): Promise<RawSnapshot> {
      const rows = await db.$queryRawUnsafe<Array<{ idx: bigint; nidx: bigint | null; job: string | null; allocs: string; dep: string | null; usage: string }>>(
        `SELECT
           (SELECT "value" FROM "scheduler"."state_index" WHERE "id" = 1) AS idx,
           (SELECT "index" FROM "scheduler"."table_index" WHERE "table" = 'nodes') AS nidx,
           (SELECT "data"::text FROM "scheduler"."jobs" WHERE "namespace" = $1 AND "id" = $2) AS job,
           (SELECT COALESCE(json_agg("data" ORDER BY "create_index"), '[]')::text FROM "scheduler"."allocations" WHERE "namespace" = $1 AND "job_id" = $2) AS allocs,
           (SELECT "data"::text FROM "scheduler"."deployments" WHERE "namespace" = $1 AND "job_id" = $2 ORDER BY "create_index" DESC LIMIT 1) AS dep,
           (SELECT COALESCE(json_agg(json_build_array(u."node_id", u."cpu", u."memory_mb", u."disk_mb")), '[]')::text
              FROM "scheduler"."node_usage" u WHERE u."allocs" > 0) AS usage`,
        namespace,
        jobId,
      );
      const r = rows[0];
      if (!r) throw new Error('snapshot query returned no row');
      return {
        index: Number(r.idx),
        nodesIndex: Number(r.nidx ?? 0),
        job: r.job ? (JSON.parse(r.job) as Job) : null,
        allocs: JSON.parse(r.allocs) as Allocation[],
        deployment: r.dep ? (JSON.parse(r.dep) as Deployment) : null,
        usage: usageMap(JSON.parse(r.usage) as Array<[string, number, number, number]>),
      };
    },

    async nodes(db: Db): Promise<Node[]> {
      const rows = await db.$queryRawUnsafe<Array<{ d: string }>>(`SELECT "data"::text AS d FROM "scheduler"."nodes" ORDER BY "id"`);
      return rows.map((r) => JSON.parse(r.d) as Node);
    },

    /** Resources held on these nodes by live allocations (the applier's re-check). */
    async usageOn(db: Db, nodeIds: readonly string[]): Promise<Map<string, Resources>> {
      if (nodeIds.length === 0) return new Map();
      const rows = await db.$queryRawUnsafe<Array<{ node_id: string; c: bigint; m: bigint; d: bigint }>>(
        `SELECT "node_id", "cpu" AS c, "memory_mb" AS m, "disk_mb" AS d FROM "scheduler"."node_usage" WHERE "node_id" = ANY($1::text[]) AND "allocs" > 0`,
        [...nodeIds],
      );
      return usageMap(rows.map((r) => [r.node_id, Number(r.c), Number(r.m), Number(r.d)]));
    },

    async nodesByIds(db: Db, ids: readonly string[]): Promise<Map<string, Node>> {
      if (ids.length === 0) return new Map();
      const rows = await db.$queryRawUnsafe<Array<{ d: string }>>(`SELECT "data"::text AS d FROM "scheduler"."nodes" WHERE "id" = ANY($1::text[])`, [...ids]);
      return new Map(rows.map((r) => JSON.parse(r.d) as Node).map((n) => [n.ID, n]));
    },

    /**
     * Everything the plan applier re-checks, in one statement under the write lock: the
     * job's JobModifyIndex (null: gone), allocations of the job created after `index`, and
     * the plan's nodes with what live allocations hold on them.
     */
    async planCheck(db: Db, namespace: string, jobId: string, index: number, nodeIds: readonly string[]): Promise<{ jobModifyIndex: number | null; newAllocs: number; nodes: Map<string, Node>; usage: Map<string, Resources> }> {
      const rows = await db.$queryRawUnsafe<Array<{ jmi: bigint | null; fresh: number; nodes: string; usage: string }>>(
        `SELECT
           (SELECT "job_modify_index" FROM "scheduler"."jobs" WHERE "namespace" = $1 AND "id" = $2) AS jmi,
           (SELECT COUNT(*)::int FROM "scheduler"."allocations" WHERE "namespace" = $1 AND "job_id" = $2 AND "create_index" > $3) AS fresh,
           (SELECT COALESCE(json_agg("data"), '[]')::text FROM "scheduler"."nodes" WHERE "id" = ANY($4::text[])) AS nodes,
           (SELECT COALESCE(json_agg(json_build_array(u."node_id", u."cpu", u."memory_mb", u."disk_mb")), '[]')::text
              FROM "scheduler"."node_usage" u WHERE u."node_id" = ANY($4::text[]) AND u."allocs" > 0) AS usage`,
        namespace,
        jobId,
        BigInt(index),
        [...nodeIds],
      );
      const r = rows[0];
      return {
        jobModifyIndex: r?.jmi === null || r?.jmi === undefined ? null : Number(r.jmi),
        newAllocs: r?.fresh ?? 0,
        nodes: new Map((JSON.parse(r?.nodes ?? '[]') as Node[]).map((n) => [n.ID, n])),
        usage: usageMap(JSON.parse(r?.usage ?? '[]') as Array<[string, number, number, number]>),
      };
    },

    /** Evaluations written in one statement (the applier's outcome). */
    async putEvals(tx: Db, evals: readonly Evaluation[]): Promise<void> {
      if (evals.length === 0) return;
      const rows = evals.map(evaluationRow);
      await tx.$executeRawUnsafe(
        `INSERT INTO "scheduler"."evaluations" ("id", "namespace", "job_id", "status", "data", "create_index", "modify_index", "priority", "ready_at", "snapshot_index")
         SELECT x."id", x."namespace", x."job_id", x."status", x."data", x."create_index", x."modify_index", x."priority", x."ready_at", x."snapshot_index"
         FROM jsonb_to_recordset($1::jsonb) AS x("id" text, "namespace" text, "job_id" text, "status" text, "data" jsonb, "create_index" bigint, "modify_index" bigint, "priority" int, "ready_at" bigint, "snapshot_index" bigint)
         ON CONFLICT ("id") DO UPDATE SET "status" = EXCLUDED."status", "data" = EXCLUDED."data", "modify_index" = EXCLUDED."modify_index",
           "priority" = EXCLUDED."priority", "ready_at" = EXCLUDED."ready_at", "snapshot_index" = EXCLUDED."snapshot_index"`,
        JSON.stringify(rows),
      );
    },

    /** Open evaluations of the job among `ids` (settling re-checks they are still open). */
    async openAmong(tx: Db, ids: readonly string[]): Promise<Evaluation[]> {
      if (ids.length === 0) return [];
      const rows = await tx.$queryRawUnsafe<Array<{ d: string }>>(
        `SELECT "data"::text AS d FROM "scheduler"."evaluations" WHERE "id" = ANY($1::text[]) AND "status" IN ('pending', 'blocked')`,
        [...ids],
      );
      return rows.map((r) => JSON.parse(r.d) as Evaluation);
    },

    /** Allocations of the job created after `index` (another writer planned the job meanwhile). */
    async allocsCreatedAfter(db: Db, namespace: string, jobId: string, index: number): Promise<number> {
      const rows = await db.$queryRawUnsafe<Array<{ n: number }>>(
        `SELECT COUNT(*)::int AS n FROM "scheduler"."allocations" WHERE "namespace" = $1 AND "job_id" = $2 AND "create_index" > $3`,
        namespace,
        jobId,
        BigInt(index),
      );
      return rows[0]?.n ?? 0;
    },

    async upsertAllocs(tx: Db, allocs: readonly Allocation[]): Promise<void> {
      if (allocs.length === 0) return;
      const rows = allocs.map((a) => {
        const r = allocResourceTotals(a);
        return {
          id: a.ID,
          namespace: a.Namespace,
          job_id: a.JobID,
          node_id: a.NodeID,
          eval_id: a.EvalID,
          deployment_id: a.DeploymentID,
          data: a,
          create_index: a.CreateIndex,
          modify_index: a.ModifyIndex,
          desired_status: a.DesiredStatus,
          client_status: a.ClientStatus,
          cpu: r.cpu,
          memory_mb: r.memoryMb,
          disk_mb: r.diskMb,
        };
      });
      await tx.$executeRawUnsafe(
        `INSERT INTO "scheduler"."allocations" ("id", "namespace", "job_id", "node_id", "eval_id", "deployment_id", "data", "create_index", "modify_index", "desired_status", "client_status", "cpu", "memory_mb", "disk_mb")
         SELECT x."id", x."namespace", x."job_id", x."node_id", x."eval_id", x."deployment_id", x."data", x."create_index", x."modify_index", x."desired_status", x."client_status", x."cpu", x."memory_mb", x."disk_mb"
         FROM jsonb_to_recordset($1::jsonb) AS x("id" text, "namespace" text, "job_id" text, "node_id" text, "eval_id" text, "deployment_id" text, "data" jsonb, "create_index" bigint, "modify_index" bigint, "desired_status" text, "client_status" text, "cpu" int, "memory_mb" int, "disk_mb" int)
         ON CONFLICT ("id") DO UPDATE SET "node_id" = EXCLUDED."node_id", "eval_id" = EXCLUDED."eval_id", "deployment_id" = EXCLUDED."deployment_id",
           "data" = EXCLUDED."data", "modify_index" = EXCLUDED."modify_index", "desired_status" = EXCLUDED."desired_status",
           "client_status" = EXCLUDED."client_status", "cpu" = EXCLUDED."cpu", "memory_mb" = EXCLUDED."memory_mb", "disk_mb" = EXCLUDED."disk_mb"`,
        JSON.stringify(rows),
      );
    },

    /** Open evaluations of a job and the capacity index, in one statement (the broker under a job's lock). */
    async openEvalsAndCapacity(db: Db, namespace: string, jobId: string): Promise<{ evals: Evaluation[]; capacityIndex: number }> {
      const rows = await db.$queryRawUnsafe<Array<{ evals: string; cap: bigint }>>(
        `SELECT (SELECT COALESCE(json_agg("data" ORDER BY "create_index", "id"), '[]')::text FROM "scheduler"."evaluations"
                   WHERE "namespace" = $1 AND "job_id" = $2 AND "status" IN ('pending', 'blocked')) AS evals,
                (SELECT COALESCE(MAX("index"), 0) FROM "scheduler"."table_index" WHERE "table" IN ('nodes', 'capacity')) AS cap`,
        namespace,
        jobId,
      );
      return { evals: JSON.parse(rows[0]?.evals ?? '[]') as Evaluation[], capacityIndex: Number(rows[0]?.cap ?? 0) };
    },

    /** Open evaluations of a job (pending and blocked), oldest first. */
    async openEvals(db: Db, namespace: string, jobId: string): Promise<Evaluation[]> {
      const rows = await db.$queryRawUnsafe<Array<{ d: string }>>(
        `SELECT "data"::text AS d FROM "scheduler"."evaluations" WHERE "namespace" = $1 AND "job_id" = $2 AND "status" IN ('pending', 'blocked') ORDER BY "create_index", "id"`,
        namespace,
        jobId,
      );
      return rows.map((r) => JSON.parse(r.d) as Evaluation);
    },

    /**
     * Jobs with an evaluation ready to process, highest priority and oldest first: pending
     * evaluations whose WaitUntil has passed, and blocked ones computed before the latest
     * change of capacity (a node written, or allocations freeing resources).
     */
    async candidates(db: Db, nowMs: number, limit: number): Promise<CandidateJob[]> {
      const rows = await db.$queryRawUnsafe<Array<{ namespace: string; job_id: string }>>(
        `WITH cap AS (SELECT COALESCE(MAX("index"), 0) AS i FROM "scheduler"."table_index" WHERE "table" IN ('nodes', 'capacity'))
         SELECT "namespace", "job_id" FROM "scheduler"."evaluations", cap
         WHERE "status" IN ('pending', 'blocked') AND (("status" = 'pending' AND "ready_at" <= $1) OR ("status" = 'blocked' AND "snapshot_index" < cap.i))
         GROUP BY "namespace", "job_id"
         ORDER BY MAX("priority") DESC, MIN("create_index")
         LIMIT $2`,
        BigInt(nowMs),
        limit,
      );
      return rows.map((r) => ({ namespace: r.namespace, jobId: r.job_id }));
    },

    /** The earliest future WaitUntil (ms) of a pending evaluation, or null. */
    async nextWaitUntil(db: Db, nowMs: number): Promise<number | null> {
      const rows = await db.$queryRawUnsafe<Array<{ t: bigint | null }>>(
        `SELECT MIN("ready_at") AS t FROM "scheduler"."evaluations" WHERE "status" = 'pending' AND "ready_at" > $1`,
        BigInt(nowMs),
      );
      const t = rows[0]?.t;
      return t === null || t === undefined ? null : Number(t);
    },

    async capacityIndex(db: Db): Promise<number> {
      const rows = await db.$queryRawUnsafe<Array<{ i: bigint }>>(
        `SELECT COALESCE(MAX("index"), 0) AS i FROM "scheduler"."table_index" WHERE "table" IN ('nodes', 'capacity')`,
      );
      return Number(rows[0]?.i ?? 0);
    },

    /** The job row with its status facts, in one statement (job-state.ts). */
    async jobWithFacts(db: Db, namespace: string, jobId: string): Promise<{ job: Job; summary: JobSummary; facts: JobFacts } | null> {
      const rows = await db.$queryRawUnsafe<Array<{ job: string; summary: string; dep: boolean; alloc: boolean; ev: boolean; had: boolean; counts: string }>>(
        `SELECT j."data"::text AS job, j."summary"::text AS summary,
           EXISTS (SELECT 1 FROM "scheduler"."deployments" WHERE "namespace" = $1 AND "job_id" = $2 AND "status" IN ${ACTIVE_DEPLOYMENT}) AS dep,
           EXISTS (SELECT 1 FROM "scheduler"."allocations" WHERE "namespace" = $1 AND "job_id" = $2 AND ${LIVE}) AS alloc,
           EXISTS (SELECT 1 FROM "scheduler"."evaluations" WHERE "namespace" = $1 AND "job_id" = $2 AND "status" NOT IN ('complete', 'failed', 'canceled')) AS ev,
           EXISTS (SELECT 1 FROM "scheduler"."evaluations" WHERE "namespace" = $1 AND "job_id" = $2) AS had,
           (SELECT COALESCE(json_agg(json_build_array(c.tg, c.s, c.n)), '[]')::text FROM (
              SELECT "data"->>'TaskGroup' AS tg, "client_status" AS s, COUNT(*)::int AS n
              FROM "scheduler"."allocations" WHERE "namespace" = $1 AND "job_id" = $2 GROUP BY 1, 2) c) AS counts
         FROM "scheduler"."jobs" j WHERE j."namespace" = $1 AND j."id" = $2`,
        namespace,
        jobId,
      );
      const r = rows[0];
      if (!r) return null;
      const counts: JobFacts['counts'] = {};
      for (const [tg, st, n] of JSON.parse(r.counts) as Array<[string, string, number]>) (counts[tg] ??= {})[st] = n;
      return {
        job: JSON.parse(r.job) as Job,
        summary: JSON.parse(r.summary) as JobSummary,
        facts: { hasActiveDeployment: r.dep, hasActiveAlloc: r.alloc, hasActiveEval: r.ev, hadEvals: r.had, counts },
      };
    },

    /** Writes a job's status (and its data) and summary without touching its spec columns. */
    async setStatus(tx: Db, job: Job, summary: JobSummary): Promise<void> {
      await tx.$executeRawUnsafe(
        `UPDATE "scheduler"."jobs" SET "status" = $3, "data" = $4::jsonb, "summary" = $5::jsonb, "modify_index" = $6 WHERE "namespace" = $1 AND "id" = $2`,
        job.Namespace,
        job.ID,
        job.Status,
        JSON.stringify(job),
        JSON.stringify(summary),
        BigInt(job.ModifyIndex),
      );
    },

    /** Status inputs and allocation counts of one job (reference §1.4, JobSummary). */
    async jobFacts(db: Db, namespace: string, jobId: string): Promise<JobFacts> {
      const rows = await db.$queryRawUnsafe<Array<{ dep: boolean; alloc: boolean; ev: boolean; had: boolean; counts: string }>>(
        `SELECT
           EXISTS (SELECT 1 FROM "scheduler"."deployments" WHERE "namespace" = $1 AND "job_id" = $2 AND "status" IN ${ACTIVE_DEPLOYMENT}) AS dep,
           EXISTS (SELECT 1 FROM "scheduler"."allocations" WHERE "namespace" = $1 AND "job_id" = $2 AND ${LIVE}) AS alloc,
           EXISTS (SELECT 1 FROM "scheduler"."evaluations" WHERE "namespace" = $1 AND "job_id" = $2 AND "status" NOT IN ('complete', 'failed', 'canceled')) AS ev,
           EXISTS (SELECT 1 FROM "scheduler"."evaluations" WHERE "namespace" = $1 AND "job_id" = $2) AS had,
           (SELECT COALESCE(json_agg(json_build_array(c.tg, c.s, c.n)), '[]')::text FROM (
              SELECT "data"->>'TaskGroup' AS tg, "client_status" AS s, COUNT(*)::int AS n
              FROM "scheduler"."allocations" WHERE "namespace" = $1 AND "job_id" = $2 GROUP BY 1, 2) c) AS counts`,
        namespace,
        jobId,
      );
      const r = rows[0];
      const counts: JobFacts['counts'] = {};
      for (const [tg, s, n] of JSON.parse(r?.counts ?? '[]') as Array<[string, string, number]>) {
        (counts[tg] ??= {})[s] = n;
      }
      return {
        hasActiveDeployment: r?.dep === true,
        hasActiveAlloc: r?.alloc === true,
        hasActiveEval: r?.ev === true,
        hadEvals: r?.had === true,
        counts,
      };
    },

    /** Children of a periodic/parameterized job by status. */
    async childCounts(db: Db, namespace: string, parentId: string): Promise<{ Pending: number; Running: number; Dead: number }> {
      const rows = await db.$queryRawUnsafe<Array<{ status: string; n: number }>>(
        `SELECT "status", COUNT(*)::int AS n FROM "scheduler"."jobs" WHERE "namespace" = $1 AND "parent_id" = $2 GROUP BY "status"`,
        namespace,
        parentId,
      );
      const out = { Pending: 0, Running: 0, Dead: 0 };
      for (const r of rows) {
        if (r.status === 'running') out.Running += r.n;
        else if (r.status === 'dead') out.Dead += r.n;
        else out.Pending += r.n;
      }
      return out;
    },

    /** Jobs a node change concerns: those with live allocations on it, and every system job. */
    async jobsForNode(db: Db, nodeId: string): Promise<Array<{ namespace: string; id: string; type: string; priority: number; jobModifyIndex: number }>> {
      const rows = await db.$queryRawUnsafe<Array<{ namespace: string; id: string; type: string; priority: number; jmi: bigint }>>(
        `SELECT j."namespace", j."id", j."type", COALESCE(("data"->>'Priority')::int, 50) AS priority, j."job_modify_index" AS jmi
         FROM "scheduler"."jobs" j
         WHERE (j."type" IN ('system', 'sysbatch') AND NOT COALESCE(("data"->>'Stop')::boolean, false))
            OR EXISTS (SELECT 1 FROM "scheduler"."allocations" a WHERE a."namespace" = j."namespace" AND a."job_id" = j."id" AND a."node_id" = $1 AND a."desired_status" = 'run' AND a."client_status" NOT IN ('complete', 'failed', 'lost'))
         ORDER BY j."namespace", j."id"`,
        nodeId,
      );
      return rows.map((r) => ({ namespace: r.namespace, id: r.id, type: r.type, priority: Number(r.priority), jobModifyIndex: Number(r.jmi) }));
    },

    /** Running deployments (the progress-deadline timer reads their task groups). */
    async runningDeployments(db: Db): Promise<Deployment[]> {
      const rows = await db.$queryRawUnsafe<Array<{ d: string }>>(`SELECT "data"::text AS d FROM "scheduler"."deployments" WHERE "status" = 'running'`);
      return rows.map((r) => JSON.parse(r.d) as Deployment);
    },

    /** Periodic jobs (enabled, not stopped) with their last launch (Unix ms, null: none yet). */
    async periodicJobs(db: Db): Promise<Array<{ job: Job; lastLaunchMs: number | null }>> {
      const rows = await db.$queryRawUnsafe<Array<{ d: string; l: bigint | null }>>(
        `SELECT j."data"::text AS d, p."launch_ms" AS l FROM "scheduler"."jobs" j
         LEFT JOIN "scheduler"."periodic_launches" p ON p."namespace" = j."namespace" AND p."job_id" = j."id"
         WHERE j."data"->'Periodic' IS NOT NULL AND j."data"->'Periodic' <> 'null'::jsonb
           AND COALESCE((j."data"->'Periodic'->>'Enabled')::boolean, true) AND NOT COALESCE((j."data"->>'Stop')::boolean, false)`,
      );
      return rows.map((r) => ({ job: JSON.parse(r.d) as Job, lastLaunchMs: r.l === null ? null : Number(r.l) }));
    },

    async lastLaunch(db: Db, namespace: string, jobId: string): Promise<number | null> {
      const rows = await db.$queryRawUnsafe<Array<{ l: bigint }>>(
        `SELECT "launch_ms" AS l FROM "scheduler"."periodic_launches" WHERE "namespace" = $1 AND "job_id" = $2`,
        namespace,
        jobId,
      );
      return rows[0] ? Number(rows[0].l) : null;
    },

    async setLaunch(tx: Db, namespace: string, jobId: string, launchMs: number, index: number): Promise<void> {
      await tx.$executeRawUnsafe(
        `INSERT INTO "scheduler"."periodic_launches" ("namespace", "job_id", "launch_ms", "create_index", "modify_index") VALUES ($1, $2, $3, $4, $4)
         ON CONFLICT ("namespace", "job_id") DO UPDATE SET "launch_ms" = EXCLUDED."launch_ms", "modify_index" = EXCLUDED."modify_index"`,
        namespace,
        jobId,
        BigInt(launchMs),
        BigInt(index),
      );
    },

    /** Children of a job that are not dead (prohibit_overlap). */
    async liveChildren(db: Db, namespace: string, parentId: string): Promise<number> {
      const rows = await db.$queryRawUnsafe<Array<{ n: number }>>(
        `SELECT COUNT(*)::int AS n FROM "scheduler"."jobs" WHERE "namespace" = $1 AND "parent_id" = $2 AND "status" <> 'dead'`,
        namespace,
        parentId,
      );
      return rows[0]?.n ?? 0;
    },

    async jobExists(db: Db, namespace: string, id: string): Promise<boolean> {
      const rows = await db.$queryRawUnsafe<Array<{ n: number }>>(`SELECT COUNT(*)::int AS n FROM "scheduler"."jobs" WHERE "namespace" = $1 AND "id" = $2`, namespace, id);
      return (rows[0]?.n ?? 0) > 0;
    },

    /** A dispatched child carrying this idempotency token, if any. */
    async childByToken(db: Db, namespace: string, parentId: string, token: string): Promise<Job | null> {
      const rows = await db.$queryRawUnsafe<Array<{ d: string }>>(
        `SELECT "data"::text AS d FROM "scheduler"."jobs" WHERE "namespace" = $1 AND "parent_id" = $2 AND "data"->>'DispatchIdempotencyToken' = $3 LIMIT 1`,
        namespace,
        parentId,
        token,
      );
      return rows[0] ? (JSON.parse(rows[0].d) as Job) : null;
    },

    async scalingEvents(db: Db, namespace: string, jobId: string): Promise<Record<string, unknown[]>> {
      const rows = await db.$queryRawUnsafe<Array<{ e: string }>>(`SELECT "scaling_events"::text AS e FROM "scheduler"."jobs" WHERE "namespace" = $1 AND "id" = $2`, namespace, jobId);
      return rows[0] ? (JSON.parse(rows[0].e) as Record<string, unknown[]>) : {};
    },

    async setScalingEvents(tx: Db, namespace: string, jobId: string, events: Record<string, unknown[]>): Promise<void> {
      await tx.$executeRawUnsafe(`UPDATE "scheduler"."jobs" SET "scaling_events" = $3::jsonb WHERE "namespace" = $1 AND "id" = $2`, namespace, jobId, JSON.stringify(events));
    },

    async setSummary(tx: Db, namespace: string, jobId: string, summary: JobSummary): Promise<void> {
      await tx.$executeRawUnsafe(
        `UPDATE "scheduler"."jobs" SET "summary" = $3::jsonb WHERE "namespace" = $1 AND "id" = $2`,
        namespace,
        jobId,
        JSON.stringify(summary),
      );
    },
  };
}

export type EngineStore = ReturnType<typeof createEngineStore>;
