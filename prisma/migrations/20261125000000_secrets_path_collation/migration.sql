-- Entry paths compare byte by byte (the "C" collation, as Vault's Go strings do), so that
-- everything under a prefix is one range of the primary key: listing a folder, revoking a
-- token's children and deleting a key's versions read that range instead of the whole
-- table (a LIKE pattern cannot use a btree index under a linguistic collation).
-- Rewrites the table and rebuilds its primary key.
ALTER TABLE "secrets"."entries" ALTER COLUMN "path" TYPE TEXT COLLATE "C";
