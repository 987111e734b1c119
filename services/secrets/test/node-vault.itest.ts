// Issue 3, item 8: the unmodified node-vault client against a running service (real
// listener with LIST support, real Postgres and Redis).
import { createListener, type Listener } from '@selfstack/http-kit';
import { startHarness, type Harness } from './harness';

// node-vault is CommonJS without types.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const nodeVault = require('node-vault') as (options: Record<string, unknown>) => VaultClient;

interface VaultClient {
  token: string;
  initialized(): Promise<{ initialized: boolean }>;
  init(o: { secret_shares: number; secret_threshold: number }): Promise<{ keys: string[]; keys_base64: string[]; root_token: string }>;
  unseal(o: { key: string }): Promise<{ sealed: boolean; t: number; n: number; progress: number }>;
  status(): Promise<{ sealed: boolean; t: number; n: number; progress: number; initialized: boolean }>;
  health(o?: Record<string, unknown>): Promise<Record<string, unknown>>;
  seal(): Promise<unknown>;
  mounts(): Promise<Record<string, unknown> & { data: Record<string, { type: string; options: { version: string } | null }> }>;
  mount(o: Record<string, unknown>): Promise<unknown>;
  unmount(o: { mount_point: string }): Promise<unknown>;
  policies(): Promise<{ policies: string[]; keys: string[] }>;
  addPolicy(o: { name: string; rules: string }): Promise<unknown>;
  getPolicy(o: { name: string }): Promise<{ rules: string; name: string }>;
  removePolicy(o: { name: string }): Promise<unknown>;
  tokenCreate(o?: Record<string, unknown>): Promise<{ auth: { client_token: string; policies: string[]; lease_duration: number } }>;
  tokenLookupSelf(): Promise<{ data: { ttl: number; policies: string[]; id: string } }>;
  tokenLookup(o: { token: string }): Promise<{ data: { id: string; display_name: string } }>;
  tokenRenewSelf(o?: Record<string, unknown>): Promise<{ auth: { lease_duration: number; renewable: boolean } }>;
  tokenRevokeSelf(): Promise<unknown>;
  write(path: string, data: Record<string, unknown>): Promise<unknown>;
  read(path: string): Promise<{ data: Record<string, unknown> }>;
  list(path: string): Promise<{ data: { keys: string[] } }>;
  delete(path: string): Promise<unknown>;
  update(path: string, data: Record<string, unknown>): Promise<unknown>;
  help(path: string): Promise<{ help: string; openapi: { openapi: string; paths: Record<string, unknown> }; see_also: null }>;
}

