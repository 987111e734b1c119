// The composition root (src/main.ts) as a real process: dev mode initialises, unseals and
// prints the root token and unseal key; a restart unseals again from the dev state file;
// SIGTERM shuts down cleanly.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createTestDatabase, type TestDatabase } from '@selfstack/testing';
import './harness';

const ROOT = resolve(__dirname, '../../..');
const MAIN = join(ROOT, 'services/secrets/src/main.ts');

interface Started {
  child: ChildProcessWithoutNullStreams;
  url: string;
  stdout: () => string;
}

function start(env: Record<string, string>): Promise<Started> {
  const childEnv: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && k !== 'REDIS_URL') childEnv[k] = v;
  // node itself with tsx's loader (not the tsx CLI, whose parent process relays signals
  // with its own timing): SIGTERM must reach main.ts's shutdown handler.
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN], { env: { ...childEnv, ...env }, cwd: env.CWD ?? ROOT });
  let out = '';
  let err = '';
  return new Promise((resolvePromise, reject) => {
    const timer = setTimeout(() => reject(new Error(`no listener after 45s; stdout: ${out}\nstderr: ${err}`)), 45_000);
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
      const m = /"message":"listening".*?"url":"([^"]+)"|"url":"([^"]+)".*?"message":"listening"/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolvePromise({ child, url: (m[1] ?? m[2]) as string, stdout: () => out });
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`exited ${code}; stdout: ${out}\nstderr: ${err}`));
    });
  });
}

function stop(s: Started): Promise<number | null> {
  return new Promise((r) => {
    s.child.removeAllListeners('exit');
    s.child.on('exit', (code) => r(code));
    s.child.kill('SIGTERM');
  });
}

describe('main.ts in dev mode', () => {
  let db: TestDatabase;
  let dir: string;
  beforeAll(async () => {
    db = await createTestDatabase();
    dir = mkdtempSync(join(tmpdir(), 'secrets-dev-'));
  });
  afterAll(async () => {
    await db.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('initialises, unseals, prints the credentials, and survives a restart', async () => {
    const env = {
      DATABASE_URL: db.url,
      SECRETS_DEV_MODE: '1',
      SECRETS_DEV_ROOT_TOKEN: 'devroot',
      SECRETS_DEV_STATE_FILE: join(dir, 'state.json'),
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
    };
    const first = await start(env);
    try {
      expect(first.stdout()).toContain('Root Token: devroot');
      expect(first.stdout()).toMatch(/Unseal Key: [A-Za-z0-9+/=]{44}/);
      expect(statSync(join(dir, 'state.json')).mode & 0o777).toBe(0o600);
      const w = await fetch(`${first.url}/v1/secret/data/dev`, {
        method: 'POST',
        headers: { 'X-Vault-Token': 'devroot' },
        body: JSON.stringify({ data: { ok: true } }),
      });
      expect(w.status).toBe(200);
    } finally {
      expect(await stop(first)).toBe(0);
    }
    const second = await start(env);
    try {
      const r = await fetch(`${second.url}/v1/secret/data/dev`, { headers: { 'X-Vault-Token': 'devroot' } });
      expect(r.status).toBe(200);
      expect(((await r.json()) as { data: { data: unknown } }).data.data).toEqual({ ok: true });
      const status = await fetch(`${second.url}/v1/sys/seal-status`);
      expect(await status.json()).toMatchObject({ initialized: true, sealed: false, t: 1, n: 1 });
    } finally {
      expect(await stop(second)).toBe(0);
    }
  });

  it('fails fast on a bad config file, naming the problem', async () => {
    const bad = start({ DATABASE_URL: db.url, SECRETS_CONFIG: join(dir, 'missing.hcl'), PORT: '0' });
    await expect(bad).rejects.toThrow(/exited 1[\s\S]*missing\.hcl[\s\S]*file not found/);
  });
});
