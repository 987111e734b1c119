// In-memory registry of blocked readers. A wake-up for tables [a, b] touches only the
// waiters registered on a or b (one Set per table), so a write costs O(waiters of the
// written tables), not O(all waiters) — a few thousand long-polls stay cheap.

export interface Waiter {
  readonly tables: readonly string[];
  /** `index`: the write that woke it (absent when everyone is woken without one). */
  notify(index?: number): void;
}

export class WaiterRegistry {
  private readonly byTable = new Map<string, Set<Waiter>>();
  private readonly all = new Set<Waiter>();

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

  // notify() may unregister synchronously; iterate over a snapshot of each set.
  wake(tables: readonly string[], index?: number): number {
    let woken = 0;
    for (const table of tables) {
      const set = this.byTable.get(table);
      if (!set) continue;
      for (const waiter of [...set]) {
        waiter.notify(index);
        woken++;
      }
    }
    return woken;
  }

  wakeAll(): void {
    for (const waiter of [...this.all]) waiter.notify();
  }
}
