// Group commit for optimistic writes (the entry store's applyIf). Under load, the conditional
// statements of concurrent KV writes wait for a free slot and then go to PostgreSQL
// together, as one statement: one round trip, one backend wake-up and one commit (WAL
// flush) for the whole group instead of one each. Each item keeps its own guard and its
// own outcome (applied or not); items in one statement never share a path.
//
// - An item arriving while no statement runs goes at once (with whatever arrived in the
//   same turn): an idle service adds no wait.
// - Otherwise one statement runs at a time, and what arrives meanwhile waits for it and
//   goes as the next group: the fewest statements, the largest groups (each statement's
//   fixed cost, its planning and its commit's WAL flush, is most of what PostgreSQL
//   spends on a small group). Another goes beside it (up to `maxInFlight` at once) when
//   `minGroup` items wait, a group worth a statement of its own, or when the running one
//   has run for `stallMs` (a lock wait, say) and stops holding the queue back.
// - A statement that PostgreSQL refused (it has an SQLSTATE, e.g. a deadlock against
//   another replica's group) changed nothing, being one statement: its items are run
//   again one by one, so one item's failure is only its own. Any other failure (a lost
//   connection: the outcome is unknown) is every item's answer, as it would have been
//   for each alone.

export interface ApplyItem {
  readonly guardPath: string;
  /** The stored bytes the guard requires, or null: the guard path must not exist. */
  readonly expected: Buffer | null;
  readonly next: Buffer;
  readonly deletes: readonly string[];
  readonly puts: readonly { readonly path: string; readonly value: Buffer }[];
}

export interface ApplyBatcherOptions {
  /** One item, one statement (also the fallback for a refused group). */
  runOne(item: ApplyItem): Promise<boolean>;
  /** Several items (paths disjoint across them), one statement: whether each applied. */
  runMany(items: readonly ApplyItem[]): Promise<boolean[]>;
  /** Most statements in flight at once (keep below the pool size: reads need connections). */
  maxInFlight: number;
  /** A statement running this long (ms) no longer holds back the next one. */
  stallMs: number;
  /** This many waiting items start a statement beside a running one. */
  minGroup: number;
  /** Most items in one statement. */
  maxItems: number;
}

export interface ApplyBatcher {
  apply(item: ApplyItem): Promise<boolean>;
  /** `stalls`: statements started beside one that had run for `stallMs`. */
  readonly stats: { statements: number; items: number; grouped: number; fallbacks: number; stalls: number };
}

interface Waiting {
  readonly item: ApplyItem;
  readonly paths: readonly string[];
  resolve(applied: boolean): void;
  reject(err: unknown): void;
}

function pathsOf(item: ApplyItem): string[] {
  const paths = [item.guardPath];
  for (let i = 0; i < item.deletes.length; i++) paths.push(item.deletes[i] as string);
  for (let i = 0; i < item.puts.length; i++) paths.push((item.puts[i] as ApplyItem['puts'][number]).path);
  return paths;
}

/** A PostgreSQL error response (the statement failed and changed nothing). */
function refusedByDatabase(err: unknown): boolean {
  return typeof err === 'object' && err !== null && typeof (err as { code?: unknown }).code === 'string' && /^[0-9A-Z]{5}$/.test((err as { code: string }).code);
}

export function createApplyBatcher(options: ApplyBatcherOptions): ApplyBatcher {
  const { runOne, runMany, maxInFlight, maxItems, stallMs, minGroup } = options;
  const queue: Waiting[] = [];
  let inFlight = 0;
  let scheduled = false;
  const stats = { statements: 0, items: 0, grouped: 0, fallbacks: 0, stalls: 0 };
  // The one statement in flight that has not yet run for stallMs (when it has, it is left
  // to finish and no longer counts), and the timer that looks again.
  let current: { readonly started: number } | null = null;
  let stallTimer: NodeJS.Timeout | null = null;

  const canStart = (): boolean => inFlight < maxInFlight && (current === null || queue.length >= minGroup);

  /** Marks the current statement stalled once it has run for stallMs, while items wait. */
  function watchStall(): void {
    if (stallTimer !== null || current === null || queue.length === 0 || inFlight >= maxInFlight) return;
    const left = current.started + stallMs - performance.now();
    stallTimer = setTimeout(onStallTimer, Math.max(0, left));
    stallTimer.unref();
  }

  function onStallTimer(): void {
    stallTimer = null;
    if (current !== null && performance.now() - current.started >= stallMs) {
      current = null;
      if (queue.length > 0 && inFlight < maxInFlight) stats.stalls++;
      pump();
      return;
    }
    watchStall();
  }

  /** The queue's first items whose paths do not meet (a later one that does waits). */
  function takeGroup(): Waiting[] {
    const group: Waiting[] = [];
    const used = new Set<string>();
    // One pass that keeps the items left behind in order (no splice per item taken).
    let kept = 0;
    let i = 0;
    for (; i < queue.length && group.length < maxItems; i++) {
      const w = queue[i] as Waiting;
      const { paths } = w;
      let meets = false;
      for (let j = 0; j < paths.length && !meets; j++) meets = used.has(paths[j] as string);
      if (meets) {
        queue[kept++] = w;
        continue;
      }
      for (let j = 0; j < paths.length; j++) used.add(paths[j] as string);
      group.push(w);
    }
    while (i < queue.length) queue[kept++] = queue[i++] as Waiting;
    queue.length = kept;
    return group;
  }

  async function run(group: Waiting[]): Promise<void> {
    stats.statements++;
    stats.items += group.length;
    if (group.length === 1) {
      const w = group[0] as Waiting;
      await runOne(w.item).then(w.resolve, w.reject);
      return;
    }
    stats.grouped += group.length;
    let applied: boolean[];
    try {
      applied = await runMany(group.map((w) => w.item));
    } catch (err) {
      if (!refusedByDatabase(err)) {
        for (const w of group) w.reject(err);
        return;
      }
      stats.fallbacks++;
      await Promise.all(group.map((w) => runOne(w.item).then(w.resolve, w.reject)));
      return;
    }
    group.forEach((w, i) => w.resolve(applied[i] === true));
  }

  function pump(): void {
    scheduled = false;
    while (queue.length > 0 && canStart()) {
      const group = takeGroup();
      inFlight++;
      const started = { started: performance.now() };
      current = started;
      void run(group).finally(() => {
        inFlight--;
        if (current === started) current = null;
        pump();
      });
    }
    watchStall();
  }

  return {
    stats,
    apply(item) {
      return new Promise<boolean>((resolve, reject) => {
        queue.push({ item, paths: pathsOf(item), resolve, reject });
        // Gather what arrives in this turn; a full house is pumped when a statement ends
        // (or when the one running has run for stallMs).
        if (scheduled) return;
        if (canStart()) {
          scheduled = true;
          queueMicrotask(pump);
        } else watchStall();
      });
    },
  };
}
