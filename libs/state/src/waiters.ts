// In-memory registry of blocked readers. A wake-up for tables [a, b] touches only the
// waiters registered on a or b (one Set per table), so a write costs O(waiters of the
// written tables), not O(all waiters) — a few thousand long-polls stay cheap.

export interface Waiter {
  readonly tables: readonly string[];
  /** `index`: the write that woke it (absent when everyone is woken without one). */
  notify(index?: number): void;
}

export interface WaiterRegistryOptions {
  /**
   * Wake the first waiter of a wake-up at once and the others in `defer(fn)` (the state
   * store passes setImmediate). The readers one write wakes mostly ask the same question at
   * the same index and share one load (blockingRead's shared loads): woken all in one go,
   * the continuations of every one of them run before the first one's query gets past
   * its awaits to Postgres, so the query (and with it every answer) waits for all of
   * them. Woken first and alone, the leader's query is on its way while the rest wake up
   * and join it. Without `defer`, everyone is woken synchronously.
   */
  defer?: (fn: () => void) => void;
}

export class WaiterRegistry {
  private readonly byTable = new Map<string, Set<Waiter>>();
  private readonly all = new Set<Waiter>();

  constructor(private readonly options: WaiterRegistryOptions = {}) {}

  get size(): number {
    return this.all.size;
  }

  add(waiter: Waiter): void {
    this.all.add(waiter);
    for (const table of waiter.tables) {
      let set = this.byTable.get(table);
      if (!set) {
        set = new Set();
        this.byTable.set(table, set);
      }
      set.add(waiter);
    }
  }

  remove(waiter: Waiter): void {
    if (!this.all.delete(waiter)) return;
    for (const table of waiter.tables) {
      const set = this.byTable.get(table);
      if (!set) continue;
      set.delete(waiter);
      // Drop empty sets so that tables named once (e.g. per-object keys) do not pile up.
      if (set.size === 0) this.byTable.delete(table);
    }
  }

  /**
   * Notifies every waiter registered on any of `tables` once (a waiter on two written
   * tables is notified once); returns how many. notify() may unregister synchronously, so
   * the waiters are collected first. With `defer`, all but the first are notified later.
   */
  wake(tables: readonly string[], index?: number): number {
    let targets: Set<Waiter> | undefined;
    for (const table of tables) {
      const set = this.byTable.get(table);
      if (!set) continue;
      if (!targets) targets = new Set(set);
      else for (const w of set) targets.add(w);
    }
    if (!targets) return 0;
    const count = targets.size;
    const defer = this.options.defer;
    if (!defer || count === 1) {
      for (const waiter of targets) waiter.notify(index);
      return count;
    }
    const list = [...targets];
    (list[0] as Waiter).notify(index);
    defer(() => {
      for (let i = 1; i < list.length; i++) (list[i] as Waiter).notify(index);
    });
    return count;
  }

  wakeAll(): void {
    for (const waiter of [...this.all]) waiter.notify();
  }
}
