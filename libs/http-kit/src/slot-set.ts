// A set of short-lived objects held by a long-lived owner (the responses a listener has in
// flight), without a hash table: an array of slots and a free list of slot numbers.
//
// Why not a Set: in V8 a JS Set or Map whose entries keep being added and deleted rebuilds
// its hash table every few dozen additions, and the table it leaves behind stays linked to
// its successor (for iterators still walking the old one) while still holding the entries
// it had. Once one table of that chain is in the old generation (a full collection moves
// the live table there), every later table and every entry any of them ever held stay
// reachable for scavenges until the next full collection: each added object is copied and
// then promoted instead of dying young. Measured with the listener's former `Set` of
// in-flight responses: ~2-5 MB of request and response objects promoted per scavenge under
// load, a 20 % loss of requests per second for the whole stack (docs/secrets.md, "Eleventh
// round"); test/fixtures/promotion.ts shows it. Overwriting an array slot leaves nothing
// behind (the array only grows, to the peak number held at once).

/** Handle of an object in a SlotSet (give it back to `delete`). */
export type Slot = number;

export class SlotSet<T extends object> {
  private readonly slots: (T | undefined)[] = [];
  private readonly free: Slot[] = [];
  private count = 0;

  /** Objects held. */
  get size(): number {
    return this.count;
  }

  add(value: T): Slot {
    const slot = this.free.length > 0 ? (this.free.pop() as Slot) : this.slots.length;
    this.slots[slot] = value;
    this.count++;
    return slot;
  }

  /** Releases what `slot` holds; false if it held nothing (already deleted). */
  delete(slot: Slot): boolean {
    if (this.slots[slot] === undefined) return false;
    this.slots[slot] = undefined;
    this.free.push(slot);
    this.count--;
    return true;
  }

  /** Visits the objects held (those added during the visit may or may not be visited). */
  forEach(fn: (value: T) => void): void {
    const slots = this.slots;
    for (let i = 0; i < slots.length; i++) {
      const value = slots[i];
      if (value !== undefined) fn(value);
    }
  }
}
