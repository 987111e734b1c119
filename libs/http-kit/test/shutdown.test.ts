import { spawn } from 'node:child_process';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { installShutdown } from '../src';
import { capturedLogger } from './sample-table';

function get(port: number, urlPath: string): Promise<{ status: number; body: string; connection: string | undefined }> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path: urlPath, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, connection: res.headers.connection }));
    });
    req.on('error', reject);
  });
}

function connect(port: number): Promise<string> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1', () => {
      s.destroy();
      resolve('connected');
    });
    s.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'error'));
  });
}

describe('installShutdown', () => {
  it('SIGTERM: in-flight request completes, new connections refused, closers run, exit 0', async () => {
    const fixture = path.join(__dirname, 'fixtures', 'shutdown-server.ts');
    const child = spawn(process.execPath, ['--import', 'tsx', fixture], { cwd: path.join(__dirname, '..'), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const waitFor = (marker: RegExp, timeoutMs = 20000) =>
      new Promise<RegExpMatchArray>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`timeout waiting for ${marker}; stdout=${stdout} stderr=${stderr}`)), timeoutMs);
        const check = () => {
          const m = stdout.match(marker);
          if (m) {
            clearTimeout(timer);
            child.stdout.off('data', check);
            resolve(m);
          }
        };
        child.stdout.on('data', check);
        check();
      });
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (d: string) => (stdout += d));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));

    const port = Number((await waitFor(/LISTENING (\d+)/))[1]);
    const slow = get(port, '/slow');
    await waitFor(/SLOW_STARTED/);
    let slowFinishedAt = Infinity;
    const slowDone = slow.then((r) => {
      slowFinishedAt = Date.now();
      return r;
    });
    child.kill('SIGTERM');
    // New connections must be refused while the slow request is still being served.
    let refusedAt: number | undefined;
    const deadline = Date.now() + 5000;
    while (refusedAt === undefined && Date.now() < deadline) {
      if ((await connect(port)) === 'ECONNREFUSED') refusedAt = Date.now();
      else await new Promise((r) => setTimeout(r, 25));
    }
    expect(refusedAt).toBeDefined();
    const res = await slowDone;
    expect(refusedAt).toBeLessThan(slowFinishedAt);
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toEqual({ done: true });
    expect(res.connection).toBe('close');
    expect(await exited).toBe(0);
    expect(stdout).toMatch(/CLOSED prisma\nCLOSED redis\nEXIT 0\n$/);
  }, 30000);

  it('runs closers in order, reports a failing closer with exit 1, and only once', async () => {
    const { logger, lines, flush } = capturedLogger();
    const order: string[] = [];
    const codes: number[] = [];
    const shutdown = installShutdown({
      listeners: [{ close: async () => void order.push('listener') }],
      closers: [
        { name: 'a', close: () => void order.push('a') },
        {
          name: 'b',
          close: () => {
            order.push('b');
            throw new Error('quit failed');
          },
        },
        () => void order.push('c'),
      ],
      logger,
      signals: [],
      exit: (code) => void codes.push(code),
    });
    await Promise.all([shutdown('test'), shutdown('again')]);
    shutdown.uninstall();
    expect(order).toEqual(['listener', 'a', 'b', 'c']);
    expect(codes).toEqual([1]);
    await flush();
    expect(lines).toContainEqual(expect.objectContaining({ level: 'error', message: 'closer failed', closer: 'b', error: 'quit failed' }));
  });

  it('runs beforeDrain closers before the listeners drain, then the closers', async () => {
    const { logger } = capturedLogger();
    const order: string[] = [];
    const shutdown = installShutdown({
      listeners: [{ close: async () => void order.push('listener') }],
      beforeDrain: [{ name: 'streams', close: () => void order.push('streams') }],
      closers: [{ name: 'db', close: () => void order.push('db') }],
      logger,
      signals: [],
      exit: () => undefined,
    });
    await shutdown('test');
    shutdown.uninstall();
    expect(order).toEqual(['streams', 'listener', 'db']);
  });
});
