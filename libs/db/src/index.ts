// @selfstack/db: the Prisma client factory and the migration runner
// (docs/architecture.md, "Database"). The drift checker (src/drift.ts) is deliberately not
// exported here: it loads @prisma/get-dmmf, a dev dependency absent from production images.
export { createPrismaClient, type CreatePrismaClientOptions } from './client';
export { Prisma, PrismaClient } from './generated/prisma/client';
export {
  migrate,
  listMigrations,
  markMigrationRolledBack,
  readMigrationRows,
  migrationChecksum,
  checksumMatches,
  migrationsSchemaFromUrl,
  MigrationError,
  PRISMA_MIGRATE_LOCK_KEY,
  MIGRATIONS_TABLE,
  type MigrateOptions,
  type MigrateResult,
  type MigrationFolder,
  type MigrationRow,
  type MigrationErrorCode,
} from './migrate';
export { defaultMigrationsDir, defaultSchemaDir } from './paths';
export { silentDbLogger, type DbLogger } from './logger';
export { jsonValue } from './json-value';
export { createPgPool, guardCheckout, namedQuery, type CheckoutGuard, type PgPoolOptions } from './pg-pool';
