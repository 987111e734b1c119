// Behaviour of the state store against real Postgres, run once per bus implementation
// (state-store.memory.itest.ts, state-store.redis.itest.ts). docs/architecture.md,
// "State, indexes, blocking queries, events"; reference 0.2 and 6.
import { setMaxListeners } from 'node:events';
import type { Bus } from '@selfstack/bus';
import { type PrismaClient, createPrismaClient } from '@selfstack/db';
import {
  type CreateStateStoreOptions,
  type EventFrame,
  type EventTail,
  type StateStore,
  OFFER_SLICE,
  StateWriteTimeoutError,
  createStateStore,
} from '../src';
import { type TestDatabase, createTestDatabase } from '@selfstack/testing';

export const silentLogger = { debug: () => undefined, warn: () => undefined, error: () => undefined };

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export async function waitFor(predicate: () => boolean, timeoutMs = 3000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(5);
  }
}

// Settles a promise into an inspectable box so tests can assert "still pending".
export function track<T>(promise: Promise<T>): { settled: boolean; value?: T; error?: unknown; promise: Promise<T> } {
  const box: { settled: boolean; value?: T; error?: unknown; promise: Promise<T> } = { settled: false, promise };
  promise.then(
    (value) => {
      box.settled = true;
      box.value = value;
    },
    (error: unknown) => {
      box.settled = true;
      box.error = error;
    },
  );
  return box;
}

// Reads up to `count` frames from a tail, failing instead of hanging.
export async function takeFrames(tail: EventTail, count: number, timeoutMs = 5000): Promise<EventFrame[]> {
  const frames: EventFrame[] = [];
  const deadline = Date.now() + timeoutMs;
  while (frames.length < count) {
    const remaining = deadline - Date.now();
    if (remaining <= 0) throw new Error(`only ${frames.length}/${count} frames within ${timeoutMs} ms`);
    let timer: NodeJS.Timeout | undefined;
    const next = await Promise.race([
      tail.next(),
      new Promise<'timeout'>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), remaining);
      }),
    ]);
    clearTimeout(timer);
    if (next === 'timeout') throw new Error(`only ${frames.length}/${count} frames within ${timeoutMs} ms`);
    if (next.done) throw new Error(`tail ended after ${frames.length}/${count} frames`);
    frames.push(next.value);
  }
  return frames;
}

export interface StateTestContext {
  db: TestDatabase;
  prisma: PrismaClient;
  bus: Bus;
  store: StateStore;
  extraStores: StateStore[];
  makeStore(overrides?: Partial<CreateStateStoreOptions<never>>): Promise<StateStore>;
}

export function setupStateTest(makeBus: () => Bus): StateTestContext {
  const ctx = { extraStores: [] } as unknown as StateTestContext;
  beforeAll(async () => {
    // A clone of the migrated template: this file's own database.
    ctx.db = await createTestDatabase();
    ctx.prisma = createPrismaClient({ url: ctx.db.url, poolSize: 6 });
  });
  afterAll(async () => {
    await ctx.prisma?.$disconnect();
    await ctx.db?.drop();
  });
  beforeEach(async () => {
    // Each test starts from a fresh cluster: counter back at 1, no table indexes, no events.
    await ctx.prisma.$executeRawUnsafe('TRUNCATE "scheduler"."table_index", "scheduler"."event_log"');
    await ctx.prisma.$executeRawUnsafe('UPDATE "scheduler"."state_index" SET "value" = 1 WHERE "id" = 1');
    ctx.bus = makeBus();
    ctx.extraStores = [];
    ctx.makeStore = async (overrides = {}) => {
      const store = createStateStore({ prisma: ctx.prisma, bus: ctx.bus, logger: silentLogger, ...overrides });
      await store.ready();
      ctx.extraStores.push(store);
      return store;
    };
    ctx.store = createStateStore({ prisma: ctx.prisma, bus: ctx.bus, logger: silentLogger });
    await ctx.store.ready();
  });
  afterEach(async () => {
    await ctx.store.close();
    for (const store of ctx.extraStores) await store.close();
    await ctx.bus.close();
  });
  return ctx;
}

// `count` concurrent writes to table 'race', one event each; every transaction dawdles so
// that commits would reorder without the counter lock.
function racingWrites(store: StateStore, label: string, count: number) {
  return Promise.all(
    Array.from({ length: count }, (_, i) =>
      store.withWrite(['race'], async ({ emit, tx }) => {
        await tx.$executeRawUnsafe(`SELECT pg_sleep(${(Math.random() * 0.01).toFixed(4)})`);
        emit({ topic: 'Job', type: 'JobRegistered', key: `${label}-${i}`, namespace: 'default', payload: {} });
      }),
    ),
  );
}

// A bus whose deliveries to this process can be held back (and dropped or let through).
function gatedBus(bus: Bus) {
  let held: Array<() => void> | null = null;
  const gated: Bus = {
    ...bus,
    publish: (channel, message) => bus.publish(channel, message),
    subscribe: (channel, listener) =>
      bus.subscribe(channel, (message) => {
        if (held) held.push(() => listener(message));
        else listener(message);
      }),
    onReconnect: (listener) => bus.onReconnect(listener),
    close: () => bus.close(),
  };
  return {
    bus: gated,
    hold: () => {
      held = [];
    },
    heldCount: () => held?.length ?? 0,
    /** Delivers what was held (`drop`: forgets it) and stops holding. */
    release: (drop = false) => {
      const pending = held ?? [];
      held = null;
      if (!drop) for (const deliver of pending) deliver();
      return pending.length;
    },
  };
}

// A blocking read of `tables` whose answer is the table index itself.
function indexReader(store: StateStore, tables: string[]) {
  return async () => ({ index: await store.currentIndex(tables), value: null });
}

