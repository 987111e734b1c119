-- Box search answers confirmed against a change log (services/boxes box-reads.store.ts,
-- docs/boxes.md "Performance"). Every transaction that writes a table a search answer is
-- built from (boxes, versions, providers, accounts) leaves its transaction id here, in the
-- same transaction, through statement-level triggers; a held answer is reused only while
-- every committed change is visible in the snapshot it was confirmed at.
CREATE TABLE "boxes"."data_changes" (
    "xid" BIGINT NOT NULL,

    CONSTRAINT "data_changes_pkey" PRIMARY KEY ("xid")
);

-- Rows below `horizon` have been pruned: a snapshot older than it cannot be confirmed.
CREATE TABLE "boxes"."data_changes_horizon" (
    "id" INTEGER NOT NULL,
    "horizon" BIGINT NOT NULL DEFAULT 0,

    CONSTRAINT "data_changes_horizon_pkey" PRIMARY KEY ("id")
);

INSERT INTO "boxes"."data_changes_horizon" ("id", "horizon") VALUES (1, 0);

-- One row per writing transaction (ON CONFLICT: its later statements add nothing). One
-- transaction in 256 also prunes the rows of transactions every snapshot now sees, unless
-- another one is pruning (SKIP LOCKED: a writer never waits here).
CREATE FUNCTION "boxes"."note_data_change"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  me BIGINT := pg_current_xact_id()::text::bigint;
  oldest BIGINT;
BEGIN
  INSERT INTO "boxes"."data_changes" ("xid") VALUES (me) ON CONFLICT DO NOTHING;
  IF me % 256 = 0 THEN
    PERFORM 1 FROM "boxes"."data_changes_horizon" WHERE "id" = 1 FOR UPDATE SKIP LOCKED;
    IF FOUND THEN
      oldest := pg_snapshot_xmin(pg_current_snapshot())::text::bigint;
      UPDATE "boxes"."data_changes_horizon" SET "horizon" = GREATEST("horizon", oldest) WHERE "id" = 1;
      DELETE FROM "boxes"."data_changes" WHERE "xid" < oldest;
    END IF;
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER "boxes_data_change" AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "boxes"."boxes"
    FOR EACH STATEMENT EXECUTE FUNCTION "boxes"."note_data_change"();
CREATE TRIGGER "versions_data_change" AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "boxes"."versions"
    FOR EACH STATEMENT EXECUTE FUNCTION "boxes"."note_data_change"();
CREATE TRIGGER "providers_data_change" AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "boxes"."providers"
    FOR EACH STATEMENT EXECUTE FUNCTION "boxes"."note_data_change"();
CREATE TRIGGER "accounts_data_change" AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "boxes"."accounts"
    FOR EACH STATEMENT EXECUTE FUNCTION "boxes"."note_data_change"();
