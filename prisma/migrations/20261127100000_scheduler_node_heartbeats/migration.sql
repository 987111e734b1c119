-- Node heartbeats (issue 26; docs/scheduler.md "Nodes and heartbeats"): the last heartbeat
-- (Unix ms) and the TTL the server gave the node. The sweeper marks a node down once
-- last_heartbeat_ms + heartbeat_ttl_ms + grace has passed; nodes registered before this
-- migration read as never heard from, and every sweeper waits out a failover window after
-- it starts, so their agents have time to heartbeat first.
ALTER TABLE "scheduler"."nodes" ADD COLUMN "last_heartbeat_ms" BIGINT NOT NULL DEFAULT 0;
ALTER TABLE "scheduler"."nodes" ADD COLUMN "heartbeat_ttl_ms" BIGINT NOT NULL DEFAULT 0;