// A client over `prisma` that counts the event hub's shared frame reads.
function frameReadCounter(prisma: PrismaClient) {
  let reads = 0;
  const client = {
    $queryRawUnsafe: <T>(query: string, ...values: unknown[]) => {
      if (query.includes('"idx"')) reads++;
      return prisma.$queryRawUnsafe<T>(query, ...values);
    },
    $executeRawUnsafe: (query: string, ...values: unknown[]) => prisma.$executeRawUnsafe(query, ...values),
    $transaction: prisma.$transaction.bind(prisma),
  };
  return { client, reads: () => reads };
}

export function describeStateStoreContract(name: string, makeBus: () => Bus): void {
  describe(`state store (${name} bus)`, () => {
    // The 1,000-waiter and racing-writer cases take seconds on a loaded 2-core box.
    jest.setTimeout(30_000);
    const ctx = setupStateTest(makeBus);

    describe('withWrite and indexes', () => {
      it('starts a new cluster at index 1 and hands out consecutive indexes from 2', async () => {
        const { store } = ctx;
        expect(await store.currentIndex(['jobs'])).toBe(1);
        expect(await store.currentIndex([])).toBe(1);
        const first = await store.withWrite(['jobs'], async ({ index }) => `job@${index}`);
        const second = await store.withWrite(['nodes', 'nodes'], async () => 'node');
        expect(first).toEqual({ index: 2, result: 'job@2' });
        expect(second.index).toBe(3);
        expect(await store.currentIndex(['jobs'])).toBe(2);
        expect(await store.currentIndex(['nodes'])).toBe(3);
        expect(await store.currentIndex(['jobs', 'nodes', 'never-written'])).toBe(3);
        expect(await store.currentIndex([])).toBe(3);
      });

      it('stores emitted events in emit order with their index, and hands Prisma model access to fn', async () => {
        const { store } = ctx;
        const { index, result } = await store.withWrite(['jobs', 'evals'], async ({ tx, emit }) => {
          emit({ topic: 'Job', type: 'JobRegistered', key: 'web', namespace: 'default', payload: { Job: { ID: 'web' } } });
          emit({ topic: 'Evaluation', type: 'JobRegistered', key: 'e1', namespace: 'default', filterKeys: ['web', ''], payload: { Evaluation: { ID: 'e1' } } });
          emit({ topic: 'Node', type: 'NodeRegistration', key: 'n1', namespace: '', filterKeys: null, payload: null });
          // The callback runs inside the transaction: its own writes are not visible yet.
          return tx.eventLog.count();
        });
        expect(result).toBe(0);
        const events = await store.eventsAfter(0);
        expect(events.map((e) => [e.index, e.seq, e.topic, e.type, e.key, e.namespace, e.filterKeys, e.payload])).toEqual([
          [index, 0, 'Job', 'JobRegistered', 'web', 'default', null, { Job: { ID: 'web' } }],
          [index, 1, 'Evaluation', 'JobRegistered', 'e1', 'default', ['web', ''], { Evaluation: { ID: 'e1' } }],
          [index, 2, 'Node', 'NodeRegistration', 'n1', '', null, null],
        ]);
        expect(events[0]?.createdAt).toBeInstanceOf(Date);
      });

      it('rolls back everything when fn throws and does not burn an index', async () => {
        const { store } = ctx;
        await expect(
          store.withWrite(['jobs'], async ({ emit }) => {
            emit({ topic: 'Job', type: 'JobRegistered', key: 'x', namespace: 'default', payload: {} });
            throw new Error('validation failed');
          }),
        ).rejects.toThrow('validation failed');
        expect(await store.currentIndex(['jobs'])).toBe(1);
        expect(await store.eventsAfter(0)).toEqual([]);
        expect((await store.withWrite(['jobs'], async () => undefined)).index).toBe(2);
      });

      it('rejects emit() after the callback has returned', async () => {
        const { store } = ctx;
        let late: (() => void) | undefined;
        await store.withWrite(['jobs'], async ({ emit }) => {
          late = () => emit({ topic: 'Job', type: 'JobRegistered', key: 'late', namespace: 'default', payload: {} });
        });
        expect(() => late?.()).toThrow(/after the withWrite callback returned/);
      });

      it('records the tables a callback touches with those named, wakes their readers, and rejects touch() after it returned', async () => {
        const { store } = ctx;
        const reader = track(store.blockingQuery({ minIndex: 1, waitMs: 5000, tables: ['deployments'] }, indexReader(store, ['deployments'])));
        await sleep(20);
        let late: (() => void) | undefined;
        const { index } = await store.withWrite(['jobs'], async ({ touch }) => {
          touch('deployments', 'jobs');
          late = () => touch('evals');
        });
        expect(await store.currentIndex(['jobs'])).toBe(index);
        expect(await store.currentIndex(['deployments'])).toBe(index);
        await waitFor(() => reader.settled, 3000, 'the deployments reader');
        expect(reader.value).toEqual({ index, value: null });
        expect(() => late?.()).toThrow(/touch\(\) called after the withWrite callback returned/);
        expect(await store.currentIndex(['evals'])).toBe(1);
      });

      it('reads `first` with the counter lock held and runs atCommit statements with the commit; a failing one rolls the write back', async () => {
        const { store } = ctx;
        let late: (() => void) | undefined;
        const statement = (table: string) => ({ text: `INSERT INTO "scheduler"."table_index" ("table", "index") VALUES ($1, $2::bigint)`, values: [table] });
        const { index, result } = await store.withWrite(
          ['jobs'],
          async ({ index, first, atCommit }) => {
            atCommit({ ...statement('at-commit'), values: ['at-commit', BigInt(index)] });
            late = () => atCommit(statement('late'));
            return first;
          },
          { first: { text: `SELECT "value" FROM "scheduler"."state_index" WHERE "id" = $1`, values: [1] } },
        );
        // The counter as this write's own lock left it: every earlier write was visible.
        expect(result).toEqual([{ value: BigInt(index) }]);
        expect(await store.currentIndex(['at-commit'])).toBe(index);
        expect(() => late?.()).toThrow(/atCommit\(\) called after the withWrite callback returned/);
        await expect(
          store.withWrite(['jobs'], async ({ index: i, emit, atCommit }) => {
            emit({ topic: 'Job', type: 'JobRegistered', key: 'x', namespace: 'default', payload: {} });
            // The same primary key again: fails at commit.
            atCommit({ ...statement('at-commit'), values: ['at-commit', BigInt(i)] });
          }),
        ).rejects.toThrow(/duplicate key/);
        expect(await store.currentIndex(['jobs'])).toBe(index);
        expect(await store.eventsAfter(0)).toEqual([]);
      });

      it('runs `raw` writes and its own reads on the `sql` client, every other write on `prisma`', async () => {
        const used: string[] = [];
        // Both clients reach the same database; each notes which one ran a statement.
        const noting = (label: string) => {
          const wrap = <T extends object>(target: T): T =>
            new Proxy(target, {
              get(t, prop, receiver) {
                const value = Reflect.get(t, prop, receiver) as unknown;
                if (prop === '$queryRawUnsafe' || prop === '$executeRawUnsafe')
                  return (...args: unknown[]) => {
                    used.push(label);
                    return (value as (...a: unknown[]) => unknown).apply(t, args);
                  };
                if (prop === '$transaction') return (fn: (tx: unknown) => Promise<unknown>, o: unknown) => (value as (f: unknown, o: unknown) => unknown).call(t, (tx: object) => fn(wrap(tx)), o);
                return value;
              },
            });
          return wrap(ctx.prisma);
        };
        const store = await ctx.makeStore({ prisma: noting('prisma') as never, sql: noting('sql') as never });
        used.length = 0;
        await store.withWrite(['jobs'], async ({ tx }) => tx.$queryRawUnsafe('SELECT 1'), { raw: true });
        expect(new Set(used)).toEqual(new Set(['sql']));
        used.length = 0;
        await store.withWrite(['jobs'], async ({ tx }) => tx.$queryRawUnsafe('SELECT 1'));
        expect(new Set(used)).toEqual(new Set(['prisma']));
        used.length = 0;
        expect(await store.currentIndex(['jobs'])).toBe(3);
        expect((await store.eventsAfter(0)).length).toBe(0);
        expect(await store.oldestEventIndex()).toBeNull();
        expect(new Set(used)).toEqual(new Set(['sql']));
      });

      it('turns a transaction over its budget into StateWriteTimeoutError and frees the counter', async () => {
        // A generous maxWait: on a loaded machine opening a pooled connection alone can take 300 ms.
        const store = await ctx.makeStore({ transactionTimeoutMs: 300, transactionMaxWaitMs: 5000 });
        // A statement stuck while holding the counter lock: the statement_timeout withWrite
        // sets cancels it server-side, so the lock (which every writer queues on) is freed
        // within the budget instead of when the statement finally ends.
        const started = Date.now();
        await expect(
          store.withWrite(['jobs'], async ({ tx }) => {
            await tx.$executeRawUnsafe('SELECT pg_sleep(10)');
          }),
        ).rejects.toBeInstanceOf(StateWriteTimeoutError);
        expect((await ctx.store.withWrite(['jobs'], async () => undefined)).index).toBe(2);
        expect(Date.now() - started).toBeLessThan(4000);
        // The callback dawdling in JavaScript: Prisma expires the transaction.
        await expect(
          store.withWrite(['jobs'], async ({ tx }) => {
            await sleep(600);
            await tx.$queryRawUnsafe('SELECT 1');
          }),
        ).rejects.toBeInstanceOf(StateWriteTimeoutError);
        const after = Date.now();
        expect((await ctx.store.withWrite(['jobs'], async () => undefined)).index).toBe(3);
        expect(Date.now() - after).toBeLessThan(1000);
      });
      it('keeps a committed write when the wake-up cannot be published, and logs it', async () => {
        const bus = makeBus();
        const warnings: string[] = [];
        const logger = { ...silentLogger, warn: (message: string) => warnings.push(message), error: (message: string) => warnings.push(message) };
        const store = createStateStore({ prisma: ctx.prisma, bus, logger });
        await store.ready();
        await bus.close();
        const { index } = await store.withWrite(['jobs'], async () => undefined);
        expect(index).toBe(2);
        expect(await store.currentIndex(['jobs'])).toBe(2);
        await waitFor(() => warnings.includes('state wake-up publish failed'), 3000, 'the warning');
        await store.close();
      });

      it('rejects ready() and blocking reads when the bus subscription cannot be made', async () => {
        const bus = makeBus();
        await bus.close();
        const store = createStateStore({ prisma: ctx.prisma, bus, logger: silentLogger });
        await expect(store.ready()).rejects.toThrow(/closed/);
        await expect(
          store.blockingQuery({ minIndex: 1, waitMs: 1000, tables: ['jobs'] }, indexReader(store, ['jobs'])),
        ).rejects.toThrow(/closed/);
        expect(store.waiterCount()).toBe(0);
        await store.close();
      });
    });

    describe('blockingQuery', () => {
      // Stores a test makes itself are closed even when it fails half-way (a blocked reader
      // would otherwise keep the worker alive).
      const cleanups: Array<() => Promise<void>> = [];
      afterEach(async () => {
        for (const cleanup of cleanups.splice(0)) await cleanup();
      });
      /** A store of its own whose bus deliveries are held back, and a reader of 'jobs' that counts its runs. */
      async function heldBackStore() {
        const gate = gatedBus(makeBus());
        // What the store logs (a failed publish, a lost subscription) is shown when a wait fails.
        const logged: string[] = [];
        const note = (level: string) => (message: string, meta?: unknown) => void logged.push(`${level} ${message} ${JSON.stringify(meta ?? {})}`);
        const store = createStateStore({ prisma: ctx.prisma, bus: gate.bus, logger: { debug: () => undefined, warn: note('warn'), error: note('error') } });
        cleanups.push(async () => {
          await store.close();
          await gate.bus.close();
        });
        await store.ready();
        gate.hold();
        let count = 0;
        const counting = async () => {
          count++;
          return { index: await store.currentIndex(['jobs']), value: null };
        };
        return { gate, store, counting, runs: () => count, logged };
      }
      it('answers at once when minIndex is 0 or absent, without registering a waiter', async () => {
        const { store } = ctx;
        let runs = 0;
        const run = async () => {
          runs++;
          return { index: 1, value: 'v' };
        };
        expect(await store.blockingQuery({ minIndex: 0, waitMs: 5000, tables: ['jobs'] }, run)).toEqual({ index: 1, value: 'v' });
        expect(await store.blockingQuery({ waitMs: 5000, tables: ['jobs'] }, run)).toEqual({ index: 1, value: 'v' });
        expect(runs).toBe(2);
        expect(store.waiterCount()).toBe(0);
      });

      it('answers at once when the index is already past minIndex', async () => {
        const { store } = ctx;
        await store.withWrite(['jobs'], async () => undefined);
        const started = Date.now();
        const result = await store.blockingQuery({ minIndex: 1, waitMs: 5000, tables: ['jobs'] }, indexReader(store, ['jobs']));
        expect(result.index).toBe(2);
        expect(Date.now() - started).toBeLessThan(500);
      });

      it('blocks, and a write to its table releases it within milliseconds', async () => {
        const { store } = ctx;
        const read = track(store.blockingQuery({ minIndex: 1, waitMs: 10_000, tables: ['jobs'] }, indexReader(store, ['jobs'])));
        await sleep(150);
        expect(read.settled).toBe(false);
        expect(store.waiterCount()).toBe(1);
        const { index } = await store.withWrite(['jobs'], async () => undefined);
        const committedAt = Date.now();
        const result = await read.promise;
        expect(Date.now() - committedAt).toBeLessThan(300);
        expect(result.index).toBe(index);
        expect(store.waiterCount()).toBe(0);
      });

      it("hands a woken reader the waking write's index as its hint (none on the first read)", async () => {
        const { store } = ctx;
        const hints: Array<number | undefined> = [];
        const run = async (hint?: { index: number }) => {
          hints.push(hint?.index);
          return { index: hint ? hint.index : await store.currentIndex(['jobs']), value: null };
        };
        const read = track(store.blockingQuery({ minIndex: 1, waitMs: 10_000, tables: ['jobs'] }, run));
        await waitFor(() => store.waiterCount() === 1 && hints.length === 1, 3000, 'the reader to block');
        const { index } = await store.withWrite(['jobs'], async () => undefined);
        expect((await read.promise).index).toBe(index);
        expect(hints).toEqual([undefined, index]);
      });

      it("wakes this process's readers at commit, without waiting for the bus", async () => {
        const { gate, store, counting, runs, logged } = await heldBackStore();
        const read = track(store.blockingQuery({ minIndex: 1, waitMs: 10_000, tables: ['jobs'] }, counting));
        await waitFor(() => store.waiterCount() === 1 && runs() === 1, 3000, 'the reader to block');
        const { index } = await store.withWrite(['jobs'], async () => undefined);
        // The writer's continuation (its own response) comes first: readers wake on the next turn.
        expect(runs()).toBe(1);
        await waitFor(() => read.settled, 1000, 'the local wake-up');
        expect(read.value?.index).toBe(index);
        // The message did go out (for other processes); this one has nothing left to wake.
        await waitFor(() => gate.heldCount() === 1, 3000, `the published message (held ${gate.heldCount()}; store logged ${JSON.stringify(logged)})`);
        gate.release(true);
      });

      it("ignores the bus echo of a write its readers have already seen (no second read)", async () => {
        const { gate, store, counting, runs } = await heldBackStore();
        const first = track(store.blockingQuery({ minIndex: 1, waitMs: 10_000, tables: ['jobs'] }, counting));
        await waitFor(() => store.waiterCount() === 1, 3000, 'the reader to block');
        const { index } = await store.withWrite(['jobs'], async () => undefined);
        expect((await first.promise).index).toBe(index);
        expect(runs()).toBe(2);
        // The client re-arms at the index it got, then the write's own message arrives.
        const again = track(store.blockingQuery({ minIndex: index, waitMs: 10_000, tables: ['jobs'] }, counting));
        await waitFor(() => store.waiterCount() === 1 && runs() === 3, 3000, 'the re-armed reader to block');
        await waitFor(() => gate.heldCount() === 1, 3000, 'the echo');
        gate.release();
        await sleep(100);
        expect(runs()).toBe(3);
        expect(again.settled).toBe(false);
        // A later write still wakes it (locally, and its echo is ignored too).
        const next = await store.withWrite(['jobs'], async () => undefined);
        expect((await again.promise).index).toBe(next.index);
        expect(runs()).toBe(4);
      });

      it('is not released by a write to another table', async () => {
        const { store } = ctx;
        let runs = 0;
        const run = async () => {
          runs++;
          return { index: await store.currentIndex(['jobs']), value: null };
        };
        const started = Date.now();
        const read = track(store.blockingQuery({ minIndex: 1, waitMs: 400, tables: ['jobs'] }, run));
        await sleep(50);
        await store.withWrite(['nodes'], async () => undefined);
        await sleep(100);
        expect(read.settled).toBe(false);
        const result = await read.promise;
        expect(Date.now() - started).toBeGreaterThanOrEqual(400);
        expect(result.index).toBe(1);
        // The other table's write did not even cause a re-read.
        expect(runs).toBe(1);
      });

      it('on timeout returns the current index after wait plus at most wait/16 jitter', async () => {
        const { store } = ctx;
        await store.withWrite(['jobs'], async () => undefined);
        const waitMs = 300;
        const started = Date.now();
        const result = await store.blockingQuery({ minIndex: 2, waitMs, tables: ['jobs'] }, indexReader(store, ['jobs']));
        const elapsed = Date.now() - started;
        expect(result.index).toBe(2);
        expect(elapsed).toBeGreaterThanOrEqual(waitMs);
        expect(elapsed).toBeLessThanOrEqual(waitMs * (1 + 1 / 16) + 200);
        expect(store.waiterCount()).toBe(0);
      });

      it('removes the waiter when the client aborts, and rejects with the abort reason', async () => {
        const { store } = ctx;
        const controller = new AbortController();
        const read = track(
          store.blockingQuery({ minIndex: 1, waitMs: 10_000, tables: ['jobs'], signal: controller.signal }, indexReader(store, ['jobs'])),
        );
        await waitFor(() => store.waiterCount() === 1, 2000, 'waiter registered');
        controller.abort(new Error('client went away'));
        await expect(read.promise).rejects.toThrow('client went away');
        expect(store.waiterCount()).toBe(0);
        // Already-aborted signals never register at all.
        await expect(
          store.blockingQuery({ minIndex: 1, waitMs: 10_000, tables: ['jobs'], signal: controller.signal }, indexReader(store, ['jobs'])),
        ).rejects.toThrow('client went away');
        expect(store.waiterCount()).toBe(0);
      });

      it('re-reads when a change lands while run() is in flight', async () => {
        const { store } = ctx;
        let runs = 0;
        const run = async () => {
          runs++;
          const index = await store.currentIndex(['jobs']);
          // The first read is stale by the time it returns: a write committed meanwhile.
          if (runs === 1) await store.withWrite(['jobs'], async () => undefined);
          return { index, value: null };
        };
        const started = Date.now();
        const result = await store.blockingQuery({ minIndex: 1, waitMs: 5000, tables: ['jobs'] }, run);
        expect(result.index).toBe(2);
        expect(runs).toBe(2);
        expect(Date.now() - started).toBeLessThan(1000);
      });

      it('handles 1,000 concurrent waiters, waking only those of the written table', async () => {
        const { store } = ctx;
        const runsByTable = { jobs: 0, nodes: 0 };
        const controller = new AbortController();
        // One signal shared by 1,000 readers here (in production each request has its own).
        setMaxListeners(2000, controller.signal);
        const reader = (table: 'jobs' | 'nodes') => async () => {
          runsByTable[table]++;
          return { index: await store.currentIndex([table]), value: table };
        };
        const jobsReads = Array.from({ length: 500 }, () =>
          store.blockingQuery({ minIndex: 1, waitMs: 30_000, tables: ['jobs'], signal: controller.signal }, reader('jobs')),
        );
        const nodesReads = Array.from({ length: 500 }, () =>
          track(store.blockingQuery({ minIndex: 1, waitMs: 30_000, tables: ['nodes'], signal: controller.signal }, reader('nodes'))),
        );
        await waitFor(() => store.waiterCount() === 1000 && runsByTable.jobs === 500 && runsByTable.nodes === 500, 10_000, '1000 waiters');
        const { index } = await store.withWrite(['jobs'], async () => undefined);
        const results = await Promise.all(jobsReads);
        expect(results.every((r) => r.index === index)).toBe(true);
        expect(store.waiterCount()).toBe(500);
        expect(runsByTable.nodes).toBe(500);
        expect(nodesReads.some((r) => r.settled)).toBe(false);
        controller.abort();
        await Promise.allSettled(nodesReads.map((r) => r.promise));
        expect(store.waiterCount()).toBe(0);
      });

      it('never lets a reader skip a committed change while writers from two clients race', async () => {
        const { store, db } = ctx;
        // Two clients = two independent connection pools, so writes truly interleave.
        const otherPrisma = createPrismaClient({ url: db.url, poolSize: 4 });
        const otherStore = await ctx.makeStore({ prisma: otherPrisma as never });
        try {
          const writesPerClient = 25;
          const seen: number[] = [];
          const observedIndexes: number[] = [];
          let stop = false;
          // A change-log reader: every answer carries the events since its last index,
          // read in one statement together with the table index (same snapshot).
          const reader = (async () => {
            let lastSeen = 1;
            while (!stop || lastSeen < 1 + 2 * writesPerClient) {
              const result = await store.blockingQuery({ minIndex: lastSeen, waitMs: 1000, tables: ['race'] }, async () => {
                const rows = await ctx.prisma.$queryRawUnsafe<{ index: bigint; current: bigint }[]>(
                  `SELECT e."index", (SELECT COALESCE(MAX("index"), 1) FROM "scheduler"."table_index" WHERE "table" = 'race') AS current
                   FROM (SELECT 1) AS one LEFT JOIN "scheduler"."event_log" e ON e."index" > $1 ORDER BY e."index"`,
                  lastSeen,
                );
                const current = Number(rows[0]?.current ?? 1);
                return { index: current, value: rows.filter((r) => r.index !== null).map((r) => Number(r.index)) };
              });
              if (result.index <= lastSeen) continue;
              observedIndexes.push(result.index);
              seen.push(...result.value);
              lastSeen = result.index;
            }
          })();
          const [a, b] = await Promise.all([racingWrites(store, 'a', writesPerClient), racingWrites(otherStore, 'b', writesPerClient)]);
          stop = true;
          await reader;
          const written = [...a!, ...b!].map((w) => w.index).sort((x, y) => x - y);
          const expected = Array.from({ length: 2 * writesPerClient }, (_, i) => i + 2);
          expect(written).toEqual(expected);
          // Every committed index observed, once, in order: no gap, no repeat.
          expect(seen).toEqual(expected);
          for (let i = 1; i < observedIndexes.length; i++) expect(observedIndexes[i]!).toBeGreaterThan(observedIndexes[i - 1]!);
        } finally {
          await otherPrisma.$disconnect();
        }
      });

      it('never lets a reader that answers with its wake-up hint skip a committed change while writers race', async () => {
        const { store, db } = ctx;
        const otherPrisma = createPrismaClient({ url: db.url, poolSize: 4 });
        const otherStore = await ctx.makeStore({ prisma: otherPrisma as never });
        try {
          const writesPerClient = 25;
          const last = 1 + 2 * writesPerClient;
          const seen = new Set<number>();
          const observedIndexes: number[] = [];
          let hinted = 0;
          // As the scheduler's reads do: a woken reader reports the waking write's index
          // (a lower bound) and loads the data afterwards, which may already be newer.
          const reader = (async () => {
            let lastSeen = 1;
            while (lastSeen < last) {
              const result = await store.blockingQuery({ minIndex: lastSeen, waitMs: 1000, tables: ['race'] }, async (hint) => {
                if (hint) hinted++;
                const index = hint ? hint.index : await store.currentIndex(['race']);
                const rows = await ctx.prisma.$queryRawUnsafe<{ index: bigint }[]>(
                  `SELECT "index" FROM "scheduler"."event_log" WHERE "index" > $1 ORDER BY "index"`,
                  lastSeen,
                );
                return { index, value: rows.map((r) => Number(r.index)) };
              });
              if (result.index <= lastSeen) continue;
              // Everything up to the reported index must be in the answer.
              for (let i = lastSeen + 1; i <= result.index; i++) expect(result.value).toContain(i);
              observedIndexes.push(result.index);
              for (const i of result.value) seen.add(i);
              lastSeen = result.index;
            }
          })();
          await Promise.all([racingWrites(store, 'a', writesPerClient), racingWrites(otherStore, 'b', writesPerClient)]);
          await reader;
          expect([...seen].sort((x, y) => x - y)).toEqual(Array.from({ length: 2 * writesPerClient }, (_, i) => i + 2));
          for (let i = 1; i < observedIndexes.length; i++) expect(observedIndexes[i]!).toBeGreaterThan(observedIndexes[i - 1]!);
          expect(observedIndexes[observedIndexes.length - 1]).toBe(last);
          // The hint was actually used (the reader blocked and was woken at least once).
          expect(hinted).toBeGreaterThan(0);
        } finally {
          await otherPrisma.$disconnect();
        }
      });

      it('releases blocked readers when the store closes (without a hint: they read the index)', async () => {
        const store = await ctx.makeStore();
        const hints: Array<number | undefined> = [];
        const reader = indexReader(store, ['jobs']);
        const read = track(
          store.blockingQuery({ minIndex: 1, waitMs: 10_000, tables: ['jobs'] }, (hint) => {
            hints.push(hint?.index);
            return reader();
          }),
        );
        await waitFor(() => store.waiterCount() === 1);
        await store.close();
        expect((await read.promise).index).toBe(1);
        expect(hints).toEqual([undefined, undefined]);
        expect(store.waiterCount()).toBe(0);
      });
    });

    describe('event log and tails', () => {
      const job = (key: string) => ({ topic: 'Job', type: 'JobRegistered', key, namespace: 'default', payload: { ID: key } });

      it('eventsAfter returns the events after an index, ordered, limited', async () => {
        const { store } = ctx;
        const w1 = await store.withWrite(['jobs'], async ({ emit }) => {
          emit(job('a'));
          emit(job('b'));
        });
        const w2 = await store.withWrite(['jobs'], async ({ emit }) => emit(job('c')));
        expect((await store.eventsAfter(0)).map((e) => `${e.index}:${e.key}`)).toEqual([`${w1.index}:a`, `${w1.index}:b`, `${w2.index}:c`]);
        expect((await store.eventsAfter(w1.index)).map((e) => e.key)).toEqual(['c']);
        expect((await store.eventsAfter(0, { limit: 2 })).map((e) => e.key)).toEqual(['a', 'b']);
      });

      it('replays the backlog grouped by index, then follows live writes', async () => {
        const { store } = ctx;
        const w1 = await store.withWrite(['jobs'], async ({ emit }) => {
          emit(job('a'));
          emit(job('b'));
        });
        await store.withWrite(['nodes'], async () => undefined); // an index without events
        const w3 = await store.withWrite(['jobs'], async ({ emit }) => emit(job('c')));
        const tail = store.createEventTail({ fromIndex: 0 });
        const replay = await takeFrames(tail, 2);
        expect(replay.map((f) => [f.index, f.events.map((e) => e.key)])).toEqual([
          [w1.index, ['a', 'b']],
          [w3.index, ['c']],
        ]);
        const pending = track(tail.next());
        await sleep(50);
        expect(pending.settled).toBe(false);
        const w4 = await store.withWrite(['jobs'], async ({ emit }) => {
          emit(job('d'));
          emit(job('e'));
        });
        const live = await pending.promise;
        expect(live.done).toBe(false);
        expect(live.value && [live.value.index, live.value.events.map((e) => e.key)]).toEqual([w4.index, ['d', 'e']]);
        tail.close();
        expect(await tail.next()).toEqual({ value: undefined, done: true });
        expect(store.eventTailCount()).toBe(0);
      });

      it('resuming from an index yields exactly the events after it', async () => {
        const { store } = ctx;
        const indexes: number[] = [];
        for (let i = 0; i < 6; i++) indexes.push((await store.withWrite(['jobs'], async ({ emit }) => emit(job(`k${i}`)))).index);
        const from = indexes[2]!;
        const tail = store.createEventTail({ fromIndex: from });
        const frames = await takeFrames(tail, 3);
        expect(frames.map((f) => f.index)).toEqual(indexes.slice(3));
        const more = await store.withWrite(['jobs'], async ({ emit }) => emit(job('k6')));
        expect((await takeFrames(tail, 1))[0]?.index).toBe(more.index);
        expect(tail.position).toBe(more.index);
        tail.close();
      });

      it('a tail starting past the current index waits for events after its start', async () => {
        const { store } = ctx;
        await store.withWrite(['jobs'], async ({ emit }) => emit(job('old'))); // index 2
        const early = store.createEventTail({ fromIndex: 0 });
        const future = store.createEventTail({ fromIndex: 3 });
        expect((await takeFrames(early, 1))[0]?.index).toBe(2);
        const futureNext = track(future.next());
        await store.withWrite(['jobs'], async ({ emit }) => emit(job('three'))); // 3: not for `future`
        await store.withWrite(['jobs'], async ({ emit }) => emit(job('four'))); // 4
        expect((await takeFrames(early, 2)).map((f) => f.index)).toEqual([3, 4]);
        const got = await futureNext.promise;
        expect(got.value?.index).toBe(4);
        early.close();
        future.close();
      });

      it('applies the filter and drops frames left empty', async () => {
        const { store } = ctx;
        const tail = store.createEventTail({ fromIndex: 0, filter: (e) => e.topic === 'Node' });
        await store.withWrite(['jobs'], async ({ emit }) => emit(job('j1')));
        const w2 = await store.withWrite(['nodes'], async ({ emit }) => {
          emit(job('j2'));
          emit({ topic: 'Node', type: 'NodeRegistration', key: 'n1', namespace: '', payload: {} });
        });
        const [frame] = await takeFrames(tail, 1);
        expect(frame?.index).toBe(w2.index);
        expect(frame?.events.map((e) => e.key)).toEqual(['n1']);
        tail.close();
      });

      it('pages through long backlogs without splitting frames', async () => {
        const store = await ctx.makeStore({ eventPageFrames: 3, eventBufferFrames: 2 });
        const expected: string[] = [];
        for (let i = 0; i < 10; i++) {
          const { index } = await store.withWrite(['jobs'], async ({ emit }) => {
            for (let j = 0; j < 3; j++) emit(job(`${i}.${j}`));
          });
          expected.push(`${index}:${i}.0,${i}.1,${i}.2`);
        }
        const tail = store.createEventTail({ fromIndex: 0 });
        const frames = await takeFrames(tail, 10);
        expect(frames.map((f) => `${f.index}:${f.events.map((e) => e.key).join(',')}`)).toEqual(expected);
        // Live phase through the shared reader, also paged.
        const burst = await Promise.all(Array.from({ length: 7 }, (_, i) => store.withWrite(['jobs'], async ({ emit }) => emit(job(`live${i}`)))));
        const live = await takeFrames(tail, 7);
        expect(live.map((f) => f.index)).toEqual(burst.map((b) => b.index).sort((x, y) => x - y));
        tail.close();
      });

      it('detaches a slow consumer and lets it catch up from Postgres without loss or repeats', async () => {
        const store = await ctx.makeStore({ eventMaxQueuedFrames: 3, eventBufferFrames: 2 });
        const tail = store.createEventTail({ fromIndex: 0 });
        const fast = store.createEventTail({ fromIndex: 0 });
        // Get both tails live first (a pending next() drives the replay).
        const first = track(tail.next());
        const fastFirst = track(fast.next());
        await sleep(100);
        const indexes: number[] = [];
        for (let i = 0; i < 20; i++) indexes.push((await store.withWrite(['jobs'], async ({ emit }) => emit(job(`s${i}`)))).index);
        const fastFrames = [(await fastFirst.promise).value!, ...(await takeFrames(fast, 19))];
        expect(fastFrames.map((f) => f.index)).toEqual(indexes);
        // The slow tail took one frame, queued three, then was detached.
        const slowFrames = [(await first.promise).value!, ...(await takeFrames(tail, 19))];
        expect(slowFrames.map((f) => f.index)).toEqual(indexes);
        tail.close();
        fast.close();
      });

      it('shares one reader between many live tails', async () => {
        const counting = frameReadCounter(ctx.prisma);
        const store = await ctx.makeStore({ prisma: counting.client as never });
        const tails = Array.from({ length: 50 }, () => store.createEventTail({ fromIndex: 0 }));
        const firstFrames = tails.map((t) => track(t.next()));
        await sleep(200); // every tail has replayed (nothing) and joined the shared reader
        const readsBefore = counting.reads();
        const writes = 5;
        for (let i = 0; i < writes; i++) {
          await store.withWrite(['jobs'], async ({ emit }) => emit(job(`m${i}`)));
          await sleep(20);
        }
        const all: EventFrame[][] = await Promise.all(
          tails.map(async (t, i): Promise<EventFrame[]> => [(await firstFrames[i]!.promise).value!, ...(await takeFrames(t, writes - 1))]),
        );
        for (const frames of all) expect(frames.map((f) => f.events[0]?.key)).toEqual(['m0', 'm1', 'm2', 'm3', 'm4']);
        // About one read per write, not one per tail per write (50 x 5 = 250).
        expect(counting.reads() - readsBefore).toBeLessThanOrEqual(2 * writes);
        for (const t of tails) t.close();
        expect(store.eventTailCount()).toBe(0);
      });

      it('with a read interval, reads a burst of writes together and hands it out in order, each frame once', async () => {
        const counting = frameReadCounter(ctx.prisma);
        // Far longer than the burst takes: the writes after the first are read in one go.
        const store = await ctx.makeStore({ prisma: counting.client as never, eventReadIntervalMs: 2000 });
        const tails = Array.from({ length: 3 }, () => store.createEventTail({ fromIndex: 0 }));
        const firstFrames = tails.map((t) => track(t.next()));
        await sleep(200); // every tail has replayed (nothing) and joined the shared reader
        const readsBefore = counting.reads();
        const writes: number[] = [];
        for (let i = 0; i < 8; i++) writes.push((await store.withWrite(['jobs'], async ({ emit }) => emit(job(`b${i}`)))).index);
        for (const [i, t] of tails.entries()) {
          const frames = [(await firstFrames[i]!.promise).value!, ...(await takeFrames(t, writes.length - 1))];
          expect(frames.map((f) => f.index)).toEqual(writes);
        }
        // The first wake-up is read at once, the rest after the interval: not one read per write.
        expect(counting.reads() - readsBefore).toBeLessThanOrEqual(3);
        // Nothing further is queued or delivered.
        expect(tails.map((t) => t.takeQueued(10))).toEqual([[], [], []]);
        for (const t of tails) t.close();
      });

      it('hands a frame to many live tails a slice per turn of the event loop, each tail once, in order', async () => {
        const { store } = ctx;
        const count = 3 * OFFER_SLICE + 5;
        const tails = Array.from({ length: count }, () => store.createEventTail({ fromIndex: 0 }));
        // The turn of the event loop each tail's frames arrived in (a setImmediate counter).
        let turn = 0;
        let ticking = true;
        const tick = (): void => {
          turn++;
          if (ticking) setImmediate(tick);
        };
        setImmediate(tick);
        const arrivals = tails.map((t) => t.next().then((r) => ({ turn, index: r.value?.index })));
        await sleep(200); // every tail has replayed (nothing) and joined the shared reader
        const w1 = await store.withWrite(['jobs'], async ({ emit }) => emit(job('s1')));
        const got = await Promise.all(arrivals);
        ticking = false;
        expect(got.every((g) => g.index === w1.index)).toBe(true);
        // At least one turn per slice: I/O that arrives meanwhile is not held up by the whole fan-out.
        expect(new Set(got.map((g) => g.turn)).size).toBeGreaterThanOrEqual(Math.ceil(count / OFFER_SLICE));
        // The next frame reaches every tail too, after the first.
        const w2 = await store.withWrite(['jobs'], async ({ emit }) => emit(job('s2')));
        const second = await Promise.all(tails.map((t) => takeFrames(t, 1)));
        expect(second.every((frames) => frames.length === 1 && frames[0]?.index === w2.index)).toBe(true);
        for (const t of tails) t.close();
      });

      it('takeQueued hands over the frames queued behind the one next() returned, in order', async () => {
        const { store } = ctx;
        const writes: number[] = [];
        for (let i = 0; i < 5; i++) writes.push((await store.withWrite(['jobs'], async ({ emit }) => emit(job(`q${i}`)))).index);
        const tail = store.createEventTail({ fromIndex: 0 });
        const first = await tail.next();
        expect(first.value?.index).toBe(writes[0]);
        // The replay page read all five: the other four wait in the queue.
        expect(tail.takeQueued(2).map((f) => f.index)).toEqual(writes.slice(1, 3));
        expect(tail.takeQueued(10).map((f) => f.index)).toEqual(writes.slice(3));
        expect(tail.takeQueued(10)).toEqual([]);
        const more = await store.withWrite(['jobs'], async ({ emit }) => emit(job('q5')));
        expect((await takeFrames(tail, 1))[0]?.index).toBe(more.index);
        tail.close();
        expect(tail.takeQueued(10)).toEqual([]);
      });

      it('prunes whole frames beyond the newest keepEvents events; a tail from below starts at the oldest kept', async () => {
        const { store } = ctx;
        expect(await store.oldestEventIndex()).toBeNull();
        expect(await store.pruneEvents({ keepEvents: 10, maxAgeMs: 0 })).toBe(0);
        const writes: number[] = [];
        for (let i = 0; i < 6; i++) {
          writes.push(
            (
              await store.withWrite(['jobs'], async ({ emit }) => {
                emit(job(`p${i}a`));
                emit(job(`p${i}b`));
              })
            ).index,
          );
        }
        // 12 events in 6 frames of 2. Keep 5: the frame holding the 5th newest event stays
        // whole, so 6 events (3 frames) remain.
        expect(await store.pruneEvents({ keepEvents: 5, maxAgeMs: 0, batchRows: 2 })).toBe(6);
        expect((await store.eventsAfter(0)).map((e) => e.key)).toEqual(['p3a', 'p3b', 'p4a', 'p4b', 'p5a', 'p5b']);
        expect(await store.oldestEventIndex()).toBe(writes[3]);
        // Idempotent.
        expect(await store.pruneEvents({ keepEvents: 5, maxAgeMs: 0 })).toBe(0);
        // Keep 3: the frame holding the 3rd newest event (p4b) stays whole.
        expect(await store.pruneEvents({ keepEvents: 3, maxAgeMs: 0 })).toBe(2);
        expect(await store.pruneEvents({ keepEvents: 4, maxAgeMs: 0 })).toBe(0);
        expect((await store.eventsAfter(0)).map((e) => e.key)).toEqual(['p4a', 'p4b', 'p5a', 'p5b']);
        expect(await store.pruneEvents({ keepEvents: 2, maxAgeMs: 0 })).toBe(2);
        expect((await store.eventsAfter(0)).map((e) => e.key)).toEqual(['p5a', 'p5b']);
        const tail = store.createEventTail({ fromIndex: 0 });
        const first = await tail.next();
        expect(first.value?.index).toBe(writes[5]);
        tail.close();
      });

      it('prunes frames older than maxAgeMs, never part of a frame', async () => {
        const { store } = ctx;
        const old = await store.withWrite(['jobs'], async ({ emit }) => {
          emit(job('old-a'));
          emit(job('old-b'));
        });
        await sleep(300);
        const young = await store.withWrite(['jobs'], async ({ emit }) => emit(job('young')));
        expect(await store.pruneEvents({ keepEvents: 1000, maxAgeMs: 60_000 })).toBe(0);
        expect(await store.pruneEvents({ keepEvents: 1000, maxAgeMs: 150 })).toBe(2);
        expect((await store.eventsAfter(0)).map((e) => `${e.index}:${e.key}`)).toEqual([`${young.index}:young`]);
        expect(old.index).toBeLessThan(young.index);
      });

      it('closes on abort and when the store closes; for-await ends cleanly', async () => {
        const store = await ctx.makeStore();
        const controller = new AbortController();
        const aborted = store.createEventTail({ fromIndex: 0, signal: controller.signal });
        const pending = track(aborted.next());
        await sleep(50);
        controller.abort();
        expect(await pending.promise).toEqual({ value: undefined, done: true });

        const iterated = store.createEventTail({ fromIndex: 0 });
        await store.withWrite(['jobs'], async ({ emit }) => emit(job('x')));
        const keys: string[] = [];
        for await (const frame of iterated) {
          keys.push(...frame.events.map((e) => e.key));
          break;
        }
        expect(keys).toEqual(['x']);
        const open = store.createEventTail({ fromIndex: 1000 });
        const openNext = track(open.next());
        expect(store.eventTailCount()).toBe(1);
        await store.close();
        expect(await openNext.promise).toEqual({ value: undefined, done: true });
        expect(store.eventTailCount()).toBe(0);
      });
    });
  });
}
