// Young-generation collection while a listener is idle and holding many requests
// (blocking queries, long polls). Why: V8 collects its young generation (a scavenge) when
// that generation fills, at whatever allocation fills it. The objects of requests that are
// held open are young and alive until they are answered, so a scavenge copies every one of
// them; when it falls inside a wake-up (a write answering 1,000 held requests at once) it
// adds ~10-20 ms to the answers of that burst (docs/scheduler.md, "Benchmarks"). Collecting
// twice while the process has nothing else to do promotes the held requests' objects to the
// old generation (V8 promotes what survived one scavenge already) and leaves the young
// generation empty, so the burst that answers them starts with room to allocate and its
// scavenges, if any, no longer copy them. A process that is never idle never collects here.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

export type GcFunction = (options: { type: 'minor' | 'major'; execution?: 'sync' }) => void;

export interface IdleGcOptions {
  /** Quiet time (no request started or finished) before collecting. */
  idleMs: number;
  /** Collect only while at least this many requests are held, and only after at least this
   * many arrived since the last collection (one collection per batch of held requests). */
  minHeld: number;
  /** The collector (tests); default: V8's, exposed at first use. */
  gc?: GcFunction;
  /** Called after each collection with its duration. */
  onCollect?: (info: { held: number; ms: number }) => void;
}

export interface IdleGc {
  /** A request started. */
  arrived(): void;
  /** A request finished (activity: pushes the collection back, like an arrival). */
  finished(): void;
  /** Collections run so far. */
  collections(): number;
  close(): void;
}

let exposed: GcFunction | undefined;

/**
 * V8's `gc` without starting node with --expose-gc (the same route Jest's --logHeapUsage
 * takes): the flag set at runtime makes new contexts get the function.
 */
export function v8Gc(): GcFunction {
  if (!exposed) {
    const existing = (globalThis as { gc?: unknown }).gc;
    if (typeof existing === 'function') exposed = existing as GcFunction;
    else {
      setFlagsFromString('--expose-gc');
      exposed = runInNewContext('gc') as GcFunction;
    }
  }
  return exposed;
}

export function createIdleGc(options: IdleGcOptions, held: () => number): IdleGc {
  const { idleMs, minHeld } = options;
  let arrivals = 0;
  let count = 0;
  let closed = false;
  let timer: NodeJS.Timeout | undefined;

  const fire = (): void => {
    if (closed) return;
    const h = held();
    if (arrivals < minHeld || h < minHeld) return;
    const gc = options.gc ?? v8Gc();
    const started = performance.now();
    // The first scavenge moves the held objects within the young generation (survivors),
    // the second promotes them.
    gc({ type: 'minor', execution: 'sync' });
    gc({ type: 'minor', execution: 'sync' });
    arrivals = 0;
    count++;
    options.onCollect?.({ held: h, ms: performance.now() - started });
  };

  // One timer for the listener, pushed back by every request start and end (refresh()
  // re-arms a timer that already fired).
  function quiet(): void {
    if (closed) return;
    if (timer) timer.refresh();
    else {
      timer = setTimeout(fire, idleMs);
      timer.unref();
    }
  }

  return {
    arrived() {
      arrivals++;
      quiet();
    },
    finished: quiet,
    collections: () => count,
    close() {
      closed = true;
      clearTimeout(timer);
    },
  };
}
