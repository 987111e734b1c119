-- CreateTable
CREATE TABLE "scheduler"."state_index" (
    "id" INTEGER NOT NULL,
    "value" BIGINT NOT NULL,

    CONSTRAINT "state_index_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "scheduler"."table_index" (
    "table" TEXT NOT NULL,
    "index" BIGINT NOT NULL,

    CONSTRAINT "table_index_pkey" PRIMARY KEY ("table")
);

-- CreateTable
CREATE TABLE "scheduler"."event_log" (
    "index" BIGINT NOT NULL,
    "seq" INTEGER NOT NULL,
    "topic" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "namespace" TEXT NOT NULL,
    "filter_keys" TEXT[],
    "payload" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "event_log_pkey" PRIMARY KEY ("index","seq")
);

-- Seed the single counter row (hand-written; Prisma would not generate data). Nomad docs:
-- "On a new cluster the value of this index starts at 1", so the first write gets 2.
INSERT INTO "scheduler"."state_index" ("id", "value") VALUES (1, 1);
