-- Issue 30: the full-text index of registry search without GIN's pending list.
-- With fastupdate (the default) new entries wait in an unsorted pending list that every
-- search scans in full until a VACUUM (or 4 MB of pending entries) merges it into the
-- index; publishes are rare and searches are not, so entries go straight into the index.
-- Measured on the 5,000-module bench data just after loading it: a one-word search took
-- 10.4 ms (the planner, seeing the pending list, scanned the table) and 1.8 ms after the
-- list was merged.
ALTER INDEX "registry"."modules_search_idx" SET (fastupdate = off);
-- Turning it off does not merge what is already pending.
SELECT gin_clean_pending_list('"registry"."modules_search_idx"'::regclass);
