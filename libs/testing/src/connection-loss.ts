// Reliability tests: end every other backend of a test database, as a Postgres restart or
// an operator's pg_terminate_backend would, and wait until they are gone.
import { Client } from 'pg';

export interface BackendTerminator {
  /**
   * Terminates every backend of the database except its own; resolves once
   * pg_stat_activity shows none left and the clients had a moment to read the server's
   * FATAL message (their pools' 'error' event). Returns how many were terminated.
   */
  terminateOthers(): Promise<number>;
  close(): Promise<void>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Opens the one connection to `databaseUrl` that terminateOthers() leaves alone. */
export async function openBackendTerminator(databaseUrl: string): Promise<BackendTerminator> {
  const admin = new Client({ connectionString: databaseUrl, application_name: 'selfstack-test-terminator' });
  admin.on('error', () => undefined);
  await admin.connect();
  const others = async (): Promise<number> => {
    const { rows } = await admin.query<{ n: string }>(
      'SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
    );
    return Number(rows[0]?.n);
  };
  return {
    async terminateOthers() {
      const { rows } = await admin.query<{ ok: boolean }>(
        'SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
      );
      for (let i = 0; i < 250 && (await others()) > 0; i++) await sleep(20);
      const left = await others();
      if (left > 0) throw new Error(`${left} backend(s) still connected after pg_terminate_backend`);
      await sleep(100);
      return rows.length;
    },
    close: () => admin.end(),
  };
}
