// Secrets hygiene (issue 29 item 5; ARCHITECTURE "Tokens, passwords and secret values are
// never logged"): the secrets service, the scheduler, boxes and the registry run as real
// processes at LOG_LEVEL=debug through a scenario that creates, uses and misuses every kind
// of credential they handle: unseal key, root and child tokens, a userpass password, a
// secret value, the scheduler's management token, node SecretID and node shared secret,
// box passwords, tokens and signed upload URLs, registry tokens and signed archive URLs.
// None of them may appear in any log line, any error body or any /metrics label.
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { createTestDatabase, type TestDatabase } from '@selfstack/testing';
import { sampleModuleTarGz } from '../../services/registry/test/archive-fixtures';
import { call, jsonBody, startService, stopAll, type Answer, type ServiceProcess } from './fault-harness';

jest.setTimeout(180_000);

const REGISTRY_ADMIN = 'hygiene-registry-admin-9f8e7d6c5b4a';
const BOXES_PASSWORD = 'hygiene-boxes-password-31415';
const BOXES_BOOT_TOKEN = 'hygiene-boxes-bootstrap-token-2718281828459045';
const NODE_SHARED = 'hygiene-node-shared-secret-161803';
const KV_VALUE = 'hygiene-kv-value-correct-horse-battery';
const USER_PASSWORD = 'hygiene-userpass-password-1123581321';
// Credentials an attacker sends: wrong, but still never to be echoed or logged.
const WRONG = ['hygiene-wrong-token-aaaaaaaaaaaaaaaa', 's.hygieneWrongVaultToken0000', 'rgt_hygieneWrongRegistryToken000000000'];

