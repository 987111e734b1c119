-- Issue 30: the version of a module's versions response. Every transaction that publishes
-- or deletes a version raises it (modules.store.ts refreshLatest), so a response built for
-- (id, versions_revision) is still the answer while both are unchanged; downloads, which
-- update the same row, do not move it.
-- AlterTable
ALTER TABLE "registry"."modules" ADD COLUMN "versions_revision" INTEGER NOT NULL DEFAULT 0;
