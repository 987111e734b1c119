// Event log fan-out (docs/architecture.md, "Event tail"). One shared reader per store
// follows bus wake-ups by re-reading event_log from Postgres after the last index it
// read, and hands each frame to every live tail: a write costs one query however many
// event streams are open. A tail first replays on its own (its start position is its own
// business), then joins the shared reader; a consumer too slow to keep up is detached and
// catches up from Postgres again, so memory per tail stays bounded.
//
// Under a steady stream of writes the shared reader starts a read at most once per
// `readIntervalMs`: the frames committed meanwhile are read and handed out together, and
// each stream writes them to its socket in one system call (the HTTP response corks the
// socket until the end of the tick). A socket write costs ~5-10 µs of CPU whatever its
// size, so with hundreds of streams the number of fan-outs per second, not the number of
// frames, sets the cost (scheduler-event-stream bench, docs/scheduler.md "Performance").
// The first write after a quiet period is read at once; a full page is followed at once.
//
// Never skip, never repeat: positions only move to an index whose events were all read
// (frames are never split, see readFramesAfter) or to the counter value seen in the same
// snapshot (every index up to it was visible, later ones commit later), and a tail drops
// any frame at or below its position.
import { type FramesPage, type StateSql, readFramesAfter } from './sql';
import type { EventFrame, EventTail, EventTailOptions, RawSqlClient, StateLogger, StoredEvent } from './types';

export interface EventHubOptions {
  db: RawSqlClient;
  sql: StateSql;
  logger: StateLogger;
  // Frames per Postgres read.
  pageFrames: number;
  // Recent frames kept so a tail finishing its replay can join without another query.
  bufferFrames: number;
  // Frames queued for one tail before it is detached to catch up from Postgres.
  maxQueuedFrames: number;
  // Delay before the shared reader retries after a failed read.
  retryMs: number;
  // Least time between the starts of two shared reads woken by writes (0: read on every
  // wake-up); what a frame may wait at most before it is read, on top of the read itself.
  readIntervalMs?: number;
}

export class EventHub {
  private readonly live = new Set<Tail>();
  private readonly open = new Set<Tail>();
  // The shared reader only runs while some tail is live; `epoch` invalidates a read that
  // was in flight across an idle period.
  private active = false;
  private epoch = 0;
  // Every event with index <= position has been read and offered to the live tails.
  private position = 0;
  // `buffer` holds every frame with index in (bufferFrom, position].
  private bufferFrom = 0;
  private buffer: EventFrame[] = [];
  private reading = false;
  private again = false;
  private retryTimer: NodeJS.Timeout | undefined;
  // Pending start of the next read (readIntervalMs after the previous one started).
  private readTimer: NodeJS.Timeout | undefined;
  private lastReadAt = -Infinity;
  private closed = false;

  constructor(private readonly options: EventHubOptions) {}

  get openTails(): number {
    return this.open.size;
  }

  get liveTails(): number {
    return this.live.size;
  }

  createTail(options: EventTailOptions): EventTail {
    const tail = new Tail(this, options, this.options.maxQueuedFrames);
    if (this.closed) tail.close();
    else this.open.add(tail);
    return tail;
  }

  // A write committed (its index), or the bus reconnected (undefined: messages may have
  // been lost, re-read unconditionally).
  notify(index?: number): void {
    if (!this.active || this.closed) return;
    if (index !== undefined && index <= this.position) return;
    this.scheduleRead();
  }

  close(): void {
    this.closed = true;
    for (const tail of [...this.open]) tail.close();
    this.deactivate();
  }

  readPage(after: number): Promise<FramesPage> {
    return readFramesAfter(this.options.db, this.options.sql, after, this.options.pageFrames);
  }

  // Called by a tail whose replay reached `horizon` (its position is at least that).
  join(tail: Tail, horizon: number): boolean {
    if (this.closed) return false;
    if (!this.active) {
      this.active = true;
      this.epoch++;
      this.position = horizon;
      this.bufferFrom = horizon;
      this.buffer = [];
      this.live.add(tail);
      // Wake-ups were ignored while idle; one may have landed after the tail's read.
      this.scheduleRead();
      return true;
    }
    if (tail.position < this.bufferFrom) return false;
    this.live.add(tail);
    for (const frame of this.buffer) tail.offer(frame);
    return true;
  }

