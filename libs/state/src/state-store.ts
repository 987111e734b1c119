// The scheduler's state store (docs/architecture.md, "State, indexes, blocking queries,
// events"; spec: workload-scheduler "Blocking queries" and "Event stream"; reference
// sections 0.2 and 6). Postgres is the source of truth; the bus only carries wake-ups.
import { createHash } from 'node:crypto';
import type { Bus } from '@selfstack/bus';
import type { Prisma } from '@selfstack/db';
import { StateStoreClosedError, StateWriteTimeoutError, isTransactionTimeout } from './errors';
import { EventHub } from './event-hub';
import { buildStateSql, nextIndexStatement, parseNextIndex, pruneEvents, readCurrentIndex, readEventsAfter, readOldestIndex, recordWriteStatement, type PruneEventsOptions } from './sql';
import type {
  BlockingQueryOptions,
  BlockingResult,
  EventTail,
  EventTailOptions,
  RawSqlClient,
  SqlStatement,
  StateEventInput,
  StateLogger,
  StoredEvent,
  WakeHint,
} from './types';
import { type Waiter, WaiterRegistry } from './waiters';

export interface WriteContext<Tx> {
  tx: Tx;
  // The index this write commits at; stamp it as CreateIndex/ModifyIndex.
  index: number;
  // Appends an event (reference 6); events of one write share the index, in emit order.
  emit(event: StateEventInput): void;
  // Adds tables this write turned out to change (found under the lock) to those it named.
  touch(...tables: string[]): void;
  // The rows of WriteOptions.first ([] without one).
  first: unknown[];
  // Queues a statement for the commit: it runs after the callback returned, before the
  // write's own bookkeeping, in the commit's round trip when the client batches. Its
  // rows are not returned; a failure rolls the write back.
  atCommit(statement: SqlStatement): void;
}

export interface WriteOptions {
  // Run the transaction on the store's `sql` client (raw statements only; no model API).
  // Without an `sql` client it runs on `prisma` like any other write.
  raw?: boolean;
  // A read that needs the counter lock held (it must see every write committed before
  // this one): it runs right after the lock is taken, in the same round trip when the
  // client batches, and its rows are the callback's `first`.
  first?: SqlStatement;
}

export interface StateStore<Tx = Prisma.TransactionClient> {
  // Resolves once the process-wide bus subscription is active.
  ready(): Promise<void>;
  // The bus channel its wake-ups go out on (`{ index, tables }` JSON), for other listeners
  // of the same database's writes (the scheduling engine's broker).
  wakeChannel(): Promise<string>;
  withWrite<R>(tables: readonly string[], fn: (ctx: WriteContext<Tx>) => Promise<R>, options?: WriteOptions): Promise<{ index: number; result: R }>;
  // Max index over `tables` (1 if none was written yet); with no tables, the global index.
  // Pass a transaction client to read it in the same snapshot as other reads.
  currentIndex(tables: readonly string[], db?: RawSqlClient): Promise<number>;
  // `run` reads the answer; after a wake-up it gets the waking write's index (WakeHint), which
  // it may report instead of reading the index again (none on the first read, or when all
  // readers are woken without one: bus reconnect, unknown message, close).
  blockingQuery<T>(options: BlockingQueryOptions, run: (hint?: WakeHint) => Promise<BlockingResult<T>>): Promise<BlockingResult<T>>;
  // Blocked readers currently registered (tests and metrics).
  waiterCount(): number;
  eventsAfter(index: number, options?: { limit?: number }): Promise<StoredEvent[]>;
  createEventTail(options: EventTailOptions): EventTail;
  // Open event tails (tests and metrics).
  eventTailCount(): number;
  // Retention of the event log (issue 27): deletes whole frames beyond the newest
  // `keepEvents` events or older than `maxAgeMs`; returns the rows deleted. A stream that
  // asks for an index no longer kept starts at the oldest one left.
  pruneEvents(options: PruneEventsOptions): Promise<number>;
  // Lowest index still in the event log, null when it is empty.
  oldestEventIndex(): Promise<number | null>;
  // Unsubscribes from the bus and closes every tail; does not close the bus or Prisma.
  close(): Promise<void>;
}

