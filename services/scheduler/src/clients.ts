// The database clients of one scheduler process, opened in one place for main.ts, the
// integration tests' harness and the benchmarks: Prisma (the model API), the SQL client
// (raw statements: the state store's raw writes and its own reads, the engine), the pool of
// the point reads, and the state store over them.
import type { Bus } from '@selfstack/bus';
import { createPrismaClient, type PrismaClient } from '@selfstack/db';
import type { Logger } from '@selfstack/logger';
import { createStateStore, type StateStore } from '@selfstack/state';
import type { Pool } from 'pg';
import type { Db } from './shared/common.types';
import { createReadPool } from './shared/point-reads.store';
import { createSqlClient, type SqlClient } from './shared/sql-client.store';

export interface SchedulerDb {
  prisma: PrismaClient;
  sql: SqlClient;
  /** node-postgres pool of the hot reads (shared/point-reads.store.ts). */
  readPool: Pool;
  state: StateStore<Db>;
  /** Closes the state store, then the pools. */
  close(): Promise<void>;
}

export interface SchedulerDbOptions {
  databaseUrl: string;
  /** The bus of the state store's wake-ups (already prefixed for this deployment). */
  bus: Bus;
  logger: Logger;
  /** Connections of Prisma's pool (its default when unset). */
  prismaPoolSize?: number;
  /** Connections of the point-read pool (default 8). */
  readPoolSize?: number;
  /** Evaluations the engine processes at once in this process (its slots use the SQL client). */
  engineWorkers?: number;
  /** The state store's eventReadIntervalMs (SCHEDULER_EVENT_BATCH). */
  eventReadIntervalMs?: number;
}

/** Opens the clients and waits until the state store's bus subscription is active. */
export async function openSchedulerDb(o: SchedulerDbOptions): Promise<SchedulerDb> {
  const onIdleError = (pool: string) => (err: Error) => o.logger.warn(`${pool}: idle connection ended`, { error: err.message });
  const prisma = createPrismaClient({ url: o.databaseUrl, logger: o.logger, ...(o.prismaPoolSize !== undefined ? { poolSize: o.prismaPoolSize } : {}) });
  const readPool = createReadPool(o.databaseUrl, { ...(o.readPoolSize !== undefined ? { max: o.readPoolSize } : {}), onIdleError: onIdleError('read pool') });
  // Writes queue on the counter lock anyway: a few connections for them, one per engine
  // slot, and room for the event log reads and the engine's reads.
  const sql = createSqlClient({ databaseUrl: o.databaseUrl, max: 6 + (o.engineWorkers ?? 0), onIdleError: onIdleError('sql client') });
  const state = createStateStore<Db>({
    prisma,
    sql,
    bus: o.bus,
    logger: o.logger,
    ...(o.eventReadIntervalMs !== undefined ? { eventReadIntervalMs: o.eventReadIntervalMs } : {}),
  });
  const close = async (): Promise<void> => {
    await state.close();
    await readPool.end();
    await sql.end();
    await prisma.$disconnect();
  };
  try {
    await state.ready();
  } catch (err) {
    await close().catch(() => undefined);
    throw err;
  }
  return { prisma, sql, readPool, state, close };
}
