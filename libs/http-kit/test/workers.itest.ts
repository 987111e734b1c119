// superviseWorkers / followPrimary with real forked processes (test/fixtures/workers-program.ts).
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { freePortBelowEphemeral, waitFor } from '@selfstack/testing';

const PROGRAM = path.join(__dirname, 'fixtures', 'workers-program.ts');

interface Running {
  child: ChildProcess;
  exited: Promise<number | null>;
  output(): string;
}

function start(env: Record<string, string>): Running {
  const child = spawn(process.execPath, ['--import', 'tsx', PROGRAM], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, exited, output: () => out };
}

function get(port: number, p = '/'): Promise<{ worker: number; pid: number }> {
  return new Promise((resolve, reject) => {
    // A connection the primary hands to a worker in the instant that worker dies is never
    // answered: give up on it (waitFor tries again).
    const req = http.get({ host: '127.0.0.1', port, path: p, agent: false, timeout: 3000 }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve(JSON.parse(body) as { worker: number; pid: number }));
    });
    req.on('timeout', () => req.destroy(new Error('no answer')));
    req.on('error', reject);
  });
}

/** `promise`, or a failure with the program's output after `ms`. */
function within<T>(promise: Promise<T>, context: () => string, ms = 15_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`not settled within ${ms} ms; program output:\n${context()}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Worker ids and pids seen over `n` new connections (handed out round-robin). */
async function seen(port: number, n = 8): Promise<Map<number, number>> {
  const out = new Map<number, number>();
  for (let i = 0; i < n; i++) {
    const r = await get(port);
    out.set(r.worker, r.pid);
  }
  return out;
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** The program serving with two workers, once both answer; `workers` maps id -> pid. */
async function startServing(): Promise<Running & { port: number; workers: Map<number, number> }> {
  const port = await freePortBelowEphemeral();
  const p = start({ PORT: String(port), WORKERS: '2' });
  try {
    const workers = await waitFor('both workers', async () => {
      const s = await seen(port);
      return s.size === 2 ? s : undefined;
    }, 20_000, 100, p.output);
    return { ...p, port, workers };
  } catch (err) {
    p.child.kill('SIGKILL');
    throw err;
  }
}

describe('superviseWorkers', () => {
  jest.setTimeout(60_000);

  it('serves one port from every worker, replaces a worker that dies, and stops gracefully on SIGTERM (exit 0)', async () => {
    const p = await startServing();
    const { port, workers: first } = p;
    try {
      expect([...first.keys()].sort()).toEqual([1, 2]);

      // A worker killed from outside is replaced by a new one (id 3) on the same port.
      process.kill(first.get(1)!, 'SIGKILL');
      const after = await waitFor('the replacement worker', async () => {
        const s = await seen(port);
        return s.has(3) && s.has(2) ? s : undefined;
      }, 20_000, 100, p.output);
      expect(after.has(1)).toBe(false);
      expect(p.output()).toContain('worker exited unexpectedly');

      // A request in flight when the stop starts still gets its answer.
      const slow = get(port, '/slow');
      await new Promise((r) => setTimeout(r, 100));
      p.child.kill('SIGTERM');
      await expect(within(slow, p.output)).resolves.toMatchObject({ pid: expect.any(Number) });
      await expect(within(p.exited, p.output)).resolves.toBe(0);
      for (const pid of after.values()) expect(alive(pid)).toBe(false);
      expect(p.output()).toContain('asked by the primary');
    } finally {
      p.child.kill('SIGKILL');
    }
  });

  it('a worker with a bad configuration stops the whole service with exit code 2 (no restart loop)', async () => {
    const p = start({ PORT: String(await freePortBelowEphemeral()), WORKERS: '2', FIXTURE_MODE: 'config-error' });
    await expect(p.exited).resolves.toBe(2);
    // Restarting would have shown a third exit (and then given up with 1 after three).
    expect((p.output().match(/"message":"worker exited unexpectedly"/g) ?? []).length).toBeLessThanOrEqual(2);
  });

  it('workers that keep dying at start make the primary give up with exit code 1', async () => {
    const p = start({ PORT: String(await freePortBelowEphemeral()), WORKERS: '1', FIXTURE_MODE: 'crash' });
    await expect(p.exited).resolves.toBe(1);
    expect(p.output()).toContain('workers keep failing at start; giving up');
    // maxFailedStarts is 3 in the fixture: three starts, then no more.
    expect(p.output().match(/"message":"worker exited unexpectedly"/g)).toHaveLength(3);
  });

  it('a start slower than the minimum uptime that dies before listening is still a failed start', async () => {
    // Each worker takes 3x the minimum uptime to die without ever listening (as a start on
    // a loaded host may): counted from the fork it would look like a worker that had run
    // fine, and the primary would restart it forever.
    const p = start({ PORT: String(await freePortBelowEphemeral()), WORKERS: '1', FIXTURE_MODE: 'slow-crash', MIN_UPTIME_MS: '200', SLOW_START_MS: '600' });
    try {
      // Three tsx starts: seconds each on a loaded machine.
      await expect(within(p.exited, p.output, 45_000)).resolves.toBe(1);
      expect(p.output()).toContain('workers keep failing at start; giving up');
      expect(p.output().match(/"message":"worker exited unexpectedly"/g)).toHaveLength(3);
    } finally {
      p.child.kill('SIGKILL');
    }
  }, 60_000);

  it('workers stop when their primary is killed (no orphans)', async () => {
    const p = await startServing();
    try {
      p.child.kill('SIGKILL');
      await p.exited;
      await waitFor('the workers to exit', async () => ([...p.workers.values()].every((pid) => !alive(pid)) ? true : undefined), 10_000, 100, p.output);
    } finally {
      p.child.kill('SIGKILL');
    }
  });
});
