// libs/testing against the real services: per-file databases from the migrated template,
// Redis prefixes, listeners, and the reachability check every integration run starts with.
import { promises as fs } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { defaultMigrationsDir, listMigrations, readMigrationRows } from '@selfstack/db';
import { Redis } from 'ioredis';
import { Client } from 'pg';
import {
  checkRedis,
  checkServices,
  createTestDatabase,
  deleteRedisKeys,
  ensureTemplateDatabase,
  hashMigrationsDir,
  ServicesUnavailableError,
  START_POSTGRES_COMMAND,
  START_REDIS_COMMAND,
  startTestListener,
  TEMPLATE_ENV_VAR,
  templateNameForHash,
  testAdminDatabaseUrl,
  testRedisPrefix,
  testRedisUrl,
  type TestDatabase,
} from '../src/index';
import { dropDatabase, dropStaleDatabases, setMarker, withAdminClient, quoteIdent } from '../src/template';

// jest.config.js sets testTimeout inside the integration project, where jest ignores it
// (it is a global option); database drops wait for a checkpoint and can take seconds on
// a busy server, so this file sets its own.
jest.setTimeout(60_000);

async function sql<T extends Record<string, unknown>>(url: string, text: string, params: unknown[] = []): Promise<T[]> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(text, params)).rows;
  } finally {
    await client.end();
  }
}

async function databaseNames(like: string): Promise<string[]> {
  const rows = await sql<{ datname: string }>(testAdminDatabaseUrl(), 'SELECT datname FROM pg_database WHERE datname LIKE $1 ORDER BY 1', [like]);
  return rows.map((r) => r.datname);
}

describe('global setup', () => {
  it('exposed the template for the current migrations to the workers', async () => {
    const expected = templateNameForHash(await hashMigrationsDir(defaultMigrationsDir()));
    expect(process.env[TEMPLATE_ENV_VAR]).toBe(expected);
    expect(await databaseNames(expected)).toEqual([expected]);
  });
});

describe('createTestDatabase', () => {
  const dbs: TestDatabase[] = [];
  afterAll(async () => {
    await Promise.all(dbs.map((db) => db.drop()));
  });

  it('clones the migrated template into a database of its own', async () => {
    const [a, b] = await Promise.all([createTestDatabase(), createTestDatabase()]);
    dbs.push(a!, b!);
    expect(a!.name).not.toBe(b!.name);
    expect(a!.url).toContain(`/${a!.name}`);
    const folders = await listMigrations(defaultMigrationsDir());
    const rows = await readMigrationRows(a!.url);
    expect(rows.map((r) => r.migrationName)).toEqual(folders.map((f) => f.name));

    await sql(a!.url, 'CREATE TABLE public.only_in_a (id int)');
    expect(await sql(b!.url, `SELECT to_regclass('public.only_in_a') AS t`)).toEqual([{ t: null }]);
  });

  it('handles many files cloning at once', async () => {
    const many = await Promise.all(Array.from({ length: 6 }, () => createTestDatabase()));
    dbs.push(...many);
    expect(new Set(many.map((d) => d.name)).size).toBe(6);
  });

  it('drops the database even with connections left open, and drop() is idempotent', async () => {
    const db = await createTestDatabase();
    const leaked = new Client({ connectionString: db.url });
    leaked.on('error', () => undefined); // the forced drop terminates it
    await leaked.connect();
    await db.drop();
    await db.drop();
    expect(await databaseNames(db.name)).toEqual([]);
    await leaked.end().catch(() => undefined);
  });

  it('creates an empty database on request', async () => {
    const db = await createTestDatabase({ empty: true });
    dbs.push(db);
    expect(await readMigrationRows(db.url)).toEqual([]);
  });
});