describe('no secret in logs, error bodies or metrics', () => {
  let db: TestDatabase;
  let blobRoot: string;
  let services: ServiceProcess[] = [];
  const secrets = new Set<string>([REGISTRY_ADMIN, BOXES_PASSWORD, BOXES_BOOT_TOKEN, NODE_SHARED, KV_VALUE, USER_PASSWORD, ...WRONG]);
  const answers: { what: string; answer: Answer }[] = [];
  const record = async (what: string, p: Promise<Answer>): Promise<Answer> => {
    const answer = await p;
    answers.push({ what, answer });
    return answer;
  };

  beforeAll(async () => {
    db = await createTestDatabase();
    blobRoot = await mkdtemp(path.join(tmpdir(), 'hygiene-blobs-'));
    const debug = { DATABASE_URL: db.url, LOG_LEVEL: 'debug' };
    services = await Promise.all([
      startService('secrets', debug),
      startService('scheduler', { ...debug, SCHEDULER_ACL_ENABLED: 'true', SCHEDULER_NODE_SECRET: NODE_SHARED }),
      startService('boxes', {
        ...debug,
        BOXES_BLOB_FS_ROOT: path.join(blobRoot, 'boxes'),
        BOXES_BOOTSTRAP_ADMIN_USERNAME: 'opsadmin',
        BOXES_BOOTSTRAP_ADMIN_PASSWORD: BOXES_PASSWORD,
        BOXES_BOOTSTRAP_ADMIN_TOKEN: BOXES_BOOT_TOKEN,
      }),
      startService('registry', { ...debug, REGISTRY_BLOB_FS_ROOT: path.join(blobRoot, 'registry'), REGISTRY_ADMIN_TOKEN: REGISTRY_ADMIN }),
    ]);
    for (const s of services) await s.ready();
  });

  afterAll(async () => {
    await stopAll(services);
    await db?.drop();
    if (blobRoot) await rm(blobRoot, { recursive: true, force: true });
  });

  const svc = (name: string) => services.find((s) => s.name === name)!;

  it('runs the scenario', async () => {
    // --- secrets ------------------------------------------------------------------------
    const s = svc('secrets').url;
    const init = await record('init', call(`${s}/v1/sys/init`, { method: 'PUT', ...jsonBody({ secret_shares: 1, secret_threshold: 1 }) }));
    const { keys, keys_base64: keysB64, root_token: root } = init.json as { keys: string[]; keys_base64: string[]; root_token: string };
    for (const k of [...keys, ...keysB64, root]) secrets.add(k);
    await record('unseal with a wrong key', call(`${s}/v1/sys/unseal`, { method: 'PUT', ...jsonBody({ key: 'ab'.repeat(33) }) }));
    expect((await record('unseal', call(`${s}/v1/sys/unseal`, { method: 'PUT', ...jsonBody({ key: keys[0] }) }))).status).toBe(200);
    const rootAuth = { 'X-Vault-Token': root };
    await record('mount', call(`${s}/v1/sys/mounts/kv`, { method: 'POST', ...jsonBody({ type: 'kv', options: { version: '1' } }, rootAuth) }));
    expect((await record('kv write', call(`${s}/v1/kv/app`, { method: 'PUT', ...jsonBody({ password: KV_VALUE }, rootAuth) }))).status).toBe(204);
    expect((await record('kv read', call(`${s}/v1/kv/app`, { headers: rootAuth }))).json).toMatchObject({ data: { password: KV_VALUE } });
    await record('kv read, wrong token', call(`${s}/v1/kv/app`, { headers: { 'X-Vault-Token': WRONG[1]! } }));
    const child = await record('token create', call(`${s}/v1/auth/token/create`, { method: 'POST', ...jsonBody({ policies: ['default'] }, rootAuth) }));
    const childToken = (child.json as { auth: { client_token: string; accessor: string } }).auth.client_token;
    secrets.add(childToken);
    await record('kv read, child token (denied)', call(`${s}/v1/kv/app`, { headers: { 'X-Vault-Token': childToken } }));
    await record('enable userpass', call(`${s}/v1/sys/auth/userpass`, { method: 'POST', ...jsonBody({ type: 'userpass' }, rootAuth) }));
    await record('create user', call(`${s}/v1/auth/userpass/users/alice`, { method: 'POST', ...jsonBody({ password: USER_PASSWORD, policies: 'default' }, rootAuth) }));
    await record('login, wrong password', call(`${s}/v1/auth/userpass/login/alice`, { method: 'POST', ...jsonBody({ password: WRONG[0] }) }));
    const login = await record('login', call(`${s}/v1/auth/userpass/login/alice`, { method: 'POST', ...jsonBody({ password: USER_PASSWORD }) }));
    expect(login.status).toBe(200);
    secrets.add((login.json as { auth: { client_token: string } }).auth.client_token);

    // --- scheduler ----------------------------------------------------------------------
    const n = svc('scheduler').url;
    const boot = await record('acl bootstrap', call(`${n}/v1/acl/bootstrap`, { method: 'POST' }));
    expect(boot.status).toBe(200);
    const mgmt = (boot.json as { SecretID: string }).SecretID;
    secrets.add(mgmt);
    const nodeSecretId = randomUUID();
    secrets.add(nodeSecretId);
    const node = { Node: { ID: randomUUID(), SecretID: nodeSecretId, Name: 'hygiene-node', Datacenter: 'dc1' } };
    expect((await record('node register', call(`${n}/v1/internal/node/register`, { method: 'PUT', ...jsonBody(node, { 'X-Scheduler-Node-Secret': NODE_SHARED }) }))).status).toBe(200);
    await record('node register, other secret', call(`${n}/v1/internal/node/register`, { method: 'PUT', ...jsonBody({ Node: { ...node.Node, SecretID: WRONG[0] } }, { 'X-Scheduler-Node-Secret': NODE_SHARED }) }));
    // A node that exists re-registers with its own SecretID whatever the shared secret says
    // (as the anchor's clients do); a new node needs the shared secret.
    const strangerSecretId = randomUUID();
    secrets.add(strangerSecretId);
    const stranger = { Node: { ...node.Node, ID: randomUUID(), SecretID: strangerSecretId, Name: 'hygiene-stranger' } };
    await record('node register, wrong shared secret', call(`${n}/v1/internal/node/register`, { method: 'PUT', ...jsonBody(stranger, { 'X-Scheduler-Node-Secret': WRONG[0]! }) }));
    const job = { Job: { ID: 'hygiene', TaskGroups: [{ Name: 'g', Tasks: [{ Name: 't', Driver: 'docker' }] }] } };
    expect((await record('job', call(`${n}/v1/jobs`, { method: 'PUT', ...jsonBody(job, { 'X-Nomad-Token': mgmt }) }))).status).toBe(200);
    await record('jobs, wrong token', call(`${n}/v1/jobs`, { headers: { 'X-Nomad-Token': WRONG[0]! } }));
    await record('jobs, token in query', call(`${n}/v1/jobs?token=${WRONG[0]}`));

    // --- boxes --------------------------------------------------------------------------
    const b = svc('boxes').url;
    await record('authenticate, wrong password', call(`${b}/api/v1/authenticate`, { method: 'POST', ...jsonBody({ user: { login: 'opsadmin', password: WRONG[0] } }) }));
    const auth = await record('authenticate', call(`${b}/api/v1/authenticate`, { method: 'POST', ...jsonBody({ user: { login: 'opsadmin', password: BOXES_PASSWORD }, token: { description: 'hygiene' } }) }));
    expect(auth.status).toBe(200);
    const boxToken = (auth.json as { token: string }).token;
    secrets.add(boxToken);
    const bearer = { Authorization: `Bearer ${boxToken}` };
    await record('box', call(`${b}/api/v1/boxes`, { method: 'POST', ...jsonBody({ box: { username: 'opsadmin', name: 'hy', is_private: true } }, bearer) }));
    await record('version', call(`${b}/api/v1/box/opsadmin/hy/versions`, { method: 'POST', ...jsonBody({ version: { version: '1.0.0' } }, bearer) }));
    await record('provider', call(`${b}/api/v1/box/opsadmin/hy/version/1.0.0/providers`, { method: 'POST', ...jsonBody({ provider: { name: 'virtualbox' } }, bearer) }));
    const issued = await record('upload url', call(`${b}/api/v1/box/opsadmin/hy/version/1.0.0/provider/virtualbox/upload`, { headers: bearer }));
    const uploadPath = (issued.json as { upload_path: string }).upload_path;
    const uploadToken = uploadPath.split('/').at(-1)!;
    secrets.add(uploadToken);
    expect((await record('upload', call(uploadPath, { method: 'PUT', body: 'box image', headers: { 'Content-Type': 'application/octet-stream' } }))).status).toBe(200);
    await record('upload again (spent URL)', call(uploadPath, { method: 'PUT', body: 'again', headers: { 'Content-Type': 'application/octet-stream' } }));
    await record('upload, tampered URL', call(`${uploadPath.slice(0, -4)}AAAA`, { method: 'PUT', body: 'x', headers: { 'Content-Type': 'application/octet-stream' } }));
    await record('box, token in query', call(`${b}/api/v1/box/opsadmin/hy?access_token=${boxToken}`));
    await record('box, wrong token in query', call(`${b}/api/v1/box/opsadmin/hy?access_token=${WRONG[0]}`));
    await record('box, wrong bearer', call(`${b}/api/v1/box/opsadmin/hy`, { headers: { Authorization: `Bearer ${WRONG[0]}` } }));

    // --- registry -----------------------------------------------------------------------
    const r = svc('registry').url;
    const admin = { Authorization: `Bearer ${REGISTRY_ADMIN}` };
    await record('namespace', call(`${r}/v1/admin/namespaces`, { method: 'POST', ...jsonBody({ name: 'acme' }, admin) }));
    const tok = await record('api token', call(`${r}/v1/admin/tokens`, { method: 'POST', ...jsonBody({ namespace: 'acme' }, admin) }));
    const apiToken = (tok.json as { token: string }).token;
    secrets.add(apiToken);
    const pub = await record('publish', call(`${r}/v1/modules/acme/vpc/aws/1.0.0`, { method: 'POST', body: new Uint8Array(sampleModuleTarGz()), headers: { Authorization: `Bearer ${apiToken}`, 'Content-Type': 'application/octet-stream' } }));
    expect(pub.status).toBe(201);
    const dlUrl = `${r}/v1/modules/acme/vpc/aws/1.0.0/download`;
    const dl = await record('download', call(dlUrl, { headers: { Authorization: `Bearer ${apiToken}` } }));
    const signed = new URL(dl.headers.get('x-terraform-get') ?? '', dlUrl);
    for (const v of signed.searchParams.values()) if (v.length >= 16) secrets.add(v);
    expect(signed.search.length).toBeGreaterThan(16);
    expect((await record('archive', call(signed.toString()))).status).toBe(200);
    const tampered = new URL(signed);
    for (const [k, v] of signed.searchParams) if (v.length >= 16) tampered.searchParams.set(k, `${v.slice(0, -3)}xyz`);
    await record('archive, tampered signature', call(tampered.toString()));
    await record('publish, wrong token', call(`${r}/v1/modules/acme/vpc/aws/1.0.1`, { method: 'POST', body: 'x', headers: { Authorization: `Bearer ${WRONG[2]}`, 'Content-Type': 'application/octet-stream' } }));
    await record('admin, wrong token', call(`${r}/v1/admin/tokens`, { headers: { 'X-Registry-Token': WRONG[2]! } }));

    // Every error path above was taken: a credential check failed in each service.
    const refused = answers.filter((a) => a.answer.status >= 400).map((a) => a.what);
    expect(refused).toEqual(
      expect.arrayContaining(['kv read, wrong token', 'login, wrong password', 'jobs, wrong token', 'node register, wrong shared secret', 'authenticate, wrong password', 'upload, tampered URL', 'archive, tampered signature', 'admin, wrong token']),
    );
  });

  it('finds none of the secrets in any log line, error body or metric', async () => {
    expect(secrets.size).toBeGreaterThan(20);
    for (const s of services) answers.push({ what: `${s.name} /metrics`, answer: await call(`${s.url}/metrics`) });
    // Give the loggers' batches time to reach the pipes.
    await new Promise((r) => setTimeout(r, 300));
    const places: { where: string; text: string }[] = [
      ...services.map((s) => ({ where: `${s.name} log`, text: s.output() })),
      ...answers.filter((a) => a.answer.status >= 400 || a.what.endsWith('/metrics')).map((a) => ({ where: `${a.what} (${a.answer.status})`, text: a.answer.text })),
    ];
    // The logs hold the request lines of the refused requests: the error paths were logged.
    for (const s of services) expect(s.output()).toMatch(/"status":40[0-9]/);
    const leaks: string[] = [];
    for (const { where, text } of places) {
      for (const secret of secrets) {
        const i = text.indexOf(secret);
        if (i >= 0) leaks.push(`${where}: ${text.slice(Math.max(0, i - 120), i + secret.length + 40).replace(secret, '<<SECRET>>')}`);
      }
    }
    expect(leaks).toEqual([]);
  });

  it('finds none of them in plaintext in any table of the services (tokens hashed, secrets encrypted)', async () => {
    const pg = new Client({ connectionString: db.url });
    await pg.connect();
    try {
      const { rows: tables } = await pg.query<{ schema: string; name: string }>(
        `SELECT table_schema AS schema, table_name AS name FROM information_schema.tables
          WHERE table_schema IN ('secrets', 'scheduler', 'boxes', 'registry', 'state') AND table_type = 'BASE TABLE' ORDER BY 1, 2`,
      );
      expect(tables.map((t) => t.schema)).toEqual(expect.arrayContaining(['secrets', 'scheduler', 'boxes', 'registry']));
      const leaks: string[] = [];
      let rowsSeen = 0;
      for (const t of tables) {
        // Whole rows as text; bytea columns come out as hex, so look for that form too.
        const { rows } = await pg.query<{ row: string }>(`SELECT t::text AS row FROM "${t.schema}"."${t.name}" t`);
        rowsSeen += rows.length;
        for (const { row } of rows) {
          for (const secret of secrets) {
            if (row.includes(secret) || row.includes(Buffer.from(secret).toString('hex'))) leaks.push(`${t.schema}.${t.name}: ${secret.slice(0, 12)}...`);
          }
        }
      }
      expect(rowsSeen).toBeGreaterThan(30);
      expect(leaks).toEqual([]);
    } finally {
      await pg.end();
    }
  });
});
