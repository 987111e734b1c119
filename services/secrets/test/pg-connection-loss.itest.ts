// Reliability: Postgres ends the entry store's idle connections (a restart, an operator's
// pg_terminate_backend). The process must not crash on the pool's 'error' event, and the
// next request must be served on a fresh connection with nothing lost.
import request from 'supertest';
import { initAndUnseal, startHarness, type Harness } from './harness';

describe('entry store connection loss', () => {
  let h: Harness;
  let root = '';
  const as = (t: string) => ({ 'X-Vault-Token': t });
  beforeAll(async () => {
    h = await startHarness();
    root = (await initAndUnseal(h.app)).rootToken;
  });
  afterAll(async () => {
    await h.close();
  });

  async function entryBackends(): Promise<number> {
    const rows = await h.prisma.$queryRawUnsafe<{ n: bigint }[]>(
      "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = $1 AND application_name = 'selfstack-secrets'",
      h.db.name,
    );
    return Number(rows[0]?.n);
  }

  it('survives its idle connections being terminated and keeps the data', async () => {
    await request(h.app).put('/v1/secret/data/app').set(as(root)).send({ data: { a: '1' } }).expect(200);
    // Several concurrent reads so the pool holds more than one idle connection.
    await Promise.all(Array.from({ length: 4 }, () => request(h.app).get('/v1/secret/data/app').set(as(root)).expect(200)));
    expect(await entryBackends()).toBeGreaterThan(0);

    const killed = await h.prisma.$queryRawUnsafe<{ ok: boolean }[]>(
      "SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE datname = $1 AND application_name = 'selfstack-secrets'",
      h.db.name,
    );
    expect(killed.length).toBeGreaterThan(0);
    for (let i = 0; i < 100 && (await entryBackends()) > 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(await entryBackends()).toBe(0);
    // Give the clients a moment to read the server's FATAL message (the 'error' event).
    await new Promise((r) => setTimeout(r, 100));

    const read = await request(h.app).get('/v1/secret/data/app').set(as(root));
    expect(read.status).toBe(200);
    expect(read.body.data.data).toEqual({ a: '1' });
    const write = await request(h.app).put('/v1/secret/data/app').set(as(root)).send({ data: { a: '2' } });
    expect(write.status).toBe(200);
    expect(write.body.data.version).toBe(2);
  });
});
