-- CreateTable
CREATE TABLE "secrets"."barrier" (
    "id" INTEGER NOT NULL,
    "secret_shares" INTEGER NOT NULL,
    "secret_threshold" INTEGER NOT NULL,
    "keyring" BYTEA NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "barrier_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "secrets"."entries" (
    "path" TEXT NOT NULL,
    "value" BYTEA NOT NULL,

    CONSTRAINT "entries_pkey" PRIMARY KEY ("path")
);
