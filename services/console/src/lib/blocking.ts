// Blocking queries (Nomad's `?index=N&wait=...`, docs/scheduler.md "Query conventions"):
// the console keeps a list live by asking again with the index of its last answer; the
// scheduler holds the request until something in those tables changes.

/**
 * The index to block on next, from the X-Nomad-Index (or X-Scheduler-Index) header. As
 * Nomad's own clients do: an index that went backwards (a restored server) restarts at 0,
 * and 0 is never sent as a blocking index (it would return at once, forever).
 */
export function nextBlockingIndex(previous: number, header: string | null): number {
  const n = header === null ? Number.NaN : Number(header);
  if (!Number.isFinite(n) || n < 1) return Math.max(previous, 1);
  if (n < previous) return 1;
  return Math.floor(n);
}

/** Back-off after a failed blocking query: 1 s doubling to 30 s. */
export function retryDelayMs(failures: number): number {
  return Math.min(30_000, 1000 * 2 ** Math.max(0, failures - 1));
}
