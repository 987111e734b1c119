-- What live allocations hold on each node, kept by triggers on allocations (issue 25,
-- placement throughput). The engine reads it for every evaluation's snapshot and for every
-- plan's re-check under the counter lock; summing the allocations instead cost a scan of
-- every live allocation of the plan's nodes (10,000 rows at the end of the benchmark's
-- round, ~2.5-5 ms each time). Live: desired_status 'run' and client_status not complete,
-- failed or lost (engine.store.ts LIVE). `allocs` counts them: a node without live
-- allocations keeps a row with allocs = 0, which readers skip.
CREATE TABLE "scheduler"."node_usage" (
    "node_id" TEXT NOT NULL,
    "cpu" BIGINT NOT NULL DEFAULT 0,
    "memory_mb" BIGINT NOT NULL DEFAULT 0,
    "disk_mb" BIGINT NOT NULL DEFAULT 0,
    "allocs" BIGINT NOT NULL DEFAULT 0,

    CONSTRAINT "node_usage_pkey" PRIMARY KEY ("node_id")
);

INSERT INTO "scheduler"."node_usage" ("node_id", "cpu", "memory_mb", "disk_mb", "allocs")
SELECT "node_id", SUM("cpu"), SUM("memory_mb"), SUM("disk_mb"), COUNT(*)
FROM "scheduler"."allocations"
WHERE "desired_status" = 'run' AND "client_status" NOT IN ('complete', 'failed', 'lost')
GROUP BY "node_id";

-- One statement-level trigger per operation, each adding what the statement's rows changed
-- (new live rows count, old live rows are taken back), node rows locked in node_id order.
CREATE FUNCTION "scheduler"."node_usage_apply"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO "scheduler"."node_usage" AS u ("node_id", "cpu", "memory_mb", "disk_mb", "allocs")
    SELECT "node_id", SUM("cpu"), SUM("memory_mb"), SUM("disk_mb"), COUNT(*) FROM "new_rows"
    WHERE "desired_status" = 'run' AND "client_status" NOT IN ('complete', 'failed', 'lost')
    GROUP BY "node_id" ORDER BY "node_id"
    ON CONFLICT ("node_id") DO UPDATE SET "cpu" = u."cpu" + EXCLUDED."cpu", "memory_mb" = u."memory_mb" + EXCLUDED."memory_mb",
      "disk_mb" = u."disk_mb" + EXCLUDED."disk_mb", "allocs" = u."allocs" + EXCLUDED."allocs";
  ELSIF TG_OP = 'UPDATE' THEN
    INSERT INTO "scheduler"."node_usage" AS u ("node_id", "cpu", "memory_mb", "disk_mb", "allocs")
    SELECT d."node_id", SUM(d."cpu"), SUM(d."memory_mb"), SUM(d."disk_mb"), SUM(d."n") FROM (
      SELECT "node_id", "cpu", "memory_mb", "disk_mb", 1 AS "n" FROM "new_rows"
      WHERE "desired_status" = 'run' AND "client_status" NOT IN ('complete', 'failed', 'lost')
      UNION ALL
      SELECT "node_id", -"cpu", -"memory_mb", -"disk_mb", -1 FROM "old_rows"
      WHERE "desired_status" = 'run' AND "client_status" NOT IN ('complete', 'failed', 'lost')
    ) d
    GROUP BY d."node_id" ORDER BY d."node_id"
    ON CONFLICT ("node_id") DO UPDATE SET "cpu" = u."cpu" + EXCLUDED."cpu", "memory_mb" = u."memory_mb" + EXCLUDED."memory_mb",
      "disk_mb" = u."disk_mb" + EXCLUDED."disk_mb", "allocs" = u."allocs" + EXCLUDED."allocs";
  ELSIF TG_OP = 'DELETE' THEN
    INSERT INTO "scheduler"."node_usage" AS u ("node_id", "cpu", "memory_mb", "disk_mb", "allocs")
    SELECT "node_id", -SUM("cpu"), -SUM("memory_mb"), -SUM("disk_mb"), -COUNT(*) FROM "old_rows"
    WHERE "desired_status" = 'run' AND "client_status" NOT IN ('complete', 'failed', 'lost')
    GROUP BY "node_id" ORDER BY "node_id"
    ON CONFLICT ("node_id") DO UPDATE SET "cpu" = u."cpu" + EXCLUDED."cpu", "memory_mb" = u."memory_mb" + EXCLUDED."memory_mb",
      "disk_mb" = u."disk_mb" + EXCLUDED."disk_mb", "allocs" = u."allocs" + EXCLUDED."allocs";
  ELSE -- TRUNCATE
    DELETE FROM "scheduler"."node_usage";
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER "node_usage_insert" AFTER INSERT ON "scheduler"."allocations"
  REFERENCING NEW TABLE AS "new_rows" FOR EACH STATEMENT EXECUTE FUNCTION "scheduler"."node_usage_apply"();
CREATE TRIGGER "node_usage_update" AFTER UPDATE ON "scheduler"."allocations"
  REFERENCING OLD TABLE AS "old_rows" NEW TABLE AS "new_rows" FOR EACH STATEMENT EXECUTE FUNCTION "scheduler"."node_usage_apply"();
CREATE TRIGGER "node_usage_delete" AFTER DELETE ON "scheduler"."allocations"
  REFERENCING OLD TABLE AS "old_rows" FOR EACH STATEMENT EXECUTE FUNCTION "scheduler"."node_usage_apply"();
CREATE TRIGGER "node_usage_truncate" AFTER TRUNCATE ON "scheduler"."allocations"
  FOR EACH STATEMENT EXECUTE FUNCTION "scheduler"."node_usage_apply"();
