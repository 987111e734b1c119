-- CreateTable
CREATE TABLE "scheduler"."namespaces" (
    "name" TEXT NOT NULL,
    "data" JSONB NOT NULL,
    "create_index" BIGINT NOT NULL,
    "modify_index" BIGINT NOT NULL,

    CONSTRAINT "namespaces_pkey" PRIMARY KEY ("name")
);

-- CreateTable
CREATE TABLE "scheduler"."jobs" (
    "namespace" TEXT NOT NULL,
    "id" TEXT NOT NULL,
    "version" INTEGER NOT NULL,
    "type" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "data" JSONB NOT NULL,
    "summary" JSONB NOT NULL,
    "create_index" BIGINT NOT NULL,
    "modify_index" BIGINT NOT NULL,
    "job_modify_index" BIGINT NOT NULL,

    CONSTRAINT "jobs_pkey" PRIMARY KEY ("namespace","id")
);

-- CreateTable
CREATE TABLE "scheduler"."job_versions" (
    "namespace" TEXT NOT NULL,
    "job_id" TEXT NOT NULL,
    "version" INTEGER NOT NULL,
    "data" JSONB NOT NULL,
    "modify_index" BIGINT NOT NULL,

    CONSTRAINT "job_versions_pkey" PRIMARY KEY ("namespace","job_id","version")
);

-- CreateTable
CREATE TABLE "scheduler"."nodes" (
    "id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "secret_hash" TEXT NOT NULL,
    "data" JSONB NOT NULL,
    "create_index" BIGINT NOT NULL,
    "modify_index" BIGINT NOT NULL,

    CONSTRAINT "nodes_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "scheduler"."allocations" (
    "id" TEXT NOT NULL,
    "namespace" TEXT NOT NULL,
    "job_id" TEXT NOT NULL,
    "node_id" TEXT NOT NULL,
    "eval_id" TEXT NOT NULL,
    "deployment_id" TEXT NOT NULL,
    "data" JSONB NOT NULL,
    "create_index" BIGINT NOT NULL,
    "modify_index" BIGINT NOT NULL,

    CONSTRAINT "allocations_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "scheduler"."evaluations" (
    "id" TEXT NOT NULL,
    "namespace" TEXT NOT NULL,
    "job_id" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "data" JSONB NOT NULL,
    "create_index" BIGINT NOT NULL,
    "modify_index" BIGINT NOT NULL,

    CONSTRAINT "evaluations_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "scheduler"."deployments" (
    "id" TEXT NOT NULL,
    "namespace" TEXT NOT NULL,
    "job_id" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "data" JSONB NOT NULL,
    "create_index" BIGINT NOT NULL,
    "modify_index" BIGINT NOT NULL,

    CONSTRAINT "deployments_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "scheduler"."acl_policies" (
    "name" TEXT NOT NULL,
    "data" JSONB NOT NULL,
    "create_index" BIGINT NOT NULL,
    "modify_index" BIGINT NOT NULL,

    CONSTRAINT "acl_policies_pkey" PRIMARY KEY ("name")
);

-- CreateTable
CREATE TABLE "scheduler"."acl_tokens" (
    "accessor_id" TEXT NOT NULL,
    "secret_hash" TEXT NOT NULL,
    "data" JSONB NOT NULL,
    "create_index" BIGINT NOT NULL,
    "modify_index" BIGINT NOT NULL,

    CONSTRAINT "acl_tokens_pkey" PRIMARY KEY ("accessor_id")
);

-- CreateTable
CREATE TABLE "scheduler"."acl_bootstrap" (
    "id" INTEGER NOT NULL,
    "index" BIGINT NOT NULL,

    CONSTRAINT "acl_bootstrap_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "jobs_id_idx" ON "scheduler"."jobs"("id");

-- CreateIndex
CREATE INDEX "allocations_namespace_job_id_idx" ON "scheduler"."allocations"("namespace", "job_id");

-- CreateIndex
CREATE INDEX "allocations_node_id_idx" ON "scheduler"."allocations"("node_id");

-- CreateIndex
CREATE INDEX "allocations_eval_id_idx" ON "scheduler"."allocations"("eval_id");

-- CreateIndex
CREATE INDEX "allocations_deployment_id_idx" ON "scheduler"."allocations"("deployment_id");

-- CreateIndex
CREATE INDEX "allocations_create_index_idx" ON "scheduler"."allocations"("create_index");

-- CreateIndex
CREATE INDEX "evaluations_namespace_job_id_idx" ON "scheduler"."evaluations"("namespace", "job_id");

-- CreateIndex
CREATE INDEX "evaluations_create_index_idx" ON "scheduler"."evaluations"("create_index");

-- CreateIndex
CREATE INDEX "deployments_namespace_job_id_idx" ON "scheduler"."deployments"("namespace", "job_id");

-- CreateIndex
CREATE INDEX "deployments_create_index_idx" ON "scheduler"."deployments"("create_index");

-- CreateIndex
CREATE UNIQUE INDEX "acl_tokens_secret_hash_key" ON "scheduler"."acl_tokens"("secret_hash");

-- CreateIndex
CREATE INDEX "acl_tokens_create_index_idx" ON "scheduler"."acl_tokens"("create_index");

-- Seed the default namespace (hand-written; Prisma would not generate data). Nomad always
-- has a `default` namespace; its indexes are 1, the counter's starting value.
INSERT INTO "scheduler"."namespaces" ("name", "data", "create_index", "modify_index") VALUES
  ('default', '{"Name":"default","Description":"Default shared namespace","Quota":"","Capabilities":null,"NodePoolConfiguration":null,"Meta":{},"CreateIndex":1,"ModifyIndex":1}', 1, 1);
