-- One Postgres schema per service (docs/architecture.md, "Database"). Each service's own
-- migration creates its tables inside its schema; this one only creates the namespaces.

-- CreateSchema
CREATE SCHEMA IF NOT EXISTS "secrets";

-- CreateSchema
CREATE SCHEMA IF NOT EXISTS "scheduler";

-- CreateSchema
CREATE SCHEMA IF NOT EXISTS "boxes";

-- CreateSchema
CREATE SCHEMA IF NOT EXISTS "registry";

-- CreateSchema
CREATE SCHEMA IF NOT EXISTS "controller";