  leave(tail: Tail): void {
    this.live.delete(tail);
    if (this.live.size === 0) this.deactivate();
  }

  forget(tail: Tail): void {
    this.open.delete(tail);
    this.leave(tail);
  }

  private deactivate(): void {
    this.active = false;
    this.epoch++;
    this.buffer = [];
    if (this.retryTimer) {
      clearTimeout(this.retryTimer);
      this.retryTimer = undefined;
    }
    if (this.readTimer) {
      clearTimeout(this.readTimer);
      this.readTimer = undefined;
    }
  }

  private scheduleRead(): void {
    if (this.reading) {
      this.again = true;
      return;
    }
    if (this.readTimer) return;
    const wait = this.lastReadAt + (this.options.readIntervalMs ?? 0) - performance.now();
    if (wait > 0) {
      this.readTimer = setTimeout(() => {
        this.readTimer = undefined;
        if (this.active && !this.closed) void this.readLoop();
      }, wait);
      return;
    }
    void this.readLoop();
  }

  private async readLoop(): Promise<void> {
    this.reading = true;
    // Set when a wake-up arrived during the read: the next read waits for the interval.
    let woken = false;
    try {
      // `at once`: a full page (more is committed) or a read that straddled an idle period.
      let atOnce: boolean;
      do {
        this.again = false;
        atOnce = false;
        const epoch = this.epoch;
        this.lastReadAt = performance.now();
        const page = await this.readPage(this.position);
        if (epoch !== this.epoch) {
          // Went idle (and maybe active again from another position) meanwhile.
          atOnce = this.active;
          continue;
        }
        const live = [...this.live];
        const fresh: EventFrame[] = [];
        for (const frame of page.frames) {
          if (frame.index <= this.position) continue;
          this.position = frame.index;
          this.remember(frame);
          fresh.push(frame);
        }
        if (page.full) atOnce = true;
        else this.position = Math.max(this.position, page.horizon);
        await deliver(live, fresh);
      } while (atOnce && this.active && !this.closed);
      woken = this.again;
    } catch (err) {
      this.options.logger.warn('event log read failed; retrying', { err: err instanceof Error ? err.message : String(err) });
      if (this.active && !this.closed) {
        this.retryTimer = setTimeout(() => {
          this.retryTimer = undefined;
          this.scheduleRead();
        }, this.options.retryMs);
        this.retryTimer.unref();
      }
    } finally {
      this.reading = false;
    }
    if (woken && this.active && !this.closed) this.scheduleRead();
  }

  private remember(frame: EventFrame): void {
    this.buffer.push(frame);
    while (this.buffer.length > this.options.bufferFrames) {
      const dropped = this.buffer.shift();
      if (dropped) this.bufferFrom = dropped.index;
    }
  }
}

// Tails handed a page of frames per turn of the event loop. Each tail's consumer writes to
// its socket in the same turn (~10-40 µs a write, mostly the kernel), so five hundred
// streams took one turn of 8-40 ms on a 2-core VM, and every write transaction that held
// the state counter lock meanwhile waited for it to send its next statement (the lock is
// held across a few round trips): job registers queued up behind it. In slices, the I/O
// that arrived runs in between.
export const OFFER_SLICE = 64;

// Hands `frames` (in index order) to each tail, a slice of tails per turn of the event
// loop. A tail that joined meanwhile got them from the buffer; one that left or closed
// ignores them, and one that caught up from Postgres meanwhile drops what it already has.
async function deliver(tails: readonly Tail[], frames: readonly EventFrame[]): Promise<void> {
  if (frames.length === 0) return;
  for (let i = 0; i < tails.length; i += OFFER_SLICE) {
    if (i > 0) await new Promise<void>((resolve) => setImmediate(resolve));
    const end = Math.min(tails.length, i + OFFER_SLICE);
    for (let t = i; t < end; t++) for (const frame of frames) (tails[t] as Tail).offer(frame);
  }
}

