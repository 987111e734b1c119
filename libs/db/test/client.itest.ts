// createPrismaClient against a real database: the generated client (prisma 7.10.1
// generator) must run on the installed @prisma/client runtime through @prisma/adapter-pg.
import { createTestDatabase, type TestDatabase } from '@selfstack/testing';
import { createPrismaClient, Prisma, type DbLogger } from '../src/index';

// jest.config.js sets testTimeout inside the integration project, where jest ignores it
// (it is a global option); database drops wait for a checkpoint and can take seconds on
// a busy server, so this file sets its own.
jest.setTimeout(60_000);

describe('createPrismaClient', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('queries through the pg adapter and runs interactive transactions', async () => {
    const prisma = createPrismaClient({ url: db.url });
    try {
      const rows = await prisma.$queryRaw<{ n: number; db: string }[]>`SELECT 1::int AS n, current_database() AS db`;
      expect(rows).toEqual([{ n: 1, db: db.name }]);
      // The template is migrated: _prisma_migrations came along with the clone.
      const counted = await prisma.$queryRaw<{ count: bigint }[]>`SELECT count(*) AS count FROM _prisma_migrations`;
      expect(counted[0]!.count).toBeGreaterThan(0n);

      await prisma.$executeRawUnsafe('CREATE TABLE public.client_probe (id int PRIMARY KEY)');
      await expect(
        prisma.$transaction(async (tx) => {
          await tx.$executeRaw`INSERT INTO public.client_probe VALUES (1)`;
          throw new Error('roll back');
        }),
      ).rejects.toThrow('roll back');
      await prisma.$transaction(async (tx) => {
        await tx.$executeRaw`INSERT INTO public.client_probe VALUES (2)`;
      });
      expect(await prisma.$queryRaw`SELECT id FROM public.client_probe`).toEqual([{ id: 2 }]);
    } finally {
      await prisma.$disconnect();
    }
  });

  it('surfaces database errors as Prisma known request errors', async () => {
    const prisma = createPrismaClient({ url: db.url });
    try {
      const err = await prisma.$queryRawUnsafe('SELECT * FROM no_such_table').catch((e: unknown) => e);
      expect(err).toBeInstanceOf(Prisma.PrismaClientKnownRequestError);
    } finally {
      await prisma.$disconnect();
    }
  });

  it('caps the connection pool at poolSize', async () => {
    const prisma = createPrismaClient({ url: db.url, poolSize: 2 });
    try {
      // Four concurrent sleeps on a pool of two: two run, two queue.
      const started = Date.now();
      const counts = await Promise.all(
        Array.from({ length: 4 }, () =>
          prisma.$queryRaw<{ n: bigint }[]>`SELECT count(*) AS n FROM pg_stat_activity
            WHERE datname = current_database() AND application_name = 'selfstack' AND pg_sleep(0.2) IS NOT NULL`,
        ),
      );
      expect(Math.max(...counts.map((c) => Number(c[0]!.n)))).toBeLessThanOrEqual(2);
      expect(Date.now() - started).toBeGreaterThanOrEqual(390);
    } finally {
      await prisma.$disconnect();
    }
  });

  it('sends queries (without parameters) to logger.debug when logQueries is set', async () => {
    const calls: string[] = [];
    const logger: DbLogger = {
      info: () => undefined,
      warn: (m) => calls.push(`warn:${m}`),
      error: (m) => calls.push(`error:${m}`),
      debug: (m) => calls.push(`debug:${m}`),
    };
    const prisma = createPrismaClient({ url: db.url, logger, logQueries: true });
    try {
      await prisma.$queryRaw`SELECT 1`;
      expect(calls).toContain('debug:prisma query');
    } finally {
      await prisma.$disconnect();
    }
  });
});
