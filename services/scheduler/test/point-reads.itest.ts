// The hot reads' prepared statements (src/shared/point-reads.store.ts): a row and its table's
// index in one snapshot, and rows already held answered without their data while
// PostgreSQL confirms their version is current — never a row the database has replaced.
import request from 'supertest';
import { createPointReads } from '../src/shared/point-reads.store';
import { insertAllocation, minimalJob, registerJob, registerNode, startHarness, type Harness } from './harness';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

describe('scheduler point reads', () => {
  it('answers a job with its table index, the held object while the row is unchanged, the new row after any write to it', async () => {
    const reads = createPointReads(h.readPool);
    const registered = await registerJob(h.app, minimalJob('pr-1', { Meta: { v: '1' } }));
    const first = await reads.job('default', 'pr-1', ['jobs']);
    expect(first.value?.job.Meta).toEqual({ v: '1' });
    expect(first.index).toBeGreaterThanOrEqual(Number(registered['JobModifyIndex']));

    // Unchanged: the same object (PostgreSQL sent no data), at the same index.
    const again = await reads.job('default', 'pr-1', ['jobs']);
    expect(again.value).toBe(first.value);
    expect(again.index).toBe(first.index);

    // A write through the API: the new row and a higher index.
    await registerJob(h.app, minimalJob('pr-1', { Meta: { v: '2' } }));
    const updated = await reads.job('default', 'pr-1', ['jobs']);
    expect(updated.value).not.toBe(first.value);
    expect(updated.value?.job.Meta).toEqual({ v: '2' });
    expect(updated.index).toBeGreaterThan(first.index);

    // A write that leaves modify_index alone (the summary column only) is still seen: the
    // row version includes the writing transaction.
    await h.prisma.$executeRawUnsafe(`UPDATE "scheduler"."jobs" SET "summary" = jsonb_set("summary", '{Summary}', '{"marker": {"Queued": 7}}') WHERE "id" = 'pr-1'`);
    const touched = await reads.job('default', 'pr-1', ['job_summary']);
    expect(touched.value?.summary.Summary).toEqual({ marker: { Queued: 7 } });
    expect(touched.value?.job.Meta).toEqual({ v: '2' });

    // Gone: null, and a later row of the same name is read whole.
    await h.prisma.$executeRawUnsafe(`DELETE FROM "scheduler"."jobs" WHERE "id" = 'pr-1'`);
    expect((await reads.job('default', 'pr-1', ['jobs'])).value).toBeNull();
    await registerJob(h.app, minimalJob('pr-1', { Meta: { v: '3' } }));
    expect((await reads.job('default', 'pr-1', ['jobs'])).value?.job.Meta).toEqual({ v: '3' });
  });

  it('keeps concurrent readers of a changing row consistent: every answer is a version the database had', async () => {
    const reads = createPointReads(h.readPool);
    await registerJob(h.app, minimalJob('pr-2', { Meta: { n: '0' } }));
    const seen: string[] = [];
    const readers = Promise.all(
      Array.from({ length: 40 }, async () => {
        for (let i = 0; i < 10; i++) {
          const r = await reads.job('default', 'pr-2', ['jobs']);
          seen.push(String((r.value?.job.Meta as Record<string, string>)['n']));
        }
      }),
    );
    for (let n = 1; n <= 5; n++) await registerJob(h.app, minimalJob('pr-2', { Meta: { n: String(n) } }));
    await readers;
    expect(seen).toHaveLength(400);
    expect(seen.every((n) => ['0', '1', '2', '3', '4', '5'].includes(n))).toBe(true);
    expect((await reads.job('default', 'pr-2', ['jobs'])).value?.job.Meta).toEqual({ n: '5' });
  });

  it('keeps at most cacheRows rows and reads an evicted one whole again', async () => {
    const reads = createPointReads(h.readPool, { cacheRows: 2 });
    for (const id of ['pr-e1', 'pr-e2', 'pr-e3']) await registerJob(h.app, minimalJob(id));
    const a = await reads.job('default', 'pr-e1', ['jobs']);
    await reads.job('default', 'pr-e2', ['jobs']);
    await reads.job('default', 'pr-e3', ['jobs']); // pr-e1 goes
    const a2 = await reads.job('default', 'pr-e1', ['jobs']);
    expect(a2.value).not.toBe(a.value);
    expect(a2.value).toEqual(a.value);
  });

  it('answers an allocation the same way, and the API reads agree with the database after a stop', async () => {
    const nodeId = await registerNode(h.app);
    await registerJob(h.app, minimalJob('pr-alloc'));
    const alloc = await insertAllocation(h, { JobID: 'pr-alloc', NodeID: nodeId });
    const reads = createPointReads(h.readPool);
    const first = await reads.allocation(alloc.ID, ['allocs']);
    expect(first.value?.ID).toBe(alloc.ID);
    expect((await reads.allocation(alloc.ID, ['allocs'])).value).toBe(first.value);
    expect((await reads.allocation('no-such-alloc', ['allocs'])).value).toBeNull();

    const before = await request(h.app).get(`/v1/allocation/${alloc.ID}`);
    expect(before.status).toBe(200);
    expect(before.body.DesiredTransition?.Migrate ?? false).toBe(false);
    const stop = await request(h.app).post(`/v1/allocation/${alloc.ID}/stop`);
    expect(stop.status).toBe(200);
    const after = await request(h.app).get(`/v1/allocation/${alloc.ID}`);
    expect(after.status).toBe(200);
    expect(after.body.DesiredTransition.Migrate).toBe(true);
    expect(Number(after.headers['x-scheduler-index'])).toBeGreaterThanOrEqual(Number(stop.body.Index));
    const missing = await request(h.app).get('/v1/allocation/no-such-alloc');
    expect(missing.status).toBe(404);
    expect(missing.text).toBe('alloc not found');
  });
});