// The slice of PrismaClient the store uses; PrismaClient itself satisfies it.
export interface StatePrismaClient<Tx> extends RawSqlClient {
  $transaction<R>(fn: (tx: Tx) => Promise<R>, options?: { maxWait?: number; timeout?: number }): Promise<R>;
}

export interface CreateStateStoreOptions<Tx extends RawSqlClient> {
  prisma: StatePrismaClient<Tx>;
  // A client for raw statements only, cheaper per statement than Prisma's (a node-postgres
  // pool): the store's own reads (indexes, the event log) and the writes that ask for it
  // (withWrite's `raw`) run on it. Its transactions' `tx` need not offer the model API.
  sql?: StatePrismaClient<Tx>;
  bus: Bus;
  logger: StateLogger;
  // Postgres schema holding state_index, table_index and event_log.
  schema?: string;
  // Bus channel for wake-ups (the bus adds its own prefix). Default: `state:<schema>:` and
  // a hash of the database's identity (the server's system identifier and the database
  // name), so that stores of different databases sharing one Redis never hear each other:
  // a wake-up carries an index a reader may answer with, which is only true of its own
  // database.
  channel?: string;
  // Budget of one write transaction, including the wait for the counter lock
  // (Prisma's default of 5 s is too tight when writers queue on that lock).
  transactionTimeoutMs?: number;
  // How long a write may wait for a pooled connection before it starts.
  transactionMaxWaitMs?: number;
  eventPageFrames?: number;
  eventBufferFrames?: number;
  eventMaxQueuedFrames?: number;
  // Least time between two shared event-log reads under a steady stream of writes, so
  // that the frames of that time reach each stream in one socket write (event-hub.ts);
  // 0 (default): a read per wake-up.
  eventReadIntervalMs?: number;
}

interface WakeMessage {
  index: number;
  tables: string[];
}

// Resolves 'settled' when `promise` resolves (rethrows if it rejects), 'timeout' at the
// deadline, 'aborted' when the signal fires; always cleans up its timer and listener.
async function raceDeadline(promise: Promise<void>, deadline: number, signal?: AbortSignal): Promise<'settled' | 'timeout' | 'aborted'> {
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  try {
    return await Promise.race([
      promise.then(() => 'settled' as const),
      new Promise<'timeout' | 'aborted'>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), Math.max(0, deadline - Date.now()));
        onAbort = () => resolve('aborted');
        signal?.addEventListener('abort', onAbort, { once: true });
      }),
    ]);
  } finally {
    clearTimeout(timer);
    if (onAbort) signal?.removeEventListener('abort', onAbort);
  }
}

// Releases of woken waiters (their timer and abort listener), run in setImmediate chunks of
// RELEASE_CHUNK: a thousand readers woken at once would otherwise spend ~2-3 ms releasing
// in one go right after sending their shared query, before its result could be read (so
// before any of them answered); in chunks, I/O that arrives meanwhile runs in between.
const RELEASE_CHUNK = 64;
const pendingReleases: Array<() => void> = [];
let releaseScheduled = false;

function scheduleReleases(): void {
  if (releaseScheduled || pendingReleases.length === 0) return;
  releaseScheduled = true;
  setImmediate(runReleases);
}

function runReleases(): void {
  releaseScheduled = false;
  for (const release of pendingReleases.splice(0, RELEASE_CHUNK)) release();
  scheduleReleases();
}

function deferRelease(release: () => void): void {
  pendingReleases.push(release);
  scheduleReleases();
}

