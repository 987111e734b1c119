// A bus message is a hint that some copy is stale; whoever hears it re-reads the source.
// Hints arrive in bursts, and a re-read that was already running when a hint came may have
// read the old state. `createRefresher(run)` handles both: each `refresh()` settles after a
// run of `run` that started after the call, and the calls that arrive while one run is in
// flight share the single run queued behind it. At most one run at a time, at most one
// waiting; the last run to finish always started after the last call.
export interface Refresher {
  /** Settles (with that run's outcome) after a run that started after this call. */
  refresh(): Promise<void>;
}

export function createRefresher(run: () => Promise<void>): Refresher {
  let inFlight: Promise<void> | null = null;
  let queued: Promise<void> | null = null;
  const start = (): Promise<void> => {
    const p = Promise.resolve()
      .then(run)
      .finally(() => {
        if (inFlight === p) inFlight = null;
      });
    inFlight = p;
    return p;
  };
  return {
    refresh() {
      if (queued) return queued;
      if (!inFlight) return start();
      const next = inFlight
        .catch(() => undefined)
        .then(() => {
          queued = null;
          return start();
        });
      queued = next;
      return next;
    },
  };
}