describe('node-vault 0.12.0 against the secrets service', () => {
  let h: Harness;
  let listener: Listener;
  let vault: VaultClient;
  beforeAll(async () => {
    h = await startHarness();
    listener = await createListener(h.app, { port: 0, host: '127.0.0.1' });
    vault = nodeVault({ apiVersion: 'v1', endpoint: listener.url });
  });
  afterAll(async () => {
    await listener.close();
    await h.close();
  });

  let keys: string[] = [];
  it('init, unseal, status, health', async () => {
    expect((await vault.initialized()).initialized).toBe(false);
    const health = await vault.health();
    expect(health).toMatchObject({ initialized: false, sealed: true });
    const init = await vault.init({ secret_shares: 3, secret_threshold: 2 });
    keys = init.keys;
    expect(init.keys).toHaveLength(3);
    expect(init.root_token).toMatch(/^hvs\./);
    vault.token = init.root_token;
    await expect(vault.init({ secret_shares: 1, secret_threshold: 1 })).rejects.toThrow('Vault is already initialized');
    let status = await vault.status();
    expect(status).toMatchObject({ initialized: true, sealed: true, t: 2, n: 3, progress: 0 });
    const first = await vault.unseal({ key: keys[0] as string });
    expect(first).toMatchObject({ sealed: true, progress: 1 });
    const second = await vault.unseal({ key: keys[2] as string });
    expect(second).toMatchObject({ sealed: false, progress: 0 });
    status = await vault.status();
    expect(status.sealed).toBe(false);
    expect(await vault.health()).toMatchObject({ initialized: true, sealed: false, standby: false });
  });

  it('mounts', async () => {
    const mounts = await vault.mounts();
    expect(mounts['secret/']).toMatchObject({ type: 'kv' });
    await vault.mount({ mount_point: 'kv1', type: 'kv', description: 'v1 store' });
    await vault.mount({ mount_point: 'kv2', type: 'kv', options: { version: '2' } });
    const after = await vault.mounts();
    expect(after.data['kv1/']).toMatchObject({ type: 'kv', options: { version: '1' } });
    expect(after.data['kv2/']).toMatchObject({ type: 'kv', options: { version: '2' } });
    await expect(vault.mount({ mount_point: 'kv1', type: 'kv' })).rejects.toThrow('path is already in use at kv1/');
  });

  it('policies through the legacy sys/policy routes', async () => {
    await vault.addPolicy({ name: 'reader', rules: 'path "kv2/data/app/*" { capabilities = ["read", "list"] }\npath "kv1/*" { capabilities = ["read", "list"] }' });
    const list = await vault.policies();
    expect(list.policies).toEqual(expect.arrayContaining(['default', 'reader', 'root']));
    const p = await vault.getPolicy({ name: 'reader' });
    expect(p.rules).toContain('kv2/data/app/*');
  });

  it('write/read/list/delete on v1 and v2 mounts', async () => {
    await vault.write('kv1/app/config', { user: 'alice', port: 5432 });
    await vault.write('kv1/app/other', { x: 1 });
    expect((await vault.read('kv1/app/config')).data).toEqual({ port: 5432, user: 'alice' });
    expect((await vault.list('kv1/app')).data.keys).toEqual(['config', 'other']);
    await vault.delete('kv1/app/other');
    expect((await vault.list('kv1/app/')).data.keys).toEqual(['config']);
    await expect(vault.read('kv1/app/other')).rejects.toThrow('Status 404');

    await vault.write('kv2/data/app/db', { data: { password: 's3cret' } });
    await vault.write('kv2/data/app/db', { data: { password: 'rotated' }, options: { cas: 1 } });
    const read = (await vault.read('kv2/data/app/db')) as { data: { data: Record<string, unknown>; metadata: { version: number } } };
    expect(read.data.data).toEqual({ password: 'rotated' });
    expect(read.data.metadata.version).toBe(2);
    expect(((await vault.read('kv2/data/app/db?version=1')) as { data: { data: Record<string, unknown> } }).data.data).toEqual({ password: 's3cret' });
    await vault.update('kv2/data/app/db', { data: { user: 'app' } });
    expect(((await vault.read('kv2/data/app/db')) as { data: { data: Record<string, unknown> } }).data.data).toEqual({ password: 'rotated', user: 'app' });
    expect((await vault.list('kv2/metadata/app')).data.keys).toEqual(['db']);
    await expect(vault.write('kv2/data/app/db', { data: { a: 1 }, options: { cas: 1 } })).rejects.toThrow('check-and-set parameter did not match the current version');
    await vault.delete('kv2/data/app/db');
    await expect(vault.read('kv2/data/app/db')).rejects.toThrow('Status 404');
    await vault.delete('kv2/metadata/app/db');
    await expect(vault.list('kv2/metadata/app')).rejects.toThrow('Status 404');
  });

  it('token create, lookup, renew, and policy enforcement', async () => {
    const rootToken = vault.token;
    const created = await vault.tokenCreate({ policies: ['reader'], ttl: '1h', display_name: 'ci' });
    const child = created.auth.client_token;
    expect(created.auth.policies).toEqual(['default', 'reader']);
    // node-vault switches to the created token (tokenSource).
    expect(vault.token).toBe(child);
    const self = await vault.tokenLookupSelf();
    expect(self.data.policies).toEqual(['default', 'reader']);
    expect(self.data.ttl).toBeGreaterThan(3500);
    const renewed = await vault.tokenRenewSelf({ increment: '2h' });
    expect(renewed.auth.lease_duration).toBe(7200);
    expect(renewed.auth.renewable).toBe(true);
    expect((await vault.read('kv1/app/config')).data).toMatchObject({ user: 'alice' });
    await expect(vault.write('kv1/app/config', { user: 'mallory' })).rejects.toThrow('permission denied');
    await expect(vault.mounts()).rejects.toThrow('permission denied');

    vault.token = rootToken;
    const looked = await vault.tokenLookup({ token: child });
    expect(looked.data).toMatchObject({ id: child, display_name: 'token-ci' });
    vault.token = child;
    await vault.tokenRevokeSelf();
    await expect(vault.tokenLookupSelf()).rejects.toThrow('invalid token');
    vault.token = rootToken;
    await vault.removePolicy({ name: 'reader' });
    await vault.unmount({ mount_point: 'kv1' });
    expect((await vault.mounts()).data['kv1/']).toBeUndefined();
  });

  it('help (issue 28 item 3): sys/health and a KV v2 mount, Vault\'s raw shape', async () => {
    const health = await vault.help('sys/health');
    expect(health.see_also).toBeNull();
    expect(health.help).toMatch(/^Request:        health\n/);
    expect(Object.keys(health.openapi.paths)).toEqual(['/']);
    const kv = await vault.help('kv2');
    expect(kv.openapi.openapi).toBe('3.0.2');
    expect(Object.keys(kv.openapi.paths)).toEqual(expect.arrayContaining(['/config', '/data/{path}', '/metadata/{path}']));
  });

  it('seal, then health reports 503 in the body without rejecting', async () => {
    await vault.seal();
    const health = await vault.health();
    expect(health).toMatchObject({ sealed: true });
    await expect(vault.read('secret/data/x')).rejects.toThrow('Vault is sealed');
  });
});
