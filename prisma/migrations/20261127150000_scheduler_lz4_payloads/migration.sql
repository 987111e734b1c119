-- The scheduler's large JSON columns compressed with lz4 instead of pglz (issue 25,
-- placement throughput): an allocation row embeds its job (~4 KB of JSON) and its
-- PlanResult event ~2 KB, so PostgreSQL compresses every one of them as it writes it; the
-- engine's bulk insert of 100 allocations took 11 ms of PostgreSQL time with pglz and
-- 7.6 ms with lz4 on the development machine. Rows already written keep their
-- compression. A server built without lz4 keeps the default (and says so).
DO $$
BEGIN
  ALTER TABLE "scheduler"."allocations" ALTER COLUMN "data" SET COMPRESSION lz4;
  ALTER TABLE "scheduler"."event_log" ALTER COLUMN "payload" SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported THEN
  RAISE NOTICE 'lz4 is not available on this server: scheduler payloads keep the default compression';
END $$;