describe('ensureTemplateDatabase', () => {
  let dir: string;
  const made: string[] = [];
  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'selfstack-tpl-'));
    await fs.mkdir(path.join(dir, '20260101000000_one'));
    await fs.writeFile(path.join(dir, '20260101000000_one', 'migration.sql'), 'CREATE TABLE public.one (id int);\n');
  });
  afterAll(async () => {
    await withAdminClient(testAdminDatabaseUrl(), async (client) => {
      for (const name of made) await dropDatabase(client, name);
    });
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('builds once under concurrency, then reuses; a changed migration means a new template', async () => {
    const messages: string[] = [];
    const log = (m: string) => messages.push(m);
    const names = await Promise.all(Array.from({ length: 3 }, () => ensureTemplateDatabase({ adminUrl: testAdminDatabaseUrl(), migrationsDir: dir, log })));
    made.push(names[0]!);
    expect(new Set(names).size).toBe(1);
    expect(messages.filter((m) => m.startsWith('built'))).toHaveLength(1);
    expect(messages.filter((m) => m.startsWith('reusing'))).toHaveLength(2);

    // Clones carry the migrated schema; nobody may connect to the template itself.
    const clone = await createTestDatabase({ template: names[0]! });
    try {
      expect(await sql(clone.url, `SELECT to_regclass('public.one')::text AS t`)).toEqual([{ t: 'one' }]);
    } finally {
      await clone.drop();
    }
    const [row] = await sql<{ datallowconn: boolean }>(testAdminDatabaseUrl(), 'SELECT datallowconn FROM pg_database WHERE datname = $1', [names[0]]);
    expect(row!.datallowconn).toBe(false);

    await fs.writeFile(path.join(dir, '20260101000000_one', 'migration.sql'), 'CREATE TABLE public.one (id bigint);\n');
    const changed = await ensureTemplateDatabase({ adminUrl: testAdminDatabaseUrl(), migrationsDir: dir });
    made.push(changed);
    expect(changed).not.toBe(names[0]);
  });

  it('copes with builders that do not share an advisory lock (admin URLs naming different databases)', async () => {
    const other = await createTestDatabase({ empty: true });
    try {
      await fs.writeFile(path.join(dir, '20260101000000_one', 'migration.sql'), 'CREATE TABLE public.one (id text);\n');
      const names = await Promise.all([
        ensureTemplateDatabase({ adminUrl: testAdminDatabaseUrl(), migrationsDir: dir }),
        ensureTemplateDatabase({ adminUrl: other.url, migrationsDir: dir }),
        ensureTemplateDatabase({ adminUrl: other.url, migrationsDir: dir }),
      ]);
      made.push(names[0]!);
      expect(new Set(names).size).toBe(1);
      expect(await databaseNames(`${names[0]!.replace('selfstack_tpl_', 'selfstack_tplbuild_')}%`)).toEqual([]);
    } finally {
      await other.drop();
    }
  });

  it('leaves no template behind when a migration fails', async () => {
    const bad = await fs.mkdtemp(path.join(os.tmpdir(), 'selfstack-tpl-bad-'));
    try {
      await fs.mkdir(path.join(bad, '20260101000000_bad'));
      await fs.writeFile(path.join(bad, '20260101000000_bad', 'migration.sql'), 'CREATE TABLE broken (;\n');
      await expect(ensureTemplateDatabase({ adminUrl: testAdminDatabaseUrl(), migrationsDir: bad })).rejects.toMatchObject({ code: 'APPLY_FAILED' });
      const name = templateNameForHash(await hashMigrationsDir(bad));
      expect(await databaseNames(name)).toEqual([]);
      expect(await databaseNames(`${name.replace('selfstack_tpl_', 'selfstack_tplbuild_')}%`)).toEqual([]);
    } finally {
      await fs.rm(bad, { recursive: true, force: true });
    }
  });

  it('drops templates and test databases older than a day, and only those', async () => {
    const suffix = `${process.pid}_${Date.now().toString(36)}`;
    const old = `selfstack_tpl_old_${suffix}`;
    const young = `selfstack_tpl_young_${suffix}`;
    const unmarked = `selfstack_t_unmarked_${suffix}`;
    await withAdminClient(testAdminDatabaseUrl(), async (client) => {
      for (const name of [old, young, unmarked]) await client.query(`CREATE DATABASE ${quoteIdent(name)} TEMPLATE template0`);
      await setMarker(client, old, 'test-template');
      await setMarker(client, young, 'test-template');
      try {
        // Pretend it is two days later for `old` only: its marker is the one we backdate.
        await client.query(`COMMENT ON DATABASE ${quoteIdent(old)} IS '{"selfstack":"test-template","createdAt":"2000-01-01T00:00:00.000Z"}'`);
        const dropped = await dropStaleDatabases(client, 'selfstack_tpl_keep');
        expect(dropped).toContain(old);
        expect(dropped).not.toContain(young);
        expect(dropped).not.toContain(unmarked);
        expect(await databaseNames(`%${suffix}`)).toEqual([unmarked, young].sort());
      } finally {
        for (const name of [old, young, unmarked]) await dropDatabase(client, name);
      }
    });
  });
});

