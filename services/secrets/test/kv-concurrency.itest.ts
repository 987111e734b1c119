// KV v2 data writes under concurrency (optimistic write path: unlocked read + one
// conditional statement, locking transaction after repeated lost races), against real
// Postgres and two replicas on the same database.
import { randomBytes } from 'node:crypto';
import type { Express } from 'express';
import type { Pool } from 'pg';
import request from 'supertest';
import { applyManyValues, arrayLiteral, binaryArray, createEntryPool, createEntryStore, ENTRY_SQL, prefixBound } from '../src/features/barrier/barrier.store';
import { guardOfStored, type Storage } from '../src/features/barrier/storage.types';
import { createMemoryBus } from '@selfstack/bus';
import { createPrismaClient } from '@selfstack/db';
import { createTestDatabase, type TestDatabase } from '@selfstack/testing';
import { createSecretsServices, startOneShareInstall } from '../src/services';
import { startUnsealedReplicas, type Harness } from './harness';

const CAS_MISMATCH = { errors: ['check-and-set parameter did not match the current version'] };

describe('KV v2 concurrent writes', () => {
  let h: Harness;
  let other: Express;
  let root = '';
  const as = (t: string) => ({ 'X-Vault-Token': t });
  const app = (i: number): Express => (i % 2 === 0 ? h.app : other);

  async function mountV2(path: string): Promise<string> {
    await request(h.app).post(`/v1/sys/mounts/${path}`).set(as(root)).send({ type: 'kv', options: { version: '2' } }).expect(204);
    const r = await request(h.app).get(`/v1/sys/mounts/${path}`).set(as(root)).expect(200);
    return r.body.data.uuid as string;
  }

  async function versionRows(mountUuid: string): Promise<string[]> {
    const rows = await h.prisma.$queryRawUnsafe<{ path: string }[]>(
      'SELECT "path" FROM "secrets"."entries" WHERE "path" LIKE $1 ORDER BY "path"',
      `logical/${mountUuid}/ver/%`,
    );
    return rows.map((r) => r.path);
  }

  beforeAll(async () => {
    ({ h, root, other } = await startUnsealedReplicas());
  });
  afterAll(async () => {
    await h.close();
  });

  it('16 concurrent writes to a new key: versions 1..16, each once, nothing lost or swapped', async () => {
    await mountV2('many');
    await request(h.app).post('/v1/many/config').set(as(root)).send({ max_versions: 32 }).expect(204);
    const results = await Promise.all(
      Array.from({ length: 16 }, (_, i) => request(app(i)).post('/v1/many/data/k').set(as(root)).send({ data: { writer: i, pad: 'x'.repeat(i) } })),
    );
    expect(results.map((r) => r.status)).toEqual(Array.from({ length: 16 }, () => 200));
    const versions = results.map((r) => r.body.data.version as number);
    expect([...versions].sort((a, b) => a - b)).toEqual(Array.from({ length: 16 }, (_, i) => i + 1));
    const meta = await request(other).get('/v1/many/metadata/k').set(as(root)).expect(200);
    expect(meta.body.data.current_version).toBe(16);
    expect(meta.body.data.oldest_version).toBe(0);
    expect(Object.keys(meta.body.data.versions)).toHaveLength(16);
    for (let i = 0; i < 16; i++) {
      const r = await request(app(i + 1)).get(`/v1/many/data/k?version=${versions[i]}`).set(as(root));
      expect(r.status).toBe(200);
      expect(r.body.data.data).toEqual({ writer: i, pad: 'x'.repeat(i) });
      expect(r.body.data.metadata.version).toBe(versions[i]);
    }
  });

  it('8 concurrent writers with the same cas: exactly one wins, the rest get the cas error', async () => {
    await request(h.app).post('/v1/secret/data/cas-race').set(as(root)).send({ data: { n: -1 } }).expect(200);
    await request(h.app).post('/v1/secret/data/cas-race').set(as(root)).send({ data: { n: -2 } }).expect(200);
    const attempts = await Promise.all(
      Array.from({ length: 8 }, (_, i) => request(app(i)).post('/v1/secret/data/cas-race').set(as(root)).send({ options: { cas: 2 }, data: { n: i } })),
    );
    const ok = attempts.filter((a) => a.status === 200);
    expect(ok).toHaveLength(1);
    expect(ok[0]?.body.data.version).toBe(3);
    const losers = attempts.filter((a) => a.status !== 200);
    expect(losers).toHaveLength(7);
    for (const l of losers) {
      expect(l.status).toBe(400);
      expect(l.body).toEqual(CAS_MISMATCH);
    }
    const winner = attempts.indexOf(ok[0] as (typeof attempts)[number]);
    const r = await request(h.app).get('/v1/secret/data/cas-race').set(as(root)).expect(200);
    expect(r.body.data.data).toEqual({ n: winner });
    expect(r.body.data.metadata.version).toBe(3);
  });

  it('8 concurrent creators with cas 0 on a fresh key: exactly one creates it', async () => {
    const attempts = await Promise.all(
      Array.from({ length: 8 }, (_, i) => request(app(i)).post('/v1/secret/data/cas-zero').set(as(root)).send({ options: { cas: 0 }, data: { n: i } })),
    );
    const ok = attempts.filter((a) => a.status === 200);
    expect(ok).toHaveLength(1);
    expect(ok[0]?.body.data.version).toBe(1);
    for (const l of attempts.filter((a) => a.status !== 200)) {
      expect(l.status).toBe(400);
      expect(l.body).toEqual(CAS_MISMATCH);
    }
    const winner = attempts.indexOf(ok[0] as (typeof attempts)[number]);
    const r = await request(other).get('/v1/secret/data/cas-zero').set(as(root)).expect(200);
    expect(r.body.data.data).toEqual({ n: winner });
    const meta = await request(h.app).get('/v1/secret/metadata/cas-zero').set(as(root)).expect(200);
    expect(meta.body.data.current_version).toBe(1);
  });

  it('max_versions 3 under 12 concurrent writes leaves exactly versions 10..12', async () => {
    const mountUuid = await mountV2('prune');
    await request(h.app).post('/v1/prune/metadata/k').set(as(root)).send({ max_versions: 3 }).expect(204);
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) => request(app(i)).post('/v1/prune/data/k').set(as(root)).send({ data: { writer: i } })),
    );
    expect(results.map((r) => r.status)).toEqual(Array.from({ length: 12 }, () => 200));
    const versions = results.map((r) => r.body.data.version as number);
    expect([...versions].sort((a, b) => a - b)).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
    const rows = await versionRows(mountUuid);
    expect(rows.map((p) => Number(p.slice(-16)))).toEqual([10, 11, 12]);
    const meta = await request(other).get('/v1/prune/metadata/k').set(as(root)).expect(200);
    expect(meta.body.data).toMatchObject({ current_version: 12, oldest_version: 10, max_versions: 3 });
    expect(Object.keys(meta.body.data.versions)).toEqual(['10', '11', '12']);
    for (const v of [10, 11, 12]) {
      const r = await request(h.app).get(`/v1/prune/data/k?version=${v}`).set(as(root)).expect(200);
      expect(r.body.data.data).toEqual({ writer: versions.indexOf(v) });
    }
    expect((await request(h.app).get('/v1/prune/data/k?version=9').set(as(root))).status).toBe(404);
  });

  describe('the entry store\'s applyIf (the statement itself)', () => {
    let pool: Pool;
    let store: ReturnType<typeof createEntryStore>;
    const P = 'test/applyif/';
    const buf = (s: string): Buffer => Buffer.from(s);
    /** The store's conditional write with a guard that saw `expected` at `path` (null: no row); whether it applied. */
    const applyIf = async (st: Storage, path: string, expected: Buffer | null, next: Buffer, deletes: string[], puts: { path: string; value: Buffer }[]) =>
      (await st.applyIf(path, guardOfStored(path, expected), next, deletes, puts)) !== null;
    /** Waits until the applyIf statement is waiting for a lock held by the open transaction. */
    async function waitUntilBlocked(marker = '"cur"'): Promise<void> {
      for (let i = 0; i < 200; i++) {
        const rows = await h.prisma.$queryRawUnsafe<{ n: bigint }[]>(
          `SELECT count(*) AS "n" FROM pg_stat_activity WHERE "datname" = current_database() AND "wait_event_type" = 'Lock' AND "query" LIKE $1`,
          `%${marker}%`,
        );
        if (Number(rows[0]?.n) > 0) return;
        await new Promise((r) => setTimeout(r, 10));
      }
      throw new Error('applyIf never blocked');
    }
    beforeAll(() => {
      pool = createEntryPool({ url: h.db.url, max: 4 });
      store = createEntryStore({ pool });
    });
    afterAll(async () => {
      await pool.end();
    });

    it('applies everything when the stored bytes match, nothing otherwise', async () => {
      await store.put(`${P}g`, buf('g1'));
      await store.put(`${P}old`, buf('o'));
      expect(await applyIf(store, `${P}g`, buf('stale'), buf('g2'), [`${P}old`], [{ path: `${P}new`, value: buf('n') }])).toBe(false);
      expect(await store.get(`${P}g`)).toEqual(buf('g1'));
      expect(await store.get(`${P}old`)).toEqual(buf('o'));
      expect(await store.get(`${P}new`)).toBeNull();
      expect(await applyIf(store, `${P}g`, null, buf('g2'), [`${P}old`], [{ path: `${P}new`, value: buf('n') }])).toBe(false);
      expect(await store.get(`${P}new`)).toBeNull();
      expect(await applyIf(store, `${P}g`, buf('g1'), buf('g2'), [`${P}old`], [{ path: `${P}new`, value: buf('n') }])).toBe(true);
      expect(await store.get(`${P}g`)).toEqual(buf('g2'));
      expect(await store.get(`${P}old`)).toBeNull();
      expect(await store.get(`${P}new`)).toEqual(buf('n'));
      // The same guard again: the row changed, so it does not apply.
      expect(await applyIf(store, `${P}g`, buf('g1'), buf('g3'), [], [{ path: `${P}new`, value: buf('n2') }])).toBe(false);
      expect(await store.get(`${P}new`)).toEqual(buf('n'));
      // Absent guard: creates the row once.
      expect(await applyIf(store, `${P}fresh`, null, buf('f'), [], [{ path: `${P}fv`, value: buf('v') }])).toBe(true);
      expect(await applyIf(store, `${P}fresh`, null, buf('f2'), [], [{ path: `${P}fv`, value: buf('v2') }])).toBe(false);
      expect(await store.get(`${P}fresh`)).toEqual(buf('f'));
      expect(await store.get(`${P}fv`)).toEqual(buf('v'));
      await expect(applyIf(store, `${P}g`, buf('g2'), buf('g3'), [`${P}g`], [])).rejects.toThrow(/more than once/);
    });

    it('the guard is the whole stored value (one that only starts with it is a change); values of any size and bytes arrive exactly', async () => {
      const stored = Buffer.concat([Buffer.from([0, 0, 0, 1, 1]), randomBytes(12), randomBytes(300)]);
      await store.put(`${P}h`, stored);
      const values = [Buffer.alloc(0), Buffer.from([0, 0x5c, 0x78, 0xff, 0]), randomBytes(70_000)];
      const puts = values.map((value, i) => ({ path: `${P}h-v${i}`, value }));
      expect(await applyIf(store, `${P}h`, stored.subarray(0, 17), buf('h2'), [], puts)).toBe(false);
      const flipped = Buffer.from(stored);
      flipped[flipped.length - 1]! ^= 1;
      expect(await applyIf(store, `${P}h`, flipped, buf('h2'), [], puts)).toBe(false);
      expect(await store.get(`${P}h-v0`)).toBeNull();
      expect(await applyIf(store, `${P}h`, stored, buf('h2'), [], puts)).toBe(true);
      expect(await store.get(`${P}h`)).toEqual(buf('h2'));
      for (const [i, value] of values.entries()) expect(await store.get(`${P}h-v${i}`)).toEqual(value);
      // In a transaction, replace() carries several values the same way.
      await store.transaction((tx) => tx.replace([`${P}h-v0`], [{ path: `${P}h-v1`, value: values[2]! }, { path: `${P}h-v3`, value: buf('three') }]));
      expect(await store.get(`${P}h-v0`)).toBeNull();
      expect(await store.get(`${P}h-v1`)).toEqual(values[2]);
      expect(await store.get(`${P}h-v3`)).toEqual(buf('three'));
    });

    it('a statement that waited for a concurrent committed update does not apply', async () => {
      await store.put(`${P}w`, buf('w1'));
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        await client.query(`UPDATE "secrets"."entries" SET "value" = $1 WHERE "path" = $2`, [buf('w2'), `${P}w`]);
        const pending = applyIf(store, `${P}w`, buf('w1'), buf('w3'), [], [{ path: `${P}wv`, value: buf('x') }]);
        await waitUntilBlocked();
        await client.query('COMMIT');
        expect(await pending).toBe(false);
      } finally {
        client.release();
      }
      expect(await store.get(`${P}w`)).toEqual(buf('w2'));
      expect(await store.get(`${P}wv`)).toBeNull();
    });

    it('a statement that waited for a rolled-back update applies', async () => {
      await store.put(`${P}r`, buf('r1'));
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        await client.query(`UPDATE "secrets"."entries" SET "value" = $1 WHERE "path" = $2`, [buf('r2'), `${P}r`]);
        const pending = applyIf(store, `${P}r`, buf('r1'), buf('r3'), [], [{ path: `${P}rv`, value: buf('x') }]);
        await waitUntilBlocked();
        await client.query('ROLLBACK');
        expect(await pending).toBe(true);
      } finally {
        client.release();
      }
      expect(await store.get(`${P}r`)).toEqual(buf('r3'));
      expect(await store.get(`${P}rv`)).toEqual(buf('x'));
    });

    it('a statement waiting for a row lock holds the other writes back only for the stall time (5 ms by default)', async () => {
      // The default store: one statement at a time, a second beside it once it has run 5 ms.
      await store.put(`${P}lk`, buf('l1'));
      await store.put(`${P}free`, buf('f1'));
      const stallsBefore = store.applyStats.stalls;
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        await client.query(`UPDATE "secrets"."entries" SET "value" = $1 WHERE "path" = $2`, [buf('l2'), `${P}lk`]);
        const locked = applyIf(store, `${P}lk`, buf('l1'), buf('l3'), [], []);
        await waitUntilBlocked();
        // Goes beside the blocked statement and commits while that one still waits.
        expect(await applyIf(store, `${P}free`, buf('f1'), buf('f2'), [], [{ path: `${P}free-v`, value: buf('v') }])).toBe(true);
        expect(await store.get(`${P}free-v`)).toEqual(buf('v'));
        expect(store.applyStats.stalls).toBe(stallsBefore + 1);
        await client.query('COMMIT');
        expect(await locked).toBe(false);
      } finally {
        client.release();
      }
      expect(await store.get(`${P}lk`)).toEqual(buf('l2'));
    });

    describe('grouped: concurrent applyIf calls in one statement (apply-batcher.ts)', () => {
      let grouped: ReturnType<typeof createEntryStore>;
      beforeAll(() => {
        // One statement at a time, so whatever arrives while it runs goes as one group.
        grouped = createEntryStore({ pool, applyInFlight: 1 });
      });
      /** Holds the only slot: an applyIf on `path` that waits for a row lock until `open()`. */
      async function holdSlot(path: string): Promise<{ open: () => Promise<void>; first: Promise<boolean> }> {
        await store.put(path, buf('h1'));
        const client = await pool.connect();
        await client.query('BEGIN');
        await client.query(`UPDATE "secrets"."entries" SET "value" = $1 WHERE "path" = $2`, [buf('h2'), path]);
        const first = applyIf(grouped, path, buf('h1'), buf('h3'), [], []);
        await waitUntilBlocked();
        return {
          first,
          open: async () => {
            await client.query('COMMIT');
            client.release();
          },
        };
      }

      it('each item keeps its own guard and outcome, and only applied items delete and put', async () => {
        await store.put(`${P}ga`, buf('a1'));
        await store.put(`${P}ga-old`, buf('x'));
        await store.put(`${P}gs`, buf('s1'));
        await store.put(`${P}gs-old`, buf('x'));
        await store.put(`${P}ge`, buf('e1'));
        const slot = await holdSlot(`${P}hold1`);
        const before = grouped.applyStats.grouped;
        const outcomes = Promise.all([
          applyIf(grouped, `${P}ga`, buf('a1'), buf('a2'), [`${P}ga-old`], [{ path: `${P}ga-new`, value: buf('an') }]),
          applyIf(grouped, `${P}gs`, buf('stale'), buf('s2'), [`${P}gs-old`], [{ path: `${P}gs-new`, value: buf('sn') }]),
          applyIf(grouped, `${P}gn`, null, buf('n1'), [], [{ path: `${P}gn-v`, value: buf('nv') }]),
          applyIf(grouped, `${P}ge`, null, buf('e2'), [], [{ path: `${P}ge-v`, value: buf('ev') }]),
        ]);
        await slot.open();
        expect(await slot.first).toBe(false);
        expect(await outcomes).toEqual([true, false, true, false]);
        expect(grouped.applyStats.grouped - before).toBe(4);
        const state = async (k: string) => (await store.get(`${P}${k}`))?.toString() ?? null;
        expect(await Promise.all(['ga', 'ga-old', 'ga-new', 'gs', 'gs-old', 'gs-new', 'gn', 'gn-v', 'ge', 'ge-v'].map(state))).toEqual([
          'a2', null, 'an', 's1', 'x', null, 'n1', 'nv', 'e1', null,
        ]);
      });

      it('grouped: whole-value guards and values of any size reach each item exactly', async () => {
        const stored = (n: number) => Buffer.concat([Buffer.from([0, 0, 0, 1, 1]), randomBytes(12), randomBytes(n)]);
        const a = stored(1_000);
        const b = stored(10);
        await store.put(`${P}pa`, a);
        await store.put(`${P}pb`, b);
        const slot = await holdSlot(`${P}hold3`);
        const big = randomBytes(50_000);
        const outcomes = Promise.all([
          applyIf(grouped, `${P}pa`, a, big, [], [{ path: `${P}pa-v`, value: Buffer.alloc(0) }, { path: `${P}pa-w`, value: buf('w') }]),
          applyIf(grouped, `${P}pb`, b.subarray(0, 17), buf('nope'), [], [{ path: `${P}pb-v`, value: buf('nope') }]),
          applyIf(grouped, `${P}pc`, null, Buffer.from([0, 1, 0]), [], [{ path: `${P}pc-v`, value: big }]),
        ]);
        await slot.open();
        await slot.first;
        expect(await outcomes).toEqual([true, false, true]);
        expect(await store.get(`${P}pa`)).toEqual(big);
        expect(await store.get(`${P}pa-v`)).toEqual(Buffer.alloc(0));
        expect(await store.get(`${P}pa-w`)).toEqual(buf('w'));
        expect(await store.get(`${P}pb`)).toEqual(b);
        expect(await store.get(`${P}pb-v`)).toBeNull();
        expect(await store.get(`${P}pc`)).toEqual(Buffer.from([0, 1, 0]));
        expect(await store.get(`${P}pc-v`)).toEqual(big);
      });

      it('a grouped statement that waited for a concurrent committed update does not apply that item, and applies the others', async () => {
        await store.put(`${P}gw`, buf('w1'));
        await store.put(`${P}gv`, buf('v1'));
        const slot = await holdSlot(`${P}hold2`);
        const other = await pool.connect();
        try {
          await other.query('BEGIN');
          await other.query(`UPDATE "secrets"."entries" SET "value" = $1 WHERE "path" = $2`, [buf('w2'), `${P}gw`]);
          const outcomes = Promise.all([
            applyIf(grouped, `${P}gw`, buf('w1'), buf('w3'), [], [{ path: `${P}gw-v`, value: buf('x') }]),
            applyIf(grouped, `${P}gv`, buf('v1'), buf('v2'), [], [{ path: `${P}gv-v`, value: buf('y') }]),
          ]);
          await slot.open();
          await slot.first;
          await waitUntilBlocked('"upd"');
          await other.query('COMMIT');
          expect(await outcomes).toEqual([false, true]);
        } finally {
          other.release();
        }
        expect((await store.get(`${P}gw`))?.toString()).toBe('w2');
        expect(await store.get(`${P}gw-v`)).toBeNull();
        expect((await store.get(`${P}gv`))?.toString()).toBe('v2');
        expect((await store.get(`${P}gv-v`))?.toString()).toBe('y');
      });
    });

    it('an insert guard that waited for a concurrent committed insert does not apply', async () => {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        await client.query(`INSERT INTO "secrets"."entries" ("path", "value") VALUES ($1, $2)`, [`${P}i`, buf('i1')]);
        const pending = applyIf(store, `${P}i`, null, buf('i2'), [], [{ path: `${P}iv`, value: buf('x') }]);
        await waitUntilBlocked();
        await client.query('COMMIT');
        expect(await pending).toBe(false);
      } finally {
        client.release();
      }
      expect(await store.get(`${P}i`)).toEqual(buf('i1'));
      expect(await store.get(`${P}iv`)).toBeNull();
    });
  });
});

