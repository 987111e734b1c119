-- Service-wide switches of the registry (maintenance mode), written by the admin API.
-- CreateTable
CREATE TABLE "registry"."settings" (
    "key" TEXT NOT NULL,
    "value" TEXT NOT NULL,
    "updated_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "settings_pkey" PRIMARY KEY ("key")
);