describe('Redis isolation', () => {
  let redis: Redis;
  beforeAll(() => {
    redis = new Redis(testRedisUrl());
  });
  afterAll(() => {
    redis.disconnect();
  });

  it('gives every call its own prefix', () => {
    const a = testRedisPrefix();
    expect(a).toMatch(new RegExp(`^t:${process.pid}:[0-9a-f]{8}:$`));
    expect(testRedisPrefix()).not.toBe(a);
  });

  it('deletes only the keys under the prefix, even when it contains glob characters', async () => {
    const mine = `${testRedisPrefix()}[x]*?:`;
    const other = testRedisPrefix();
    await redis.mset(`${mine}a`, '1', `${mine}b`, '2', `${other}a`, '3', `${mine.replace('[x]', 'x')}c`, '4');
    expect(await deleteRedisKeys(mine)).toBe(2);
    expect(await redis.exists(`${mine}a`, `${mine}b`)).toBe(0);
    expect(await redis.get(`${other}a`)).toBe('3');
    expect(await deleteRedisKeys(other, { redis })).toBe(1);
    expect(await deleteRedisKeys(mine.replace('[x]', 'x'), { redis })).toBe(1);
    await expect(deleteRedisKeys('')).rejects.toThrow('empty prefix');
  });
});

describe('startTestListener', () => {
  function rawRequest(port: number, text: string): Promise<string> {
    return new Promise((resolve, reject) => {
      const socket = net.connect(port, '127.0.0.1', () => socket.end(text));
      let out = '';
      socket.on('data', (c: Buffer) => (out += c.toString()));
      socket.on('end', () => resolve(out));
      socket.on('error', reject);
    });
  }

  it('serves on an ephemeral 127.0.0.1 port and closes despite keep-alive connections', async () => {
    const listener = await startTestListener((req, res) => {
      res.setHeader('content-type', 'text/plain');
      res.end(`${req.method} ${req.url}`);
    });
    expect(listener.port).toBeGreaterThan(0);
    expect(listener.url).toBe(`http://127.0.0.1:${listener.port}`);
    const agent = new http.Agent({ keepAlive: true });
    const body = await new Promise<string>((resolve, reject) => {
      http.get(`${listener.url}/v1/x`, { agent }, (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => resolve(text));
      }).on('error', reject);
    });
    expect(body).toBe('GET /v1/x');
    // Vault clients send LIST, which node:http alone rejects: the kit listener accepts it.
    const listed = await rawRequest(listener.port, 'LIST /v1/secret/metadata HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    expect(listed).toMatch(/^HTTP\/1\.1 200/);
    expect(listed).toContain('LIST /v1/secret/metadata');
    const started = Date.now();
    await listener.close();
    await listener.close();
    expect(Date.now() - started).toBeLessThan(1000);
    expect(listener.listener.netServer.listening).toBe(false);
    agent.destroy();
  });

  it('ends in-flight requests after the drain timeout', async () => {
    const listener = await startTestListener((_req, res) => {
      res.write('streaming'); // never ends, like an event stream
    }, { drainTimeoutMs: 100 });
    const got = rawRequest(listener.port, 'GET /v1/event/stream HTTP/1.1\r\nHost: x\r\n\r\n');
    await new Promise((resolve) => setTimeout(resolve, 100));
    const started = Date.now();
    await listener.close();
    expect(Date.now() - started).toBeLessThan(1000);
    expect(await got).toContain('streaming');
  });
});

describe('checkServices', () => {
  it('passes against the configured services', async () => {
    const statuses = await checkServices();
    expect(statuses.map((s) => [s.name, s.ok])).toEqual([['PostgreSQL', true], ['Redis', true]]);
  });

  it('fails with instructions naming each unreachable service', async () => {
    const err = await checkServices({ databaseUrl: 'postgresql://postgres@127.0.0.1:1/postgres', redisUrl: 'redis://127.0.0.1:1', timeoutMs: 1000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ServicesUnavailableError);
    const message = (err as Error).message;
    expect(message).toContain('PostgreSQL at postgresql://postgres@127.0.0.1:1/postgres: NOT reachable');
    expect(message).toContain('Redis at redis://127.0.0.1:1: NOT reachable');
    expect(message).toContain(START_POSTGRES_COMMAND);
    expect(message).toContain(START_REDIS_COMMAND);
  });

  it('does not mistake a server that hangs up for Redis', async () => {
    const sockets = new Set<net.Socket>();
    const server = net.createServer((socket) => {
      sockets.add(socket);
      socket.end('HTTP/1.1 400 Bad Request\r\n\r\n');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as net.AddressInfo;
      const status = await checkRedis(`redis://127.0.0.1:${port}`, 1000);
      expect(status).toMatchObject({ ok: false, error: expect.stringContaining('without a PONG') });
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
