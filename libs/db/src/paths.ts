// Repository locations of the Prisma schema and migrations, resolved from this file so
// they work from any working directory (tsx, jest workers, scripts). Bundled services
// (esbuild, dist/) do not use these: they are given the migrations folder explicitly.
import path from 'node:path';

const repoRoot = path.resolve(__dirname, '..', '..', '..');

export function defaultMigrationsDir(): string {
  return path.join(repoRoot, 'prisma', 'migrations');
}

export function defaultSchemaDir(): string {
  return path.join(repoRoot, 'prisma', 'schema');
}
