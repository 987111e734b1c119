// CPU time of processes from /proc (Linux), for the scenarios that report where the CPU of
// a run went: the server's, its PostgreSQL backends', the load processes'.
import { readFileSync } from 'node:fs';

export interface ProcessCpu {
  user: number;
  system: number;
}

/** User and system CPU time (ms) of a process; null when it is gone (or off Linux). */
export function processCpu(pid: number): ProcessCpu | null {
  try {
    // Fields after the command name (which may hold spaces): utime is the 14th field, stime the 15th.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // USER_HZ = 100 on Linux.
    return { user: Number(fields[11]) * 10, system: Number(fields[12]) * 10 };
  } catch {
    return null;
  }
}

/** User + system CPU time (ms) of a process; null when it is gone. */
export function cpuMs(pid: number): number | null {
  const c = processCpu(pid);
  return c === null ? null : c.user + c.system;
}

/** CPU time (ms) of each of these processes now (pid -> ms). */
export function cpuNow(pids: readonly number[]): Map<number, number> {
  const m = new Map<number, number>();
  for (const pid of pids) {
    const ms = cpuMs(pid);
    if (ms !== null) m.set(pid, ms);
  }
  return m;
}

/** CPU (ms) these processes used since `before` (pid -> ms); one started since counts whole, one gone is left out. */
export function cpuSince(before: ReadonlyMap<number, number>, pids: readonly number[]): number {
  let total = 0;
  for (const pid of new Set([...before.keys(), ...pids])) {
    const now = cpuMs(pid);
    if (now !== null) total += now - (before.get(pid) ?? 0);
  }
  return total;
}

/** The PostgreSQL backends serving the database of `query`'s connection, other than its own. */
export async function postgresBackends(query: (sql: string) => Promise<{ rows: Array<{ pid: number }> }>): Promise<number[]> {
  return (await query(`SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`)).rows.map((r) => r.pid);
}
