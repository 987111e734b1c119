-- The scheduling engine (issue 25; docs/scheduler.md "Scheduling").

-- Evaluations: what the broker's claim reads without parsing jsonb. ready_at is the
-- WaitUntil in Unix milliseconds (0 = now); snapshot_index is the state index a blocked
-- evaluation was computed at (capacity written after it unblocks it).
ALTER TABLE "scheduler"."evaluations" ADD COLUMN "priority" INTEGER NOT NULL DEFAULT 50;
ALTER TABLE "scheduler"."evaluations" ADD COLUMN "ready_at" BIGINT NOT NULL DEFAULT 0;
ALTER TABLE "scheduler"."evaluations" ADD COLUMN "snapshot_index" BIGINT NOT NULL DEFAULT 0;
CREATE INDEX "evaluations_open_idx" ON "scheduler"."evaluations" ("namespace", "job_id") WHERE "status" IN ('pending', 'blocked');
CREATE INDEX "evaluations_pending_ready_idx" ON "scheduler"."evaluations" ("ready_at") WHERE "status" = 'pending';

-- Allocations: the columns bin packing sums per node (resources held by live allocations).
ALTER TABLE "scheduler"."allocations" ADD COLUMN "desired_status" TEXT NOT NULL DEFAULT 'run';
ALTER TABLE "scheduler"."allocations" ADD COLUMN "client_status" TEXT NOT NULL DEFAULT 'pending';
ALTER TABLE "scheduler"."allocations" ADD COLUMN "cpu" INTEGER NOT NULL DEFAULT 0;
ALTER TABLE "scheduler"."allocations" ADD COLUMN "memory_mb" INTEGER NOT NULL DEFAULT 0;
ALTER TABLE "scheduler"."allocations" ADD COLUMN "disk_mb" INTEGER NOT NULL DEFAULT 0;
CREATE INDEX "allocations_live_node_idx" ON "scheduler"."allocations" ("node_id") WHERE "desired_status" = 'run' AND "client_status" NOT IN ('complete', 'failed', 'lost');

-- Jobs: the parent of periodic/dispatched children, and scaling events per task group
-- (Nomad keeps them beside the job, not in its spec).
ALTER TABLE "scheduler"."jobs" ADD COLUMN "parent_id" TEXT NOT NULL DEFAULT '';
ALTER TABLE "scheduler"."jobs" ADD COLUMN "scaling_events" JSONB NOT NULL DEFAULT '{}';
CREATE INDEX "jobs_namespace_parent_id_idx" ON "scheduler"."jobs" ("namespace", "parent_id");

-- Periodic launches (Nomad's periodic_launch table): the last launch of each periodic job.
CREATE TABLE "scheduler"."periodic_launches" (
    "namespace" TEXT NOT NULL,
    "job_id" TEXT NOT NULL,
    "launch_ms" BIGINT NOT NULL,
    "create_index" BIGINT NOT NULL,
    "modify_index" BIGINT NOT NULL,

    CONSTRAINT "periodic_launches_pkey" PRIMARY KEY ("namespace","job_id")
);