/** `state:<schema>:<hash of this database's identity>` (see the `channel` option). */
async function databaseChannel(db: RawSqlClient, schema: string): Promise<string> {
  const rows = await db.$queryRawUnsafe<{ id: string }[]>(`SELECT system_identifier::text || '/' || current_database() AS "id" FROM pg_control_system()`);
  const id = rows[0]?.id ?? '';
  return `state:${schema}:${createHash('sha256').update(id).digest('hex').slice(0, 16)}`;
}

function parseWakeMessage(raw: string): WakeMessage | undefined {
  try {
    const parsed = JSON.parse(raw) as unknown;
    if (typeof parsed !== 'object' || parsed === null) return undefined;
    const { index, tables } = parsed as { index?: unknown; tables?: unknown };
    if (typeof index !== 'number' || !Array.isArray(tables) || !tables.every((t) => typeof t === 'string')) return undefined;
    return { index, tables: tables as string[] };
  } catch {
    return undefined;
  }
}

export function createStateStore<Tx extends RawSqlClient>(options: CreateStateStoreOptions<Tx>): StateStore<Tx> {
  const { prisma, bus, logger } = options;
  // The store's own statements are all raw SQL.
  const reads = options.sql ?? prisma;
  const schema = options.schema ?? 'scheduler';
  const channelReady: Promise<string> = options.channel !== undefined ? Promise.resolve(options.channel) : databaseChannel(reads, schema);
  // Known once channelReady resolved (before ready() does).
  let channel = options.channel ?? `state:${schema}`;
  const transactionTimeoutMs = options.transactionTimeoutMs ?? 15_000;
  const transactionMaxWaitMs = options.transactionMaxWaitMs ?? transactionTimeoutMs;
  const sql = buildStateSql(schema);
  // The first woken reader leads, the others follow one macrotask later (waiters.ts).
  const waiters = new WaiterRegistry({ defer: (fn) => setImmediate(fn) });
  const hub = new EventHub({
    db: reads,
    sql,
    logger,
    pageFrames: options.eventPageFrames ?? 256,
    bufferFrames: options.eventBufferFrames ?? 1024,
    maxQueuedFrames: options.eventMaxQueuedFrames ?? 1024,
    retryMs: 1000,
    readIntervalMs: options.eventReadIntervalMs ?? 0,
  });
  let closed = false;

  function onMessage(raw: string): void {
    const message = parseWakeMessage(raw);
    if (!message) {
      // Unknown shape (another version?): waking everyone is always safe, only slower.
      logger.warn('state wake-up message not understood; waking all readers', { channel });
      waiters.wakeAll();
      hub.notify();
      return;
    }
    waiters.wake(message.tables, message.index);
    hub.notify(message.index);
  }

  // One subscription per store (so per process), created up front: a blocking reader
  // registers its waiter on an already-active subscription before it reads.
  const subscribed = channelReady.then((resolved) => {
    channel = resolved;
    return bus.subscribe(resolved, onMessage);
  });
  subscribed.catch((err: unknown) =>
    logger.error('state store could not subscribe to the bus', { channel, err: err instanceof Error ? err.message : String(err) }),
  );
  let isReady = false;
  const readyPromise = subscribed.then(() => {
    isReady = true;
  });
  // ready() callers still see the rejection; this only keeps it from being "unhandled".
  readyPromise.catch(() => undefined);
  // Messages may have been lost while the bus was down: every reader re-reads Postgres.
  const offReconnect = bus.onReconnect(() => {
    waiters.wakeAll();
    hub.notify();
  });

  async function withWrite<R>(tables: readonly string[], fn: (ctx: WriteContext<Tx>) => Promise<R>, writeOptions?: WriteOptions): Promise<{ index: number; result: R }> {
    if (closed) throw new StateStoreClosedError();
    const written = new Set(tables);
    let index = 0;
    let result: R;
    const client = writeOptions?.raw && options.sql ? options.sql : prisma;
    try {
      result = await client.$transaction(
        async (tx) => {
          // The counter lock is held from the first statement to the commit, and every other
          // write of the cluster waits for it: on a client that batches, the lock, the
          // `first` read, the commit's statements, the bookkeeping and the commit itself
          // take two round trips (and the callback's own statements) instead of five.
          const batch = (tx as RawSqlClient).$batchUnsafe;
          const run = async (statements: SqlStatement[], commit: boolean): Promise<unknown[][]> => {
            if (batch) return batch.call(tx, statements, { commit });
            const out: unknown[][] = [];
            for (const s of statements) out.push(await tx.$queryRawUnsafe<unknown[]>(s.text, ...s.values));
            return out;
          };
          // First statement: the counter row lock orders this write against all others.
          const firstFrom = writeOptions?.first;
          const [indexRows = [], first = []] = await run([nextIndexStatement(sql, transactionTimeoutMs), ...(firstFrom ? [firstFrom] : [])], false);
          index = parseNextIndex(indexRows);
          const events: StateEventInput[] = [];
          const deferred: SqlStatement[] = [];
          let open = true;
          const closedCheck = (what: string): void => {
            if (!open) throw new Error(`${what}() called after the withWrite callback returned`);
          };
          const emit = (event: StateEventInput): void => {
            closedCheck('emit');
            events.push(event);
          };
          const touch = (...more: string[]): void => {
            closedCheck('touch');
            for (const t of more) written.add(t);
          };
          const atCommit = (statement: SqlStatement): void => {
            closedCheck('atCommit');
            deferred.push(statement);
          };
          const value = await fn({ tx, index, emit, touch, first, atCommit });
          open = false;
          const record = recordWriteStatement(sql, index, [...written], events);
          await run(record ? [...deferred, record] : deferred, true);
          return value;
        },
        { timeout: transactionTimeoutMs, maxWait: transactionMaxWaitMs },
      );
    } catch (err) {
      if (isTransactionTimeout(err)) {
        logger.error('state write timed out', { tables: [...written], timeoutMs: transactionTimeoutMs });
        throw new StateWriteTimeoutError([...written], transactionTimeoutMs, { cause: err });
      }
      throw err;
    }
    // After commit only: a reader woken earlier could miss the change. This process's own
    // readers are woken without the bus round trip (the echo of the message finds them past
    // this index and is ignored), on the next turn of the event loop: the writer's own
    // response, sent by the caller's continuation, goes out first instead of queueing behind
    // every woken reader's. Other processes are woken through the bus. The publication is
    // not awaited (the writer's answer does not wait for Redis either) and a failed one is
    // not the write's failure: readers catch up at their timeout or on reconnect.
    const uniqueTables = [...written];
    setImmediate(() => {
      waiters.wake(uniqueTables, index);
      hub.notify(index);
    });
    channelReady.then((resolved) => bus.publish(resolved, JSON.stringify({ index, tables: uniqueTables } satisfies WakeMessage))).catch((err: unknown) => {
      logger.warn('state wake-up publish failed', { index, err: err instanceof Error ? err.message : String(err) });
    });
    return { index, result };
  }

  async function blockingQuery<T>(query: BlockingQueryOptions, run: (hint?: WakeHint) => Promise<BlockingResult<T>>): Promise<BlockingResult<T>> {
    const { minIndex = 0, waitMs, tables, signal } = query;
    signal?.throwIfAborted();
    if (!(minIndex > 0)) return run();
    if (closed) throw new StateStoreClosedError();
    // Reference 0.2: wait += random(0, wait/16).
    const deadline = Date.now() + waitMs + Math.random() * (waitMs / 16);
    if (!isReady) {
      // Without an active subscription no wake-up can arrive (Redis down at start-up):
      // wait for it within the reader's own budget, then answer like a timeout.
      const outcome = await raceDeadline(readyPromise, deadline, signal);
      signal?.throwIfAborted();
      if (outcome !== 'settled') return run();
    }

    let woken = false;
    // The highest write index announced since the last run(); undefined once any wake-up
    // came without an index, so that run() reads the index itself.
    let hint: WakeHint | undefined;
    let hintless = false;
    // Writes up to this index are known to be in what this reader has read or is reading
    // (the last result's index, or the hint the current run() reads at): writes commit in
    // index order, so a wake-up for one of them (a second announcement of a write: this
    // process's own, then its echo through the bus) has nothing new to show.
    let seen = minIndex;
    const waiter: Waiter = {
      tables,
      notify: (index?: number) => {
        const indexed = index !== undefined && Number.isSafeInteger(index) && index > 0;
        if (indexed && index <= seen) return;
        woken = true;
        if (!indexed) hintless = true;
        else if (!hint || index > hint.index) hint = { index };
        resolveWait?.('woken');
      },
    };
    let resolveWait: ((outcome: 'woken' | 'timeout' | 'aborted') => void) | undefined;
    // Registered before the first read: a write committing after our read publishes after
    // its commit, so it reaches this waiter — no window where a change goes unnoticed.
    waiters.add(waiter);
    try {
      let next: WakeHint | undefined;
      for (;;) {
        woken = false;
        hint = undefined;
        hintless = false;
        if (next && next.index > seen) seen = next.index;
        const result = await run(next);
        if (result.index > seen) seen = result.index;
        if (result.index > minIndex) return result;
        signal?.throwIfAborted();
        // A change landed while run() was reading: read again rather than sleep.
        if (woken) {
          next = hintless ? undefined : hint;
          continue;
        }
        const remaining = deadline - Date.now();
        if (remaining <= 0 || closed) return result;
        const outcome = await new Promise<'woken' | 'timeout' | 'aborted'>((resolve) => {
          // Every way out goes through finish(); the first one wins. Releasing the timer
          // and the abort listener is deferred (see deferRelease): a write wakes every
          // waiter of its tables in one synchronous loop, and their responses should not
          // queue behind a thousand clearTimeout/removeEventListener calls. Until then a
          // late timer or abort only calls finish() again, which does nothing.
          let settled = false;
          const finish = (value: 'woken' | 'timeout' | 'aborted'): void => {
            if (settled) return;
            settled = true;
            resolveWait = undefined;
            resolve(value);
            deferRelease(() => {
              clearTimeout(timer);
              signal?.removeEventListener('abort', onAbort);
            });
          };
          const onAbort = (): void => finish('aborted');
          const timer = setTimeout(() => finish('timeout'), remaining);
          signal?.addEventListener('abort', onAbort, { once: true });
          resolveWait = finish;
        });
        if (outcome === 'aborted') signal?.throwIfAborted();
        if (outcome === 'timeout') return result;
        next = hintless ? undefined : hint;
      }
    } finally {
      resolveWait = undefined;
      waiters.remove(waiter);
    }
  }

  return {
    ready: () => readyPromise,
    wakeChannel: () => channelReady,
    withWrite,
    currentIndex: (tables, db) => readCurrentIndex(db ?? reads, sql, tables),
    blockingQuery,
    waiterCount: () => waiters.size,
    eventsAfter: (index, eventOptions) => readEventsAfter(reads, sql, index, eventOptions?.limit ?? 1000),
    createEventTail: (tailOptions) => hub.createTail(tailOptions),
    eventTailCount: () => hub.openTails,
    pruneEvents: (pruneOptions) => pruneEvents(reads, sql, pruneOptions, new Date()),
    oldestEventIndex: () => readOldestIndex(reads, sql),
    async close() {
      if (closed) return;
      closed = true;
      offReconnect();
      hub.close();
      // Release blocked readers now; each returns its latest result.
      waiters.wakeAll();
      // Not awaited: if the subscription is still pending (bus unreachable), close() must
      // not hang on it; the listener is removed whenever it does resolve.
      subscribed.then(
        (unsubscribe) => unsubscribe(),
        () => undefined,
      );
    },
  };
}
