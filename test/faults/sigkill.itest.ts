// Fault: a service killed with SIGKILL in the middle of a write or an upload (issue 29
// item 4; docs/operations.md "Failure behaviour"). Real processes on a database of this
// suite's own: after the restart there is no partial version, no half-stored module, no
// box file at its final key that is not the complete upload, every acknowledged secret
// write is there exactly, and a restarted secrets process comes back sealed.
import { createHash } from 'node:crypto';
import { readdir, mkdtemp, rm } from 'node:fs/promises';
import { request as httpRequest, type ClientRequest } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { createTestDatabase, type TestDatabase } from '@selfstack/testing';
import { sampleModuleTarGz } from '../../services/registry/test/archive-fixtures';
import { call, jsonBody, startService, stopAll, type ServiceProcess } from './fault-harness';

jest.setTimeout(180_000);

const REGISTRY_TOKEN = 'faults-registry-admin-token-0123';
const BOXES_TOKEN = 'faults-boxes-admin-token-0123456789abcdef';

/** Every file under `dir`, relative, except the blob store's in-progress `.tmp/` area. */
async function storedFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (d: string) => {
    for (const e of await readdir(d, { withFileTypes: true }).catch(() => [])) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) {
        if (e.name !== '.tmp') await walk(p);
      } else out.push(path.relative(dir, p));
    }
  };
  await walk(dir);
  return out.sort();
}

/** Starts a request whose body is only partly sent; the rest never comes. */
function partialUpload(url: string, method: string, headers: Record<string, string>, total: number, sent: Buffer): ClientRequest {
  const u = new URL(url);
  const req = httpRequest({ host: u.hostname, port: u.port, path: u.pathname + u.search, method, headers: { ...headers, 'Content-Length': String(total) } });
  req.on('error', () => undefined);
  req.write(sent);
  return req;
}