type Mode = 'replay' | 'live' | 'closed';

class Tail implements EventTail {
  private mode: Mode = 'replay';
  private readonly queue: EventFrame[] = [];
  private wakeConsumer: (() => void) | undefined;
  private chain: Promise<unknown> = Promise.resolve();
  private current: number;
  private readonly filter: ((event: StoredEvent) => boolean) | undefined;
  private readonly signal: AbortSignal | undefined;
  private readonly onAbort = (): void => this.close();

  constructor(
    private readonly hub: EventHub,
    options: EventTailOptions,
    private readonly maxQueuedFrames: number,
  ) {
    this.current = Math.max(0, Math.floor(options.fromIndex));
    this.filter = options.filter;
    this.signal = options.signal;
    if (this.signal?.aborted) this.mode = 'closed';
    else this.signal?.addEventListener('abort', this.onAbort, { once: true });
  }

  get position(): number {
    return this.current;
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  next(): Promise<IteratorResult<EventFrame, undefined>> {
    const result = this.chain.then(() => this.pull());
    this.chain = result.catch(() => undefined);
    return result;
  }

  async return(): Promise<IteratorResult<EventFrame, undefined>> {
    this.close();
    return { value: undefined, done: true };
  }

  takeQueued(max: number): EventFrame[] {
    if (this.queue.length === 0 || max <= 0) return [];
    return this.queue.splice(0, Math.floor(max));
  }

  close(): void {
    if (this.mode === 'closed') return;
    this.mode = 'closed';
    this.queue.length = 0;
    this.signal?.removeEventListener('abort', this.onAbort);
    this.hub.forget(this);
    this.wake();
  }

  // From the shared reader, in index order.
  offer(frame: EventFrame): void {
    if (this.mode !== 'live' || frame.index <= this.current) return;
    if (this.queue.length >= this.maxQueuedFrames) {
      // Slow consumer: stop buffering; the position stays before this frame, so the tail
      // re-reads it from Postgres once the consumer has drained its queue.
      this.mode = 'replay';
      this.hub.leave(this);
      return;
    }
    this.current = frame.index;
    this.enqueue(frame);
    this.wake();
  }

  private enqueue(frame: EventFrame): void {
    const filter = this.filter;
    // The frame itself when the filter keeps all of it (the common case: no copy, and the
    // stream's serialisation of that frame object is shared with every other such tail).
    let kept: StoredEvent[] | undefined;
    if (filter) {
      const events = frame.events;
      for (let i = 0; i < events.length; i++) {
        const event = events[i] as StoredEvent;
        if (filter(event)) kept?.push(event);
        else kept ??= events.slice(0, i);
      }
    }
    if (kept === undefined) this.queue.push(frame);
    else if (kept.length > 0) this.queue.push({ index: frame.index, events: kept });
  }

  private wake(): void {
    const wake = this.wakeConsumer;
    this.wakeConsumer = undefined;
    wake?.();
  }

  private async pull(): Promise<IteratorResult<EventFrame, undefined>> {
    for (;;) {
      const frame = this.queue.shift();
      if (frame) return { value: frame, done: false };
      if (this.mode === 'closed') return { value: undefined, done: true };
      if (this.mode === 'replay') {
        await this.replayPage();
        continue;
      }
      await new Promise<void>((resolve) => {
        this.wakeConsumer = resolve;
      });
    }
  }

  private async replayPage(): Promise<void> {
    let page: FramesPage;
    try {
      page = await this.hub.readPage(this.current);
    } catch (err) {
      this.close();
      throw err;
    }
    if (this.mode !== 'replay') return;
    for (const frame of page.frames) {
      if (frame.index <= this.current) continue;
      this.current = frame.index;
      this.enqueue(frame);
    }
    if (page.full) return;
    this.current = Math.max(this.current, page.horizon);
    // Set before joining: join() offers the buffered frames, which only a live tail takes.
    this.mode = 'live';
    if (!this.hub.join(this, page.horizon)) this.mode = 'replay';
  }
}