describe('the entry store\'s KV statements', () => {
  let db: TestDatabase;
  let pool: Pool;
  beforeAll(async () => {
    db = await createTestDatabase();
    pool = createEntryPool({ url: db.url, max: 2 });
  });
  afterAll(async () => {
    await pool.end();
    await db.drop();
  });

  it('find their rows through the primary key, never by reading the whole table', async () => {
    type PlanNode = { 'Node Type'?: string; 'Relation Name'?: string; Plans?: PlanNode[] };
    // The benchmark's table (64 keys: metadata ~1.1 KB and 10 versions each), analysed:
    // small enough that the planner once read all of it for the grouped write's guards.
    const T = 'logical/plan/';
    const metas = Array.from({ length: 64 }, (_, k) => `${T}meta/k${k}`);
    const versions = metas.flatMap((_, k) => Array.from({ length: 10 }, (__, v) => `${T}ver/h${k}/${String(v + 1).padStart(16, '0')}`));
    await pool.query(`INSERT INTO "secrets"."entries" ("path", "value") SELECT p, $2::bytea FROM unnest($1::text[]) AS p`, [metas, randomBytes(1100)]);
    await pool.query(`INSERT INTO "secrets"."entries" ("path", "value") SELECT p, $2::bytea FROM unnest($1::text[]) AS p`, [versions, randomBytes(100)]);
    await pool.query('ANALYZE "secrets"."entries"');
    const item = (k: number) => ({
      guardPath: metas[k] as string,
      expected: randomBytes(1100),
      next: randomBytes(1100),
      deletes: [versions[k * 10] as string],
      puts: [{ path: `${T}ver/h${k}/0000000000000011`, value: randomBytes(100) }],
    });
    const v = randomBytes(10);
    const dir = `${T}ver/h9/`;
    const plans: Record<string, unknown[]> = {
      applyMany: applyManyValues([item(1), item(2), item(3), item(4)]),
      applyIfEqual: [metas[5], v, v, [versions[50]], [`${dir}x`], v, [1], [10]],
      applyIfAbsent: [`${T}meta/new`, v, [versions[60]], [`${dir}y`], v, [1], [10]],
      replace: [[versions[70]], [`${dir}z`, metas[6]], Buffer.concat([v, v]), [1, 11], [10, 10]],
      get: [metas[7]],
      getMany: [[metas[8], versions[80]]],
      getWithLast: [metas[9], dir, prefixBound(dir)],
      listPaths: [dir, prefixBound(dir)],
      deletePrefix: [dir, prefixBound(dir)],
    };
    const scans: string[] = [];
    const walk = (name: string, node: PlanNode): void => {
      if (node['Node Type'] === 'Seq Scan' && node['Relation Name'] === 'entries') scans.push(name);
      for (const child of node.Plans ?? []) walk(name, child);
    };
    const client = await pool.connect();
    try {
      // Prepared statements are planned for their values at first, and after five runs
      // possibly once for any values (a generic plan: array sizes unknown): both count.
      for (const mode of ['force_custom_plan', 'force_generic_plan']) {
        await client.query(`SET plan_cache_mode = ${mode}`);
        for (const [name, values] of Object.entries(plans)) {
          // EXPLAIN without ANALYZE: planned, nothing executed.
          const r = await client.query<{ 'QUERY PLAN': { Plan: PlanNode }[] }>(`EXPLAIN (FORMAT JSON) ${ENTRY_SQL[name as keyof typeof ENTRY_SQL]}`, values);
          walk(`${name} (${mode})`, (r.rows[0]?.['QUERY PLAN'][0] as { Plan: PlanNode }).Plan);
        }
      }
    } finally {
      client.release();
    }
    expect(scans).toEqual([]);
  });

  it('run in sessions with enable_seqscan off, also when DATABASE_URL brings options of its own', async () => {
    const withOwn = new URL(db.url);
    withOwn.searchParams.set('options', '-c statement_timeout=4321');
    for (const [url, timeout] of [
      [db.url, '0'],
      [withOwn.toString(), '4321ms'],
    ] as const) {
      const own = createEntryPool({ url, max: 1 });
      try {
        const r = await own.query<{ seq: string; timeout: string }>(`SELECT current_setting('enable_seqscan') AS "seq", current_setting('statement_timeout') AS "timeout"`);
        expect(r.rows[0]).toEqual({ seq: 'off', timeout });
      } finally {
        await own.end();
      }
    }
  });

  it('are never planned as a scan of the whole table, even when cached while it was small', async () => {
    // A fresh install under a burst of writes, as in the benchmark: each connection
    // prepares the grouped write and, after five runs, may keep a generic plan made while
    // the table is a few pages and its primary key index already larger (version rows are
    // inserted and deleted, HOT updates keep the heap small). For such a table a
    // sequential scan of `"path" = ANY($1)` looks cheaper than the index, and the cached
    // plan then read the whole table (every dead row version too) on each grouped write
    // until autovacuum's ANALYZE invalidated it: 450-700 whole-table reads per 4,000-6,000
    // writes here, in the benchmark most of PostgreSQL's CPU (docs/secrets.md, "Thirteenth
    // round"). The entry pool's sessions have enable_seqscan off: every statement of the
    // entry store is a key or key-range lookup.
    const fresh = await createTestDatabase();
    const prisma = createPrismaClient({ url: fresh.url, poolSize: 2 });
    const own = createEntryPool({ url: fresh.url, max: 8 });
    const services = createSecretsServices({ prisma, pool: own, bus: createMemoryBus() });
    try {
      const { secretPrefix: prefix } = await startOneShareInstall(services);
      let sent = 0;
      await Promise.all(
        Array.from({ length: 32 }, async () => {
          while (sent < 4000) {
            sent++;
            await services.kv.write(prefix, `k${sent % 64}`, { foo: randomBytes(32).toString('hex') }, undefined);
          }
        }),
      );
    } finally {
      services.stop();
      // Backends report their table statistics when they exit.
      await own.end();
      await prisma.$disconnect();
    }
    try {
      const admin = createEntryPool({ url: fresh.url, max: 1 });
      try {
        // (The cumulative statistics of exited backends can take a moment to be visible.)
        let stats: { seq_scan: string; idx_scan: string } | undefined;
        for (let i = 0; i < 50; i++) {
          const r = await admin.query<{ seq_scan: string; idx_scan: string }>(
            `SELECT "seq_scan"::text, "idx_scan"::text FROM pg_stat_user_tables WHERE "schemaname" = 'secrets' AND "relname" = 'entries'`,
          );
          stats = r.rows[0];
          if (stats && Number(stats.idx_scan) >= 4000) break;
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
        expect(Number(stats?.idx_scan)).toBeGreaterThanOrEqual(4000);
        expect(stats?.seq_scan).toBe('0');
      } finally {
        await admin.end();
      }
    } finally {
      await fresh.drop();
    }
  });

  it('send their array parameters as literals PostgreSQL reads back exactly', async () => {
    const texts = ['plain/path', 'with "quotes"', 'back\\slash\\', '\\"', 'a,b', '{braces}', ' spaced ', 'NULL', '', 'é/\u{1f600}', "it's"];
    const bytes = [randomBytes(17), Buffer.alloc(0), Buffer.from('\\"{},'), null, Buffer.from([0, 255])];
    const ints = [1, 0, -7, 2_147_483_647];
    const r = await pool.query<{ t: string[]; b: (Buffer | null)[]; i: number[]; e: string[] }>('SELECT $1::text[] AS t, $2::bytea[] AS b, $3::int[] AS i, $4::text[] AS e', [
      arrayLiteral(texts),
      arrayLiteral(bytes),
      arrayLiteral(ints),
      arrayLiteral([]),
    ]);
    expect(r.rows[0]).toEqual({ t: texts, b: bytes, i: ints, e: [] });
  });

  it('send their array parameters in the binary array format, which PostgreSQL reads back exactly', async () => {
    const texts = ['plain/path', 'with "quotes"', 'back\\slash\\', '\\"', 'a,b', '{braces}', ' spaced ', 'NULL', '', 'é/\u{1f600}', "it's", null];
    const bytes = [randomBytes(17), Buffer.alloc(0), Buffer.from('\\"{},'), null, Buffer.from([0, 255])];
    const ints = [1, 0, -7, 2_147_483_647, -2_147_483_648];
    const r = await pool.query<{ t: (string | null)[]; b: (Buffer | null)[]; i: number[]; e: string[]; n: number }>(
      'SELECT $1::text[] AS t, $2::bytea[] AS b, $3::int[] AS i, $4::text[] AS e, cardinality($4::text[]) AS n',
      [binaryArray(texts, 25), binaryArray(bytes, 17), binaryArray(ints, 23), binaryArray([], 25)],
    );
    expect(r.rows[0]).toEqual({ t: texts, b: bytes, i: ints, e: [], n: 0 });
    // The element type is checked against the parameter's: a mismatch is an error, not a reinterpretation.
    await expect(pool.query('SELECT $1::text[] AS t', [binaryArray([1, 2], 23)])).rejects.toThrow(/array element type 23 .* instead of expected 25/);
  });

  it('are prepared once per connection under their own names, and their results are right', async () => {
    const one = createEntryPool({ url: db.url, max: 1 });
    try {
      const store = createEntryStore({ pool: one });
      const base = `named/${randomBytes(4).toString('hex')}/`;
      await store.put(`${base}a`, Buffer.from('1'));
      await store.put(`${base}b`, Buffer.from('2'));
      expect(await store.get(`${base}a`)).toEqual(Buffer.from('1'));
      const many = await store.getMany([`${base}a`, `${base}b`, `${base}c`]);
      expect([...many].sort(([x], [y]) => x.localeCompare(y))).toEqual([
        [`${base}a`, Buffer.from('1')],
        [`${base}b`, Buffer.from('2')],
      ]);
      // In a transaction (the pool's client, not the pool), array parameters included.
      await store.transaction(async (tx) => {
        expect(await tx.get(`${base}b`, { forUpdate: true })).toEqual(Buffer.from('2'));
        await tx.replace([`${base}b`], [{ path: `${base}c`, value: Buffer.from('3') }]);
      });
      expect(await store.list(base)).toEqual([`${base}a`, `${base}c`]);
      const r = await one.query<{ name: string; statement: string }>(`SELECT "name", "statement" FROM pg_prepared_statements ORDER BY "name"`);
      expect(r.rows).toEqual([
        { name: 'secrets_get', statement: ENTRY_SQL.get },
        { name: 'secrets_getForUpdate', statement: ENTRY_SQL.getForUpdate },
        { name: 'secrets_getMany', statement: ENTRY_SQL.getMany },
        { name: 'secrets_listPaths', statement: ENTRY_SQL.listPaths },
        { name: 'secrets_put', statement: ENTRY_SQL.put },
        { name: 'secrets_replace', statement: ENTRY_SQL.replace },
      ]);
      await store.deletePrefix(base);
    } finally {
      await one.end();
    }
  });

  it('list and delete by prefix take exactly the paths that start with it, whatever their characters', async () => {
    const store = createEntryStore({ pool });
    const base = 'logical/prefix/';
    // Neighbours in byte order on both sides of each prefix, LIKE's own metacharacters,
    // and characters beyond ASCII and the BMP.
    const paths = ['a/x', 'a/y/z', 'a%/1', 'a_/1', 'a\\/1', 'a.', 'a0', 'a', 'b/', 'é/1', 'éa/1', 'ê', '\u{1f600}/1', '\u{1f601}', '\u{10ffff}/1', '\u{10ffff}\u{10ffff}'].map((p) => base + p);
    for (const p of paths) await store.put(p, Buffer.from(p));
    // Byte order (UTF-8), as the "C" collation sorts.
    const byteOrder = (xs: string[]) => xs.sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y)));
    const under = (prefix: string) => byteOrder(paths.filter((p) => p.startsWith(base + prefix)));
    for (const prefix of ['a/', 'a%/', 'a_/', 'a\\/', 'a', 'é', 'é/', '\u{1f600}', '\u{10ffff}', '']) {
      expect({ prefix, paths: await store.list(base + prefix) }).toEqual({ prefix, paths: under(prefix) });
    }
    expect(await store.deletePrefix(`${base}a/`)).toBe(2);
    expect(await store.deletePrefix(`${base}\u{10ffff}`)).toBe(2);
    expect(await store.list(base)).toEqual(byteOrder(paths.filter((p) => !p.startsWith(`${base}a/`) && !p.startsWith(`${base}\u{10ffff}`))));
    expect(await store.deletePrefix(base)).toBe(paths.length - 4);
    expect(await store.list(base)).toEqual([]);
  });
});

