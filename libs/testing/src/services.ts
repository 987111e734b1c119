// Reachability check shared by the jest globalSetup and scripts/check-services.ts
// (`make integration`), so both fail with the same message saying how to start things.
import net from 'node:net';
import tls from 'node:tls';
import { Client } from 'pg';
import { redactUrl, testAdminDatabaseUrl, testRedisUrl } from './env';

export const START_POSTGRES_COMMAND = 'pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start';
export const START_REDIS_COMMAND = 'redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no';

export interface ServiceStatus {
  name: 'PostgreSQL' | 'Redis';
  url: string;
  ok: boolean;
  error?: string;
}

export class ServicesUnavailableError extends Error {
  override readonly name = 'ServicesUnavailableError';
  constructor(readonly statuses: ServiceStatus[]) {
    super(formatServicesMessage(statuses));
    // The message is the whole story; a stack trace into the checker would only bury it.
    this.stack = `${this.name}: ${this.message}`;
  }
}

export interface CheckServicesOptions {
  databaseUrl?: string;
  redisUrl?: string;
  timeoutMs?: number;
}

export async function checkPostgres(url: string, timeoutMs = 3000): Promise<ServiceStatus> {
  const client = new Client({ connectionString: url, connectionTimeoutMillis: timeoutMs });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SELECT 1');
    return { name: 'PostgreSQL', url, ok: true };
  } catch (err) {
    return { name: 'PostgreSQL', url, ok: false, error: errorText(err) };
  } finally {
    await client.end().catch(() => undefined);
  }
}

export async function checkRedis(url: string, timeoutMs = 3000): Promise<ServiceStatus> {
  try {
    await pingRedis(url, timeoutMs);
    return { name: 'Redis', url, ok: true };
  } catch (err) {
    return { name: 'Redis', url, ok: false, error: errorText(err) };
  }
}

// A bare RESP exchange (AUTH when the URL has credentials, then PING) instead of ioredis:
// a failed ioredis connection keeps the process alive for seconds afterwards, which
// delays jest's exit, and one socket is all a reachability check needs.
function pingRedis(url: string, timeoutMs: number): Promise<void> {
  const parsed = new URL(url);
  const host = parsed.hostname.replace(/^\[|\]$/g, '') || '127.0.0.1';
  const port = Number(parsed.port || 6379);
  const command = (...args: string[]) => `*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')}`;
  const password = decodeURIComponent(parsed.password);
  const username = decodeURIComponent(parsed.username);
  const auth = password ? (username ? command('AUTH', username, password) : command('AUTH', password)) : '';
  return new Promise<void>((resolve, reject) => {
    const socket = parsed.protocol === 'rediss:' ? tls.connect({ host, port, servername: host }) : net.connect({ host, port });
    let buffer = '';
    const finish = (err?: Error) => {
      socket.destroy();
      if (err) reject(err);
      else resolve();
    };
    socket.setTimeout(timeoutMs, () => finish(new Error(`no answer within ${timeoutMs} ms`)));
    socket.once('error', (err) => finish(err));
    // Something that is not Redis may accept the connection and hang up: still an answer.
    socket.once('close', () => finish(new Error(`connection closed without a PONG${buffer ? ` (got ${JSON.stringify(buffer.slice(0, 60))})` : ''}`)));
    socket.once(parsed.protocol === 'rediss:' ? 'secureConnect' : 'connect', () => socket.write(auth + command('PING')));
    socket.on('data', (chunk: Buffer) => {
      buffer += chunk.toString('utf8');
      for (let i = buffer.indexOf('\r\n'); i >= 0; i = buffer.indexOf('\r\n')) {
        const line = buffer.slice(0, i);
        buffer = buffer.slice(i + 2);
        if (line.startsWith('-')) return finish(new Error(line.slice(1)));
        if (line === '+PONG') return finish();
      }
    });
  });
}

export function formatServicesMessage(statuses: ServiceStatus[]): string {
  const lines = ['Integration tests need PostgreSQL and Redis.'];
  for (const s of statuses) {
    lines.push(`  ${s.name} at ${redactUrl(s.url)}: ${s.ok ? 'reachable' : `NOT reachable (${s.error ?? 'unknown error'})`}`);
  }
  const down = statuses.filter((s) => !s.ok).map((s) => s.name);
  if (down.length > 0) {
    lines.push('Start them with:');
    if (down.includes('PostgreSQL')) lines.push(`  ${START_POSTGRES_COMMAND}`);
    if (down.includes('Redis')) lines.push(`  ${START_REDIS_COMMAND}`);
    lines.push('or point TEST_DATABASE_URL (or DATABASE_URL) and REDIS_URL at running servers.');
  }
  return lines.join('\n');
}

/** Resolves with both statuses when both services answer; throws ServicesUnavailableError otherwise. */
export async function checkServices(options: CheckServicesOptions = {}): Promise<ServiceStatus[]> {
  const timeoutMs = options.timeoutMs ?? 3000;
  const statuses = await Promise.all([
    checkPostgres(options.databaseUrl ?? testAdminDatabaseUrl(), timeoutMs),
    checkRedis(options.redisUrl ?? testRedisUrl(), timeoutMs),
  ]);
  if (statuses.some((s) => !s.ok)) throw new ServicesUnavailableError(statuses);
  return statuses;
}

function errorText(err: unknown): string {
  if (err instanceof AggregateError && err.errors.length > 0) return err.errors.map(errorText).join('; ');
  if (err instanceof Error) return err.message || err.name;
  return String(err);
}
