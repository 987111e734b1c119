// Per-job advisory locks (PostgreSQL session locks on a dedicated connection per worker):
// whoever holds a job's lock is the only process planning and applying that job, across
// every scheduler replica. A session lock is released by PostgreSQL when its connection
// ends, so a crashed replica never strands a job (no lease to expire).
import { Client } from 'pg';

export interface JobLockLogger {
  warn(message: string, meta?: Record<string, unknown>): unknown;
}

/** One connection = one worker slot: it holds at most one job lock at a time. */
export class JobLockClient {
  private client: Client | null = null;
  private connecting: Promise<Client> | null = null;

  constructor(private readonly url: string, private readonly logger: JobLockLogger) {}

  private async connection(): Promise<Client> {
    if (this.client) return this.client;
    if (!this.connecting) {
      const c = new Client({ connectionString: this.url, application_name: 'selfstack-scheduler-broker' });
      c.on('error', (err) => {
        this.logger.warn('job lock connection lost', { err: err.message });
        if (this.client === c) this.client = null;
      });
      this.connecting = c.connect().then(
        () => {
          this.client = c;
          this.connecting = null;
          return c;
        },
        (err: unknown) => {
          this.connecting = null;
          throw err;
        },
      );
    }
    return this.connecting;
  }

  /** Takes the job's lock if nobody holds it. */
  async tryLock(namespace: string, jobId: string): Promise<boolean> {
    const c = await this.connection();
    try {
      const r = await c.query<{ ok: boolean }>(`SELECT pg_try_advisory_lock(hashtext('scheduler.job'), hashtext($1)) AS ok`, [`${namespace}/${jobId}`]);
      return r.rows[0]?.ok === true;
    } catch (err) {
      // A broken connection holds no locks: drop it, the next claim opens a new one.
      if (this.client === c) this.client = null;
      await c.end().catch(() => undefined);
      throw err;
    }
  }

  async unlock(namespace: string, jobId: string): Promise<void> {
    const c = this.client;
    if (!c) return;
    try {
      await c.query(`SELECT pg_advisory_unlock(hashtext('scheduler.job'), hashtext($1))`, [`${namespace}/${jobId}`]);
    } catch (err) {
      // The connection is gone, and with it the lock.
      this.logger.warn('job unlock failed', { err: err instanceof Error ? err.message : String(err) });
      if (this.client === c) this.client = null;
      await c.end().catch(() => undefined);
    }
  }

  async close(): Promise<void> {
    const c = this.client ?? (this.connecting ? await this.connecting.catch(() => null) : null);
    this.client = null;
    if (c) await c.end().catch(() => undefined);
  }
}
