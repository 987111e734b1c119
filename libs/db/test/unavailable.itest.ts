// Real errors of node-postgres and of Prisma 7 over @prisma/adapter-pg when PostgreSQL
// cannot be reached or ends the connection under a query (a restart), recognised by
// @selfstack/errors as "storage unavailable" (503 with Retry-After), while errors of a
// reachable database stay what they are. The shapes these errors have are not ours: this
// test fails when a pg or Prisma upgrade changes them.
import { isStorageUnavailable } from '@selfstack/errors';
import { createTestDatabase, freePortBelowEphemeral, openBackendTerminator, type TestDatabase } from '@selfstack/testing';
import { Client, Pool } from 'pg';
import { createPrismaClient, type PrismaClient } from '../src/index';

jest.setTimeout(60_000);

const rejection = async (promise: Promise<unknown>): Promise<unknown> => {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error('expected a rejection');
};

describe('database unavailable, as the drivers report it', () => {
  let db: TestDatabase;
  let closedUrl = '';
  beforeAll(async () => {
    db = await createTestDatabase();
    // A port nothing listens on.
    closedUrl = `postgresql://postgres@127.0.0.1:${await freePortBelowEphemeral()}/postgres`;
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('node-postgres: a refused connection', async () => {
    const pool = new Pool({ connectionString: closedUrl });
    try {
      expect(isStorageUnavailable(await rejection(pool.query('SELECT 1')))).toBe(true);
    } finally {
      await pool.end();
    }
  });

  it('Prisma: a refused connection, for a model query, a raw query and a transaction', async () => {
    const prisma = createPrismaClient({ url: closedUrl });
    try {
      expect(isStorageUnavailable(await rejection(prisma.boxToken.findUnique({ where: { id: 'x' } })))).toBe(true);
      expect(isStorageUnavailable(await rejection(prisma.$queryRaw`SELECT 1`))).toBe(true);
      expect(isStorageUnavailable(await rejection(prisma.$transaction(async (tx) => tx.$queryRaw`SELECT 1`)))).toBe(true);
    } finally {
      await prisma.$disconnect();
    }
  });

  describe('a connection ended under a query (pg_terminate_backend, as a restart does)', () => {
    const endUnder = async (run: () => Promise<unknown>): Promise<unknown> => {
      const terminator = await openBackendTerminator(db.url);
      try {
        const pending = rejection(run());
        // Wait until the query is running, then end every other backend.
        const probe = new Client({ connectionString: db.url });
        await probe.connect();
        for (let i = 0; i < 200; i++) {
          const { rows } = await probe.query<{ n: string }>("SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'SELECT pg_sleep(5)%' AND state = 'active'");
          if (Number(rows[0]?.n) > 0) break;
          await new Promise((r) => setTimeout(r, 10));
        }
        await probe.end();
        await terminator.terminateOthers();
        return await pending;
      } finally {
        await terminator.close();
      }
    };

    it('node-postgres', async () => {
      const pool = new Pool({ connectionString: db.url });
      pool.on('error', () => undefined);
      try {
        expect(isStorageUnavailable(await endUnder(() => pool.query('SELECT pg_sleep(5)')))).toBe(true);
        // The pool reconnects: the next query works.
        expect((await pool.query('SELECT 1 AS n')).rows).toEqual([{ n: 1 }]);
      } finally {
        await pool.end();
      }
    });

    it('Prisma', async () => {
      const prisma: PrismaClient = createPrismaClient({ url: db.url });
      try {
        expect(isStorageUnavailable(await endUnder(() => prisma.$queryRawUnsafe('SELECT pg_sleep(5)')))).toBe(true);
        expect(await prisma.$queryRaw`SELECT 1::int AS n`).toEqual([{ n: 1 }]);
      } finally {
        await prisma.$disconnect();
      }
    });
  });

  it('errors of a reachable database are not "unavailable"', async () => {
    const pool = new Pool({ connectionString: db.url });
    const prisma = createPrismaClient({ url: db.url });
    try {
      await pool.query('CREATE TABLE public.unavailable_probe (id int PRIMARY KEY)');
      await pool.query('INSERT INTO public.unavailable_probe VALUES (1)');
      expect(isStorageUnavailable(await rejection(pool.query('INSERT INTO public.unavailable_probe VALUES (1)')))).toBe(false);
      expect(isStorageUnavailable(await rejection(prisma.$executeRaw`INSERT INTO public.unavailable_probe VALUES (1)`))).toBe(false);
      expect(isStorageUnavailable(await rejection(pool.query('SELECT * FROM public.no_such_table')))).toBe(false);
      expect(isStorageUnavailable(await rejection(pool.query("SET statement_timeout = '10ms'; SELECT pg_sleep(1)")))).toBe(false);
    } finally {
      await pool.end();
      await prisma.$disconnect();
    }
  });
});
