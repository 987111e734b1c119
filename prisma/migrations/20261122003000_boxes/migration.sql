-- Box-hosting service (prisma/schema/boxes.prisma). Search uses a trigram GIN index on
-- boxes.search_text (Prisma: @@index([searchText(ops: raw("gin_trgm_ops"))], type: Gin));
-- pg_trgm ships with PostgreSQL's contrib package. Prisma would only emit the extension
-- with the postgresqlExtensions preview feature, so it is created here explicitly.
CREATE EXTENSION IF NOT EXISTS "pg_trgm" WITH SCHEMA "public";

-- CreateTable
CREATE TABLE "boxes"."accounts" (
    "id" TEXT NOT NULL,
    "username" TEXT NOT NULL,
    "kind" TEXT NOT NULL DEFAULT 'user',
    "email" TEXT,
    "password_hash" TEXT,
    "is_admin" BOOLEAN NOT NULL DEFAULT false,
    "avatar_url" TEXT NOT NULL DEFAULT '',
    "profile_markdown" TEXT NOT NULL DEFAULT '',
    "profile_html" TEXT NOT NULL DEFAULT '',
    "billing_state" TEXT NOT NULL DEFAULT 'ok',
    "two_factor_enabled" BOOLEAN NOT NULL DEFAULT false,
    "two_factor_phone" TEXT,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "accounts_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "boxes"."memberships" (
    "org_id" TEXT NOT NULL,
    "user_id" TEXT NOT NULL,
    "role" TEXT NOT NULL DEFAULT 'member',
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "memberships_pkey" PRIMARY KEY ("org_id","user_id")
);

-- CreateTable
CREATE TABLE "boxes"."tokens" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "token_hash" TEXT NOT NULL,
    "description" TEXT NOT NULL DEFAULT '',
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_used_at" TIMESTAMP(3),

    CONSTRAINT "tokens_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "boxes"."two_factor_codes" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "code_hash" TEXT NOT NULL,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "expires_at" TIMESTAMP(3) NOT NULL,
    "used_at" TIMESTAMP(3),
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "two_factor_codes_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "boxes"."two_factor_outbox" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "delivery_method" TEXT NOT NULL,
    "destination" TEXT NOT NULL,
    "message" TEXT NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "two_factor_outbox_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "boxes"."boxes" (
    "id" TEXT NOT NULL,
    "owner_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "short_description" TEXT NOT NULL DEFAULT '',
    "description_markdown" TEXT NOT NULL DEFAULT '',
    "description_html" TEXT NOT NULL DEFAULT '',
    "is_private" BOOLEAN NOT NULL DEFAULT true,
    "downloads" INTEGER NOT NULL DEFAULT 0,
    "search_text" TEXT NOT NULL DEFAULT '',
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "boxes_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "boxes"."versions" (
    "id" TEXT NOT NULL,
    "box_id" TEXT NOT NULL,
    "version" TEXT NOT NULL,
    "description_markdown" TEXT NOT NULL DEFAULT '',
    "description_html" TEXT NOT NULL DEFAULT '',
    "status" TEXT NOT NULL DEFAULT 'unreleased',
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "versions_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "boxes"."providers" (
    "id" TEXT NOT NULL,
    "version_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "url" TEXT,
    "checksum" TEXT,
    "checksum_type" TEXT,
    "hosted" BOOLEAN NOT NULL DEFAULT false,
    "blob_key" TEXT,
    "size" BIGINT,
    "md5" TEXT,
    "sha1" TEXT,
    "sha256" TEXT,
    "sha384" TEXT,
    "sha512" TEXT,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "providers_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "boxes"."uploads" (
    "id" TEXT NOT NULL,
    "provider_id" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'pending',
    "blob_key" TEXT NOT NULL,
    "size" BIGINT,
    "md5" TEXT,
    "sha1" TEXT,
    "sha256" TEXT,
    "sha384" TEXT,
    "sha512" TEXT,
    "expires_at" TIMESTAMP(3) NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "uploads_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "boxes"."settings" (
    "key" TEXT NOT NULL,
    "value" TEXT NOT NULL,
    "updated_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "settings_pkey" PRIMARY KEY ("key")
);

-- CreateIndex
CREATE UNIQUE INDEX "accounts_username_key" ON "boxes"."accounts"("username");

-- CreateIndex
CREATE UNIQUE INDEX "accounts_email_key" ON "boxes"."accounts"("email");

-- CreateIndex
CREATE INDEX "memberships_user_id_idx" ON "boxes"."memberships"("user_id");

-- CreateIndex
CREATE UNIQUE INDEX "tokens_token_hash_key" ON "boxes"."tokens"("token_hash");

-- CreateIndex
CREATE INDEX "tokens_account_id_idx" ON "boxes"."tokens"("account_id");

-- CreateIndex
CREATE INDEX "two_factor_codes_account_id_idx" ON "boxes"."two_factor_codes"("account_id");

-- CreateIndex
CREATE INDEX "two_factor_outbox_account_id_idx" ON "boxes"."two_factor_outbox"("account_id");

-- CreateIndex
CREATE INDEX "boxes_search_text_idx" ON "boxes"."boxes" USING GIN ("search_text" gin_trgm_ops);

-- CreateIndex
CREATE INDEX "boxes_downloads_idx" ON "boxes"."boxes"("downloads");

-- CreateIndex
CREATE INDEX "boxes_created_at_idx" ON "boxes"."boxes"("created_at");

-- CreateIndex
CREATE INDEX "boxes_updated_at_idx" ON "boxes"."boxes"("updated_at");

-- CreateIndex
CREATE UNIQUE INDEX "boxes_owner_id_name_key" ON "boxes"."boxes"("owner_id", "name");

-- CreateIndex
CREATE UNIQUE INDEX "versions_box_id_version_key" ON "boxes"."versions"("box_id", "version");

-- CreateIndex
CREATE UNIQUE INDEX "providers_version_id_name_key" ON "boxes"."providers"("version_id", "name");

-- CreateIndex
CREATE INDEX "uploads_provider_id_idx" ON "boxes"."uploads"("provider_id");

-- AddForeignKey
ALTER TABLE "boxes"."memberships" ADD CONSTRAINT "memberships_org_id_fkey" FOREIGN KEY ("org_id") REFERENCES "boxes"."accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "boxes"."memberships" ADD CONSTRAINT "memberships_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "boxes"."accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "boxes"."tokens" ADD CONSTRAINT "tokens_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "boxes"."accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "boxes"."two_factor_codes" ADD CONSTRAINT "two_factor_codes_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "boxes"."accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "boxes"."two_factor_outbox" ADD CONSTRAINT "two_factor_outbox_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "boxes"."accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "boxes"."boxes" ADD CONSTRAINT "boxes_owner_id_fkey" FOREIGN KEY ("owner_id") REFERENCES "boxes"."accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "boxes"."versions" ADD CONSTRAINT "versions_box_id_fkey" FOREIGN KEY ("box_id") REFERENCES "boxes"."boxes"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "boxes"."providers" ADD CONSTRAINT "providers_version_id_fkey" FOREIGN KEY ("version_id") REFERENCES "boxes"."versions"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "boxes"."uploads" ADD CONSTRAINT "uploads_provider_id_fkey" FOREIGN KEY ("provider_id") REFERENCES "boxes"."providers"("id") ON DELETE CASCADE ON UPDATE CASCADE;
