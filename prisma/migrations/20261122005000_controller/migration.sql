-- CreateTable
CREATE TABLE "controller"."sessions" (
    "id" TEXT NOT NULL,
    "worker_name" TEXT NOT NULL,
    "target" TEXT NOT NULL DEFAULT '',
    "status" TEXT NOT NULL DEFAULT 'pending',
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMP(3),

    CONSTRAINT "sessions_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "controller"."workers" (
    "name" TEXT NOT NULL,
    "description" TEXT NOT NULL DEFAULT '',
    "controller_name" TEXT NOT NULL,
    "connected" BOOLEAN NOT NULL DEFAULT false,
    "active_sessions" INTEGER NOT NULL DEFAULT 0,
    "last_seen_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "workers_pkey" PRIMARY KEY ("name")
);

-- CreateIndex
CREATE INDEX "sessions_worker_name_status_idx" ON "controller"."sessions"("worker_name", "status");