describe('SIGKILL mid-write and mid-upload', () => {
  let db: TestDatabase;
  let pg: Client;
  let blobRoot: string;
  let boxes: ServiceProcess;
  let registry: ServiceProcess;
  let secrets: ServiceProcess;

  beforeAll(async () => {
    db = await createTestDatabase();
    pg = new Client({ connectionString: db.url });
    await pg.connect();
    blobRoot = await mkdtemp(path.join(tmpdir(), 'faults-blobs-'));
    [boxes, registry, secrets] = await Promise.all([
      startService('boxes', {
        DATABASE_URL: db.url,
        BOXES_BLOB_FS_ROOT: path.join(blobRoot, 'boxes'),
        BOXES_SIGNING_KEY: 'faults-boxes-signing-key-0123456789abcdef',
        BOXES_BOOTSTRAP_ADMIN_USERNAME: 'opsadmin',
        BOXES_BOOTSTRAP_ADMIN_PASSWORD: 'faults-admin-password',
        BOXES_BOOTSTRAP_ADMIN_TOKEN: BOXES_TOKEN,
      }),
      startService('registry', { DATABASE_URL: db.url, REGISTRY_BLOB_FS_ROOT: path.join(blobRoot, 'registry'), REGISTRY_ADMIN_TOKEN: REGISTRY_TOKEN }),
      startService('secrets', { DATABASE_URL: db.url }),
    ]);
    for (const s of [boxes, registry, secrets]) await s.ready();
  });

  afterAll(async () => {
    await stopAll([boxes, registry, secrets]);
    await pg?.end();
    await db?.drop();
    if (blobRoot) await rm(blobRoot, { recursive: true, force: true });
  });

  it('boxes: an upload cut by SIGKILL leaves no box file; a new upload URL then stores the whole box', async () => {
    const auth = { Authorization: `Bearer ${BOXES_TOKEN}` };
    const api = `${boxes.url}/api/v1/box/opsadmin/killed`;
    expect((await call(`${boxes.url}/api/v1/boxes`, { method: 'POST', ...jsonBody({ box: { username: 'opsadmin', name: 'killed' } }, auth) })).status).toBe(201);
    expect((await call(`${api}/versions`, { method: 'POST', ...jsonBody({ version: { version: '1.0.0' } }, auth) })).status).toBe(201);
    expect((await call(`${api}/version/1.0.0/providers`, { method: 'POST', ...jsonBody({ provider: { name: 'virtualbox' } }, auth) })).status).toBe(201);
    const issued = await call(`${api}/version/1.0.0/provider/virtualbox/upload`, { headers: auth });
    expect(issued.status).toBe(200);
    const uploadPath = (issued.json as { upload_path: string }).upload_path;

    const image = Buffer.alloc(4 * 1024 * 1024, 7);
    const cut = partialUpload(uploadPath, 'PUT', { 'Content-Type': 'application/octet-stream' }, image.length, image.subarray(0, 1024 * 1024));
    // The service is receiving once it has claimed the upload.
    for (let i = 0; i < 300; i++) {
      const { rows } = await pg.query<{ status: string }>(`SELECT status FROM boxes.uploads`);
      if (rows[0]?.status === 'receiving') break;
      await new Promise((r) => setTimeout(r, 20));
    }
    await boxes.kill('SIGKILL');
    cut.destroy();
    await boxes.restart();

    // No box file at a final key, and the provider is not hosted.
    expect(await storedFiles(path.join(blobRoot, 'boxes'))).toEqual([]);
    const { rows: providers } = await pg.query<{ hosted: boolean; blob_key: string | null; size: string | null }>(`SELECT hosted, blob_key, size FROM boxes.providers`);
    expect(providers).toEqual([{ hosted: false, blob_key: null, size: null }]);
    const provider = await call(`${api}/version/1.0.0/provider/virtualbox`, { headers: auth });
    expect(provider.status).toBe(200);
    expect(provider.json).toMatchObject({ hosted: false });

    // The cut URL is spent (it was claimed); a new one stores the complete image.
    const again = await call(`${api}/version/1.0.0/provider/virtualbox/upload`, { headers: auth });
    const up = await call((again.json as { upload_path: string }).upload_path, { method: 'PUT', body: new Uint8Array(image), headers: { 'Content-Type': 'application/octet-stream' } });
    expect(up.status).toBe(200);
    const stored = await storedFiles(path.join(blobRoot, 'boxes'));
    expect(stored.filter((f) => !f.startsWith('.meta/'))).toHaveLength(1);
    const { rows: after } = await pg.query<{ hosted: boolean; size: string; checksum_sha256: string | null }>(`SELECT hosted, size::text FROM boxes.providers`);
    expect(after).toEqual([{ hosted: true, size: String(image.length) }]);
  });

  it('registry: publishes cut by SIGKILL leave no version, module row or archive; the same versions publish afterwards', async () => {
    const auth = { Authorization: `Bearer ${REGISTRY_TOKEN}` };
    expect((await call(`${registry.url}/v1/admin/namespaces`, { method: 'POST', ...jsonBody({ name: 'acme' }, auth) })).status).toBe(201);
    const archive = sampleModuleTarGz();
    // One upload in the middle of its body, and a stream of complete publishes racing the kill.
    const cut = partialUpload(`${registry.url}/v1/modules/acme/cut/aws/1.0.0`, 'POST', { ...auth, 'Content-Type': 'application/octet-stream' }, archive.length + 4096, archive);
    const acked: string[] = [];
    let stop = false;
    const publisher = (async () => {
      for (let i = 0; !stop && i < 500; i++) {
        const version = `1.0.${i}`;
        const res = await fetch(`${registry.url}/v1/modules/acme/race/aws/${version}`, { method: 'POST', body: new Uint8Array(archive), headers: { ...auth, 'Content-Type': 'application/octet-stream' } }).catch(() => undefined);
        if (res?.status === 201) acked.push(version);
        if (!res) return;
      }
    })();
    while (acked.length < 3) await new Promise((r) => setTimeout(r, 10));
    await registry.kill('SIGKILL');
    stop = true;
    await publisher;
    cut.destroy();
    await registry.restart();

    // Versions in the database are exactly those whose archive is stored, and every
    // acknowledged one is among them.
    const { rows } = await pg.query<{ name: string; version: string; id: string }>(
      `SELECT m.name, v.version, v.id FROM registry.module_versions v JOIN registry.modules m ON m.id = v.module_id ORDER BY m.name, v.version`,
    );
    expect(rows.filter((r) => r.name === 'cut')).toEqual([]);
    const raced = rows.filter((r) => r.name === 'race').map((r) => r.version);
    for (const v of acked) expect(raced).toContain(v);
    const { rows: modules } = await pg.query<{ name: string }>(`SELECT name FROM registry.modules ORDER BY name`);
    expect(modules.map((m) => m.name)).toEqual(raced.length > 0 ? ['race'] : []);
    const archives = await storedFiles(path.join(blobRoot, 'registry'));
    expect(archives.filter((f) => !f.startsWith('.meta/'))).toHaveLength(raced.length);
    for (const r of rows) {
      const dlUrl = `${registry.url}/v1/modules/acme/${r.name}/aws/${r.version}/download`;
      const dl = await call(dlUrl, { headers: auth });
      expect(dl.status).toBe(204);
      const res = await fetch(new URL(dl.headers.get('x-terraform-get') ?? '', dlUrl));
      expect(res.status).toBe(200);
      expect(createHash('sha256').update(Buffer.from(await res.arrayBuffer())).digest('hex')).toBe(createHash('sha256').update(archive).digest('hex'));
    }

    // The cut version was never created: publishing it now succeeds (not 409).
    const retry = await fetch(`${registry.url}/v1/modules/acme/cut/aws/1.0.0`, { method: 'POST', body: new Uint8Array(archive), headers: { ...auth, 'Content-Type': 'application/octet-stream' } });
    expect(retry.status).toBe(201);
  });

  it('secrets: writes cut by SIGKILL keep every acknowledged value, and the restarted process is sealed', async () => {
    const init = await call(`${secrets.url}/v1/sys/init`, { method: 'PUT', ...jsonBody({ secret_shares: 1, secret_threshold: 1 }) });
    expect(init.status).toBe(200);
    const { keys, root_token: rootToken } = init.json as { keys: string[]; root_token: string };
    const unseal = async () => {
      const u = await call(`${secrets.url}/v1/sys/unseal`, { method: 'PUT', ...jsonBody({ key: keys[0] }) });
      expect(u.status).toBe(200);
      expect(u.json).toMatchObject({ sealed: false });
    };
    await unseal();
    const auth = { 'X-Vault-Token': rootToken };
    expect((await call(`${secrets.url}/v1/sys/mounts/kv`, { method: 'POST', ...jsonBody({ type: 'kv', options: { version: '1' } }, auth) })).status).toBe(204);

    const valueOf = (k: number, n: number) => ({ marker: `plaintext-marker-${k}-${n}`, n });
    const acked = new Map<number, number>();
    let stop = false;
    const writers = Array.from({ length: 4 }, (_, w) =>
      (async () => {
        for (let n = 0; !stop && n < 10_000; n++) {
          const k = w * 1000 + (n % 20);
          const res = await fetch(`${secrets.url}/v1/kv/k${k}`, { method: 'PUT', body: JSON.stringify(valueOf(k, n)), headers: { ...auth, 'Content-Type': 'application/json' } }).catch(() => undefined);
          if (!res) return;
          if (res.status === 204) acked.set(k, n);
        }
      })(),
    );
    while (acked.size < 40) await new Promise((r) => setTimeout(r, 10));
    await secrets.kill('SIGKILL');
    stop = true;
    await Promise.all(writers);
    await secrets.restart();

    const status = await call(`${secrets.url}/v1/sys/seal-status`);
    expect(status.status).toBe(200);
    expect(status.json).toMatchObject({ sealed: true, initialized: true });
    const sealedRead = await call(`${secrets.url}/v1/kv/k0`, { headers: auth });
    expect(sealedRead.status).toBe(503);
    expect(sealedRead.json).toEqual({ errors: ['Vault is sealed'] });

    await unseal();
    for (const [k, n] of acked) {
      const res = await call(`${secrets.url}/v1/kv/k${k}`, { headers: auth });
      expect(res.status).toBe(200);
      // The last acknowledged write, or one that was in flight when the process died:
      // whole values only, never older than what was acknowledged.
      const data = (res.json as { data: { marker: string; n: number } }).data;
      expect(data.n).toBeGreaterThanOrEqual(n);
      expect(data).toEqual(valueOf(k, data.n));
    }

    // At rest nothing is plaintext: no marker, no root token, no unseal key.
    const { rows } = await pg.query<{ path: string; value: Buffer }>(`SELECT path, value FROM secrets.entries`);
    const { rows: barrier } = await pg.query<{ keyring: Buffer }>(`SELECT keyring FROM secrets.barrier`);
    expect(rows.length).toBeGreaterThan(40);
    const haystack = Buffer.concat([...rows.map((r) => Buffer.concat([Buffer.from(r.path), r.value])), ...barrier.map((b) => b.keyring)]);
    for (const needle of ['plaintext-marker', rootToken, keys[0] as string, Buffer.from(keys[0] as string, 'hex').toString('base64')]) {
      expect(haystack.includes(Buffer.from(needle))).toBe(false);
    }
    expect(haystack.includes(Buffer.from(keys[0] as string, 'hex'))).toBe(false);
  });
});
