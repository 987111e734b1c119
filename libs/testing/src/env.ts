// Where the integration tests find PostgreSQL and Redis. Tests are a composition root of
// their own, so reading process.env here is intended (docs/architecture.md, "Tests").
export const DEFAULT_TEST_DATABASE_URL = 'postgresql://postgres@127.0.0.1:5432/postgres';
export const DEFAULT_TEST_REDIS_URL = 'redis://127.0.0.1:6379';

/** The server-level URL test databases are created through (any existing database works). */
export function testAdminDatabaseUrl(env: NodeJS.ProcessEnv = process.env): string {
  return env.TEST_DATABASE_URL || env.DATABASE_URL || DEFAULT_TEST_DATABASE_URL;
}

export function testRedisUrl(env: NodeJS.ProcessEnv = process.env): string {
  return env.REDIS_URL || DEFAULT_TEST_REDIS_URL;
}

/** Same server and credentials as `url`, another database. */
export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${encodeURIComponent(database)}`;
  return parsed.toString();
}

/** A URL safe to print: the password is replaced. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '<unparseable url>';
  }
}
