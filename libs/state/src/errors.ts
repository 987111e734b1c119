// Errors surfaced by the state store. Callers (HTTP layers) map them to 5xx/503.

export class StateWriteTimeoutError extends Error {
  constructor(
    readonly tables: readonly string[],
    readonly timeoutMs: number,
    options?: { cause?: unknown },
  ) {
    // The cause says which limit hit: Prisma's transaction timeout or maxWait (P2028), or
    // Postgres' statement_timeout (57014).
    super(`state write on [${tables.join(', ')}] exceeded its ${timeoutMs} ms budget and was rolled back`, options);
    this.name = 'StateWriteTimeoutError';
  }
}

export class StateStoreClosedError extends Error {
  constructor() {
    super('state store is closed');
    this.name = 'StateStoreClosedError';
  }
}

// Prisma reports an expired interactive transaction as P2028; Postgres cancels a statement
// past `statement_timeout` (which withWrite sets to the same budget) with SQLSTATE 57014.
export function isTransactionTimeout(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const code = (err as { code?: unknown }).code;
  if (code === 'P2028' || code === '57014') return true;
  const message = err instanceof Error ? err.message : '';
  return /statement timeout|expired transaction|Transaction already closed/i.test(message);
}
