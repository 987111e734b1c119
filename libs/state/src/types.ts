// Public types of @selfstack/state (docs/architecture.md, "State, indexes, blocking
// queries, events").

// An event as a write emits it (reference section 6: Topic, Type, Key, Namespace,
// FilterKeys, Payload). `namespace` is "" for node and ACL events, as in Nomad.
export interface StateEventInput {
  topic: string;
  type: string;
  key: string;
  namespace: string;
  // Nomad renders FilterKeys as null for some topics (Node); null is stored as NULL.
  filterKeys?: readonly string[] | null;
  // Any JSON-serialisable value; stored as jsonb.
  payload: unknown;
}

export interface StoredEvent {
  index: number;
  seq: number;
  topic: string;
  type: string;
  key: string;
  namespace: string;
  filterKeys: string[] | null;
  payload: unknown;
  createdAt: Date;
}

// All events of one write, as Nomad sends them: one frame per raft index. Frames are
// shared between tails; consumers must not mutate them.
export interface EventFrame {
  index: number;
  events: StoredEvent[];
}

// Structural subset of the winston logger (@selfstack/logger); a test spy fits too.
export interface StateLogger {
  debug(message: string, meta?: Record<string, unknown>): unknown;
  warn(message: string, meta?: Record<string, unknown>): unknown;
  error(message: string, meta?: Record<string, unknown>): unknown;
}

// A statement with its parameters ($1, $2, ...).
export interface SqlStatement {
  text: string;
  values: readonly unknown[];
}

// The raw-SQL surface the store needs from a Prisma client or transaction client.
export interface RawSqlClient {
  $queryRawUnsafe<T = unknown>(query: string, ...values: unknown[]): PromiseLike<T>;
  $executeRawUnsafe(query: string, ...values: unknown[]): PromiseLike<number>;
  // Optional, on a transaction client: runs the statements in one round trip, in order,
  // and answers each one's rows; with `commit`, commits the transaction in the same round
  // trip (the client's $transaction then has nothing left to commit). withWrite uses it
  // to hold the counter lock for fewer round trips; without it the statements run one by
  // one and the client commits.
  $batchUnsafe?(statements: readonly SqlStatement[], options?: { commit?: boolean }): PromiseLike<unknown[][]>;
}

export interface BlockingQueryOptions {
  // 0 or absent: answer at once (reference 0.2; hashicorp/nomad#6403).
  minIndex?: number;
  // Maximum blocking time; the store adds up to waitMs/16 random jitter (reference 0.2).
  // Capping it (Nomad: 300 s) is the HTTP layer's job.
  waitMs: number;
  // Logical tables whose writes can change the answer.
  tables: readonly string[];
  // Client went away: stop waiting, drop the waiter, reject with signal.reason.
  signal?: AbortSignal;
}

/**
 * Why a blocked reader runs again: a write at `index` to one of its tables has committed
 * (its wake-up is published after the commit, and writes commit in index order). Every
 * write up to `index` is visible to a read started now, so the reader may answer with
 * `index` — a lower bound of its tables' current index — instead of reading the index
 * again. A lower bound is safe: a client polling again with it gets any later change at
 * once; only an index above what the data shows could make a client skip a write.
 */
export interface WakeHint {
  index: number;
}

export interface BlockingResult<T> {
  index: number;
  value: T;
}

export interface EventTailOptions {
  // Deliver events with index > fromIndex (exclusive). Nomad's `index=N` query parameter
  // is inclusive, so the HTTP layer passes N - 1.
  fromIndex: number;
  // Keep only the events it accepts; frames left empty are not delivered.
  filter?: (event: StoredEvent) => boolean;
  // Closes the tail when aborted (the HTTP client disconnected).
  signal?: AbortSignal;
}

export interface EventTail extends AsyncIterableIterator<EventFrame, undefined> {
  // Resolves with the next frame, or done once the tail is closed. Calls are serialised,
  // so a caller racing next() against a heartbeat timer may keep the pending promise.
  next(): Promise<IteratorResult<EventFrame, undefined>>;
  // Removes and returns up to `max` frames that are already queued (none when nothing is),
  // without waiting: a consumer that got a frame from next() takes what arrived with it
  // and writes them together. Call it between next() calls, not while one is pending.
  takeQueued(max: number): EventFrame[];
  // Releases the tail: pending and later next() calls resolve done.
  close(): void;
  // Every event with index <= position has been delivered or filtered out.
  readonly position: number;
}
