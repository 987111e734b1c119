// Prisma client factory (docs/architecture.md, "Database"). The generated client
// (Prisma 7 `prisma-client` generator, CommonJS) needs a driver adapter and no native
// query engine; we always connect through node-postgres via @prisma/adapter-pg.
import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from './generated/prisma/client';
import type { DbLogger } from './logger';

export interface CreatePrismaClientOptions {
  /** postgresql:// connection string. */
  url: string;
  /** Receives Prisma's warn/error events (and queries when `logQueries`). */
  logger?: DbLogger;
  /** Maximum connections in the node-postgres pool; pg's default (10) when unset. */
  poolSize?: number;
  /** Idle connections are closed after this long; pg's default (10 s) when unset. */
  idleTimeoutMs?: number;
  /** Forward every query (SQL and duration) to `logger.debug`. Off by default: noisy. */
  logQueries?: boolean;
}

type LogEvent = { message: string; target: string; timestamp: Date };
type QueryEvent = { query: string; params: string; duration: number; target: string };

export function createPrismaClient(options: CreatePrismaClientOptions): PrismaClient {
  const adapter = new PrismaPg({
    connectionString: options.url,
    ...(options.poolSize !== undefined ? { max: options.poolSize } : {}),
    ...(options.idleTimeoutMs !== undefined ? { idleTimeoutMillis: options.idleTimeoutMs } : {}),
    application_name: 'selfstack',
  });
  const logger = options.logger;
  if (!logger) {
    return new PrismaClient({ adapter });
  }
  const client = new PrismaClient({
    adapter,
    // 'event' instead of 'stdout' so every line goes through our JSON logger (and its
    // redaction) rather than Prisma's own console output.
    log: [
      { emit: 'event', level: 'warn' },
      { emit: 'event', level: 'error' },
      ...(options.logQueries ? [{ emit: 'event', level: 'query' } as const] : []),
    ],
  });
  client.$on('warn', (e: LogEvent) => logger.warn('prisma warning', { target: e.target, detail: e.message }));
  client.$on('error', (e: LogEvent) => logger.error('prisma error', { target: e.target, detail: e.message }));
  if (options.logQueries) {
    // Parameters are deliberately left out: they may carry secrets.
    client.$on('query', (e: QueryEvent) => (logger.debug ?? logger.info).call(logger, 'prisma query', { sql: e.query, durationMs: e.duration }));
  }
  // The instance was created with event-emitting log options; callers only need the
  // ordinary client surface, so we widen back to the default PrismaClient type.
  return client as unknown as PrismaClient;
}
