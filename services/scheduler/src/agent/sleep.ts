// The agent's waits (retry back-off, heartbeats, restart delays) end early when it stops.

/** Resolves after `ms`, or at once when `signal` aborts (never rejects). */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done);
  });
}
