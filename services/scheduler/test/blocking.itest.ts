// Blocking queries, pagination under concurrent inserts and racing writers (spec
// "Blocking queries", "Pagination"; docs/architecture.md "State, indexes, blocking
// queries"). Wake-ups travel through Redis (the harness uses the Redis bus).
import request from 'supertest';
import type { Express } from 'express';
import { minimalJob, registerJob, registerNode, startHarness, type Harness } from './harness';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function indexOf(app: Express, path: string): Promise<number> {
  const res = await request(app).get(path);
  expect(res.status).toBe(200);
  return Number(res.headers['x-scheduler-index']);
}

describe('blocking queries', () => {
  it('wakes a blocked read on a write to its table, through Redis, from another process', async () => {
    await registerJob(h.app, minimalJob('b-seed'));
    const index = await indexOf(h.app, '/v1/jobs');
    const other = await h.sibling();
    try {
      const started = Date.now();
      const blocked = request(h.app).get(`/v1/jobs?index=${index}&wait=20s`);
      const pending = blocked.then((r) => ({ res: r, at: Date.now() }));
      await sleep(300);
      const write = await registerJob(other.app, minimalJob('b-wake'));
      const writtenAt = Date.now();
      const { res, at } = await pending;
      expect(res.status).toBe(200);
      expect(Number(res.headers['x-scheduler-index'])).toBe(write['Index']);
      expect(res.body.map((j: { ID: string }) => j.ID)).toContain('b-wake');
      expect(at - started).toBeGreaterThanOrEqual(300);
      // Woken by the commit's publication, not by a poll or the timeout.
      expect(at - writtenAt).toBeLessThan(1000);
    } finally {
      await other.close();
    }
  });

  it('does not wake on writes to other tables and returns the unchanged index at the timeout', async () => {
    await registerNode(h.app);
    const index = await indexOf(h.app, '/v1/nodes');
    const started = Date.now();
    const blocked = request(h.app).get(`/v1/nodes?index=${index}&wait=1500ms`);
    await sleep(200);
    await registerJob(h.app, minimalJob('b-other-table'));
    const res = await blocked;
    const took = Date.now() - started;
    expect(res.status).toBe(200);
    expect(Number(res.headers['x-scheduler-index'])).toBe(index);
    // wait plus at most wait/16 jitter (spec "Blocking queries").
    expect(took).toBeGreaterThanOrEqual(1500);
    expect(took).toBeLessThan(1500 + 1500 / 16 + 700);
  });

  it('answers at once when index is 0 or already passed', async () => {
    const index = await indexOf(h.app, '/v1/jobs');
    for (const q of ['index=0&wait=5s', `index=${index - 1}&wait=5s`]) {
      const started = Date.now();
      const res = await request(h.app).get(`/v1/jobs?${q}`);
      expect(res.status).toBe(200);
      expect(Date.now() - started).toBeLessThan(1000);
    }
  });

  it('blocks on single-object reads and wakes when the object table changes', async () => {
    await registerJob(h.app, minimalJob('b-one'));
    const index = await indexOf(h.app, '/v1/job/b-one');
    const blocked = request(h.app).get(`/v1/job/b-one?index=${index}&wait=10s`);
    await sleep(150);
    const w = await registerJob(h.app, minimalJob('b-one', { Priority: 80 }));
    const res = await blocked;
    expect(res.body.Priority).toBe(80);
    expect(Number(res.headers['x-scheduler-index'])).toBe(w['Index']);
  });

  it('caps wait at 10 minutes without error', async () => {
    const res = await request(h.app).get('/v1/jobs?index=0&wait=30m');
    expect(res.status).toBe(200);
  });
});

describe('pagination with concurrent inserts', () => {
  it('returns every pre-existing job exactly once, in order, while jobs are being inserted', async () => {
    const before: string[] = [];
    for (let i = 0; i < 30; i += 2) {
      const id = `cc-${String(i).padStart(3, '0')}`;
      before.push(id);
      await registerJob(h.app, minimalJob(id));
    }
    let stop = false;
    const inserted: string[] = [];
    const inserter = (async () => {
      for (let i = 1; i < 30 && !stop; i += 2) {
        const id = `cc-${String(i).padStart(3, '0')}`;
        await registerJob(h.app, minimalJob(id));
        inserted.push(id);
      }
    })();
    const seen: string[] = [];
    let token = '';
    for (;;) {
      const res = await request(h.app).get(`/v1/jobs?prefix=cc-&per_page=3${token ? `&next_token=${token}` : ''}`);
      expect(res.status).toBe(200);
      seen.push(...res.body.map((j: { ID: string }) => j.ID));
      token = res.headers['x-scheduler-nexttoken'] ?? '';
      if (!token) break;
      await sleep(20);
    }
    stop = true;
    await inserter;
    expect(new Set(seen).size).toBe(seen.length);
    expect([...seen].sort()).toEqual(seen);
    for (const id of before) expect(seen).toContain(id);
    expect(inserted.length).toBeGreaterThan(0);
  });
});

describe('racing writers', () => {
  it('never hands out an index a blocked reader could skip', async () => {
    const writes: Array<{ id: string; index: number }> = [];
    const observations: Array<{ index: number; ids: Set<string> }> = [];
    let done = false;
    let index = await indexOf(h.app, '/v1/jobs');
    const reader = (async () => {
      while (!done) {
        const res = await request(h.app).get(`/v1/jobs?prefix=race-&index=${index}&wait=2s`);
        const got = Number(res.headers['x-scheduler-index']);
        observations.push({ index: got, ids: new Set(res.body.map((j: { ID: string }) => j.ID)) });
        index = Math.max(index, got);
      }
    })();
    const writer = async (w: number) => {
      for (let i = 0; i < 10; i++) {
        const id = `race-${w}-${i}`;
        const r = await registerJob(h.app, minimalJob(id));
        writes.push({ id, index: Number(r['Index']) });
      }
    };
    await Promise.all([writer(1), writer(2), writer(3)]);
    await sleep(300);
    done = true;
    await registerJob(h.app, minimalJob('race-final'));
    await reader;

    const indexes = writes.map((w) => w.index);
    expect(new Set(indexes).size).toBe(indexes.length);
    expect(observations.length).toBeGreaterThan(1);
    // Whatever index a reader is told, every write at or below it is visible.
    for (const o of observations) {
      for (const w of writes) if (w.index <= o.index) expect(o.ids.has(w.id)).toBe(true);
    }
    // And the reader ended up having seen the last of the racing writes.
    expect(index).toBeGreaterThanOrEqual(Math.max(...indexes));
  });
});