describe('KV v2 metadata writes and the entry pool', () => {
  it('a metadata write never needs a second connection inside its transaction (one connection; the configuration not cached)', async () => {
    // A transaction that read the mount's configuration from the pool while it held its own
    // connection deadlocked once every connection was held by transactions queued on the
    // key's row lock (concurrent-writes.itest.ts, right after configuration writes had
    // dropped the cached configuration). With a pool of one, any such read waits forever.
    const fresh = await createTestDatabase();
    const prisma = createPrismaClient({ url: fresh.url, poolSize: 2 });
    const one = createEntryPool({ url: fresh.url, max: 1 });
    const services = createSecretsServices({ prisma, pool: one, bus: createMemoryBus() });
    try {
      const { secretPrefix: prefix } = await startOneShareInstall(services);
      await services.kv.writeConfig(prefix, { max_versions: 3 });
      for (const patch of [false, true]) {
        services.kv.clearCache();
        const done = services.kv.writeMetadata(prefix, 'k', { max_versions: 2, custom_metadata: { p: String(patch) } }, patch);
        const outcome = await Promise.race([done.then(() => 'written'), new Promise((r) => setTimeout(() => r('stuck'), 10_000).unref())]);
        expect(outcome).toBe('written');
      }
      expect(await services.kv.readMetadata(prefix, 'k')).toMatchObject({ max_versions: 2, custom_metadata: { p: 'true' } });
    } finally {
      services.stop();
      // (A stuck transaction keeps its connection: do not wait on it here.)
      await Promise.race([one.end(), new Promise((r) => setTimeout(r, 2000).unref())]);
      await prisma.$disconnect();
      await fresh.drop();
    }
  });
});
