// `make migrate`: applies prisma/migrations to DATABASE_URL and prints what it applied.
//   npx tsx libs/db/src/migrate-cli.ts [--dir <migrations folder>]
//   npx tsx libs/db/src/migrate-cli.ts --rolled-back <migration name>
// The second form is `prisma migrate resolve --rolled-back` without the native engine.
// This is a composition root, so it is allowed to read process.env.
import path from 'node:path';
import { markMigrationRolledBack, migrate, MigrationError } from './migrate';
import { defaultMigrationsDir } from './paths';

function argValue(args: string[], flag: string): string | undefined {
  const i = args.indexOf(flag);
  return i >= 0 ? args[i + 1] : undefined;
}

async function main(args: string[]): Promise<number> {
  const url = process.env.DATABASE_URL;
  if (!url) {
    process.stderr.write('DATABASE_URL is not set (for example postgresql://postgres@127.0.0.1:5432/selfstack).\n');
    return 2;
  }
  const rolledBack = argValue(args, '--rolled-back');
  if (rolledBack) {
    await markMigrationRolledBack({ url, migrationName: rolledBack });
    process.stdout.write(`Marked ${rolledBack} as rolled back; the next migrate run applies it again.\n`);
    return 0;
  }
  const dir = argValue(args, '--dir');
  const migrationsDir = dir ? path.resolve(dir) : defaultMigrationsDir();
  const result = await migrate({
    url,
    migrationsDir,
    logger: {
      info: () => undefined,
      warn: (message, meta) => process.stderr.write(`warning: ${message} ${JSON.stringify(meta ?? {})}\n`),
      error: () => undefined,
    },
  });
  if (result.applied.length === 0) {
    process.stdout.write(`No pending migrations (${result.alreadyApplied.length} already applied) in ${migrationsDir}.\n`);
  } else {
    process.stdout.write(`Applied ${result.applied.length} migration(s) from ${migrationsDir}:\n`);
    for (const name of result.applied) process.stdout.write(`  ${name}\n`);
  }
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    const message = err instanceof MigrationError ? err.message : err instanceof Error ? err.stack ?? err.message : String(err);
    process.stderr.write(`migrate failed: ${message}\n`);
    process.exit(1);
  },
);
