-- Issue 30: which transactions changed the catalog (modules, namespaces), so a list or
-- search answer built in one snapshot can be confirmed in a later one without running the
-- query again (modules.store.ts catalogUnchangedSince). A statement-level trigger writes the
-- writing transaction's id once per transaction, in that transaction: every committed
-- change to either table has its row, visible exactly when the change is.
-- CreateTable
CREATE TABLE "registry"."catalog_changes" (
    "xid" BIGINT NOT NULL,
    "changed_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "catalog_changes_pkey" PRIMARY KEY ("xid")
);

-- Hand-written (Prisma cannot express triggers).
CREATE FUNCTION "registry"."note_catalog_change"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "registry"."catalog_changes" ("xid") VALUES (pg_current_xact_id()::text::bigint) ON CONFLICT ("xid") DO NOTHING;
  RETURN NULL;
END
$$;

CREATE TRIGGER "modules_catalog_change" AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "registry"."modules"
    FOR EACH STATEMENT EXECUTE FUNCTION "registry"."note_catalog_change"();
CREATE TRIGGER "namespaces_catalog_change" AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "registry"."namespaces"
    FOR EACH STATEMENT EXECUTE FUNCTION "registry"."note_catalog_change"();
