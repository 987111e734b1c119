// Issue 28, item 1: namespaces (sys/namespaces, header and path-prefix forms, per-namespace
// mounts, policies and tokens, the hosted mode) against a real database and bus.
import request from 'supertest';
import { createListener, type Listener } from '@selfstack/http-kit';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '@selfstack/config';
import { createTestDatabase, type TestDatabase } from '@selfstack/testing';
import { startService, type ServiceProcess } from './fixtures/service-process';
import { envSchema, loadSecretsConfig, parseServerConfigText } from '../src/config';
import { MULTI_DENIED, initAndUnseal, startHarness, type Harness } from './harness';

// node-vault is CommonJS without types.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const nodeVault = require('node-vault') as (options: Record<string, unknown>) => {
  write(path: string, data: Record<string, unknown>): Promise<unknown>;
  read(path: string): Promise<{ data: Record<string, unknown> }>;
  mounts(): Promise<{ data: Record<string, unknown> }>;
};

const NS_ID = /^[A-Za-z0-9]{5}$/;

describe('namespaces', () => {
  let h: Harness;
  let root = '';
  let unsealKey = '';
  const as = (t: string, ns?: string) => ({ 'X-Vault-Token': t, ...(ns === undefined ? {} : { 'X-Secrets-Namespace': ns }) });
  const post = (path: string, token: string, body: Record<string, unknown> = {}, ns?: string) => request(h.app).post(`/v1/${path}`).set(as(token, ns)).send(body);
  const get = (path: string, token: string, ns?: string) => request(h.app).get(`/v1/${path}`).set(as(token, ns));
  const list = (path: string, token: string, ns?: string) => request(h.app).get(`/v1/${path}?list=true`).set(as(token, ns));
  const del = (path: string, token: string, ns?: string) => request(h.app).delete(`/v1/${path}`).set(as(token, ns));

  beforeAll(async () => {
    h = await startHarness();
    const init = await initAndUnseal(h.app);
    root = init.rootToken;
    unsealKey = init.keys[0] as string;
  });
  afterAll(async () => {
    await h.close();
  });

  describe('sys/namespaces', () => {
    it('lists nothing (404) before any namespace exists', async () => {
      const r = await list('sys/namespaces', root);
      expect(r.status).toBe(404);
      expect(r.body).toEqual({ errors: [] });
    });

    it('creates, reads and lists namespaces in the anchor shape', async () => {
      const created = await post('sys/namespaces/ns1', root, { custom_metadata: { team: 'a' } });
      expect(created.status).toBe(200);
      expect(created.headers['content-type']).toMatch(/application\/json/);
      expect(created.body.data).toEqual({ id: expect.stringMatching(NS_ID), path: 'ns1/', custom_metadata: { team: 'a' } });

      const read = await get('sys/namespaces/ns1', root);
      expect(read.status).toBe(200);
      expect(read.body.data).toEqual(created.body.data);

      const l = await list('sys/namespaces', root);
      expect(l.status).toBe(200);
      expect(l.body.data).toEqual({ keys: ['ns1/'], key_info: { 'ns1/': created.body.data } });
      // GET without list=true answers the same list.
      expect((await get('sys/namespaces', root)).body.data).toEqual(l.body.data);
    });

    it('creates nested namespaces by header, by path and split, all the same namespace', async () => {
      const byHeader = await post('sys/namespaces/ns2', root, {}, 'ns1/');
      expect(byHeader.status).toBe(200);
      // Paths are relative to the namespace the request is made in.
      expect(byHeader.body.data).toMatchObject({ path: 'ns2/', custom_metadata: {} });
      const id = byHeader.body.data.id as string;
      expect((await get('sys/namespaces/ns1/ns2', root)).body.data).toEqual({ id, path: 'ns1/ns2/', custom_metadata: {} });
      expect((await get('ns1/sys/namespaces/ns2', root)).body.data).toEqual({ id, path: 'ns2/', custom_metadata: {} });
      expect((await get('sys/namespaces/ns2', root, 'ns1')).body.data.id).toBe(id);
      // Only direct children are listed.
      expect((await list('sys/namespaces', root)).body.data.keys).toEqual(['ns1/']);
      expect((await list('sys/namespaces', root, 'ns1/')).body.data.keys).toEqual(['ns2/']);
      expect((await list('sys/namespaces', root, 'ns1/ns2/')).status).toBe(404);
      // LIST with a trailing slash (as the Vault CLI may send it) and below a child.
      expect((await list('sys/namespaces/', root)).body.data.keys).toEqual(['ns1/']);
      const below = await list('sys/namespaces/ns1', root);
      expect(below.status).toBe(200);
      expect(below.body.data).toEqual({ keys: ['ns2/'], key_info: { 'ns2/': { id, path: 'ns1/ns2/', custom_metadata: {} } } });
      expect((await list('sys/namespaces/nope', root)).status).toBe(404);
    });

    it('replaces metadata on POST and merges it on PATCH', async () => {
      await post('sys/namespaces/meta', root, { custom_metadata: { a: '1', b: '2' } }).expect(200);
      const replaced = await post('sys/namespaces/meta', root, { custom_metadata: { c: '3' } });
      expect(replaced.body.data.custom_metadata).toEqual({ c: '3' });
      const patched = await request(h.app)
        .patch('/v1/sys/namespaces/meta')
        .set({ ...as(root), 'Content-Type': 'application/merge-patch+json' })
        .send(JSON.stringify({ custom_metadata: { c: null, d: '4' } }));
      expect(patched.status).toBe(200);
      expect(patched.body.data).toMatchObject({ path: 'meta/', custom_metadata: { d: '4' } });
      const missing = await request(h.app)
        .patch('/v1/sys/namespaces/nope')
        .set({ ...as(root), 'Content-Type': 'application/merge-patch+json' })
        .send(JSON.stringify({ custom_metadata: { d: '4' } }));
      expect(missing.status).toBe(404);
      expect(missing.body).toEqual({ errors: ['namespace not found'] });
      await del('sys/namespaces/meta', root).expect(204);
    });

    it('refuses bad names and values with 400', async () => {
      for (const [name, message] of [
        ['sys', '"sys" is a reserved path and cannot be used as a namespace name'],
        ['auth', '"auth" is a reserved path and cannot be used as a namespace name'],
        ['bad%20name', 'invalid namespace name "bad name": letters, digits, \'-\' and \'_\' only'],
        ['missing/child', 'parent namespace "missing/" does not exist'],
      ]) {
        const r = await post(`sys/namespaces/${name}`, root, {});
        expect(r.status).toBe(400);
        expect(r.body).toEqual({ errors: [message] });
      }
      const badMeta = await post('sys/namespaces/x', root, { custom_metadata: { a: 1 } });
      expect(badMeta.status).toBe(400);
      expect(badMeta.body.errors).toHaveLength(1);
      const nullMeta = await post('sys/namespaces/x', root, { custom_metadata: { a: null } });
      expect(nullMeta.status).toBe(400);
      expect(nullMeta.body).toEqual({ errors: ['custom_metadata: the value of "a" must be a string'] });
      // A mount may not shadow a child namespace, nor a namespace a mount of its parent.
      await post('sys/namespaces/taken', root).expect(200);
      const mountShadow = await post('sys/mounts/taken', root, { type: 'kv' });
      expect(mountShadow.status).toBe(400);
      expect(mountShadow.body).toEqual({ errors: ['path is already in use at taken/'] });
      await del('sys/namespaces/taken', root).expect(204);
      const shadow = await post('sys/namespaces/secret', root, {});
      expect(shadow.status).toBe(400);
      expect(shadow.body).toEqual({ errors: ['path is already in use at secret/'] });
    });

    it('answers 404 namespace not found for an unknown namespace, by header', async () => {
      for (const header of ['X-Secrets-Namespace', 'X-Vault-Namespace']) {
        const r = await request(h.app).get('/v1/sys/mounts').set({ 'X-Vault-Token': root, [header]: 'nope/' });
        expect(r.status).toBe(404);
        expect(r.body).toEqual({ errors: ['namespace not found'] });
      }
      // Root by name, and the raw sys routes whatever the header says.
      expect((await request(h.app).get('/v1/sys/mounts').set({ 'X-Vault-Token': root, 'X-Vault-Namespace': 'root' })).status).toBe(200);
      expect((await request(h.app).get('/v1/sys/health').set({ 'X-Vault-Namespace': 'nope/' })).status).toBe(200);
    });
  });

  describe('mount isolation', () => {
    it('has no mounts in a new namespace; secret/ there is distinct from root secret/', async () => {
      const mounts = await get('sys/mounts', root, 'ns1/');
      expect(mounts.status).toBe(200);
      // Only the system backend, as a fresh Vault namespace (no `secret/`).
      expect(Object.keys(mounts.body.data)).toEqual(['sys/']);
      const noMount = await get('secret/data/x', root, 'ns1/');
      expect(noMount.status).toBe(404);

      await post('sys/mounts/secret', root, { type: 'kv', options: { version: '2' } }, 'ns1/').expect(204);
      expect(Object.keys((await get('sys/mounts', root, 'ns1/')).body.data).sort()).toEqual(['secret/', 'sys/']);

      await post('secret/data/x', root, { data: { where: 'root' } }).expect(200);
      await post('secret/data/x', root, { data: { where: 'ns1' } }, 'ns1/').expect(200);
      expect((await get('secret/data/x', root)).body.data.data).toEqual({ where: 'root' });
      expect((await get('secret/data/x', root, 'ns1/')).body.data.data).toEqual({ where: 'ns1' });
      // The path-prefix form and the split form reach the same mount.
      expect((await get('ns1/secret/data/x', root)).body.data.data).toEqual({ where: 'ns1' });
      await post('sys/mounts/kv1', root, { type: 'kv' }, 'ns1/ns2/').expect(204);
      await post('kv1/a', root, { v: 'deep' }, 'ns1/').expect(404);
      await post('ns2/kv1/a', root, { v: 'deep' }, 'ns1/').expect(204);
      for (const [path, ns] of [
        ['kv1/a', 'ns1/ns2/'],
        ['ns1/ns2/kv1/a', undefined],
        ['ns2/kv1/a', 'ns1'],
        ['kv1/a', '/ns1/ns2'],
      ] as const) {
        const r = await get(path, root, ns);
        expect(r.status).toBe(200);
        expect(r.body.data).toEqual({ v: 'deep' });
      }
      // The CLIs' preflight finds a child namespace's mount, its path relative to the request's namespace.
      const ui = await get('sys/internal/ui/mounts/ns2/kv1/a', root, 'ns1/');
      expect(ui.status).toBe(200);
      expect(ui.body.data).toMatchObject({ path: 'ns2/kv1/', type: 'kv', options: { version: '1' } });
      expect((await get('sys/internal/ui/mounts/ns1/ns2/kv1/a', root)).body.data.path).toBe('ns1/ns2/kv1/');
      expect((await get('sys/internal/ui/mounts/kv1/a', root, 'ns1/ns2')).body.data.path).toBe('kv1/');
      // The root namespace's mount list does not show the namespace's mounts.
      expect(Object.keys((await get('sys/mounts', root)).body.data)).not.toContain('kv1/');
    });
  });

  describe('policies and tokens', () => {
    let nsToken = '';
    let parentToken = '';
    it('keeps policies per namespace, each with its own default', async () => {
      expect((await list('sys/policies/acl', root, 'ns1/')).body.data.keys).toEqual(['default']);
      await post('sys/policies/acl/reader', root, { policy: 'path "secret/data/*" { capabilities = ["read"] }' }, 'ns1/').expect(204);
      expect((await list('sys/policies/acl', root, 'ns1/')).body.data.keys).toEqual(['default', 'reader']);
      expect((await list('sys/policies/acl', root)).body.data.keys).toEqual(['default']);
      expect((await get('sys/policies/acl/reader', root)).status).toBe(404);
      // The legacy list shows `root` in the root namespace only (reference §4.8).
      expect((await get('sys/policy', root, 'ns1/')).body.data.keys).toEqual(['default', 'reader']);
      expect((await get('sys/policy', root)).body.data.keys).toEqual(['default', 'root']);
    });

    it('issues namespace tokens (suffixed with the namespace id) under the namespace policies', async () => {
      const nsId = (await get('sys/namespaces/ns1', root)).body.data.id as string;
      const created = await post('auth/token/create', root, { policies: ['reader'] }, 'ns1/');
      expect(created.status).toBe(200);
      nsToken = created.body.auth.client_token;
      expect(nsToken.endsWith(`.${nsId}`)).toBe(true);
      expect(created.body.auth.policies).toEqual(['default', 'reader']);
      expect(created.body.warnings ?? []).toEqual([]);
      // Reads in its namespace under its policy; no write.
      expect((await get('secret/data/x', nsToken, 'ns1/')).body.data.data).toEqual({ where: 'ns1' });
      expect((await get('ns1/secret/data/x', nsToken)).status).toBe(200);
      const write = await post('secret/data/x', nsToken, { data: {} }, 'ns1/');
      expect(write.status).toBe(403);
      expect(write.body).toEqual({ errors: [MULTI_DENIED] });
      // Not usable in the parent (root) namespace.
      const inRoot = await get('secret/data/x', nsToken);
      expect(inRoot.status).toBe(403);
      expect(inRoot.body).toEqual({ errors: [MULTI_DENIED] });
      // lookup-self works in its namespace and names it (Vault Enterprise's namespace_path).
      const self = await get('auth/token/lookup-self', nsToken, 'ns1/');
      expect(self.body.data).toMatchObject({ policies: ['default', 'reader'], namespace_path: 'ns1/' });
      expect((await get('auth/token/lookup-self', root)).body.data.namespace_path).toBe('');
    });

    it('lets a parent-namespace token act in a child, its policy paths relative to its own namespace', async () => {
      await post('sys/policies/acl/child-reader', root, { policy: 'path "ns1/secret/data/*" { capabilities = ["read"] }\npath "secret/data/*" { capabilities = ["read", "update", "create"] }' }).expect(204);
      parentToken = (await post('auth/token/create', root, { policies: ['child-reader'] })).body.auth.client_token;
      expect(parentToken).not.toMatch(/\.[A-Za-z0-9]{5}$/);
      expect((await get('secret/data/x', parentToken, 'ns1/')).body.data.data).toEqual({ where: 'ns1' });
      const w = await post('secret/data/x', parentToken, { data: { no: 'pe' } }, 'ns1/');
      expect(w.status).toBe(403);
      // In its own namespace `secret/data/*` grants writes.
      expect((await post('secret/data/y', parentToken, { data: { ok: '1' } })).status).toBe(200);
      // Creating a token of ns1 from the root namespace: its policies are ns1's, so naming
      // them needs sudo on the create path (the subset rule compares names of one namespace).
      await post('sys/policies/acl/ns1-issuer', root, { policy: 'path "ns1/auth/token/create" { capabilities = ["update"] }' }).expect(204);
      await post('sys/policies/acl/ns1-sudo-issuer', root, { policy: 'path "ns1/auth/token/create" { capabilities = ["update", "sudo"] }' }).expect(204);
      const issuer = (await post('auth/token/create', root, { policies: ['ns1-issuer'] })).body.auth.client_token as string;
      const sudoIssuer = (await post('auth/token/create', root, { policies: ['ns1-sudo-issuer'] })).body.auth.client_token as string;
      const plain = await post('auth/token/create', issuer, { policies: ['reader'] }, 'ns1/');
      expect(plain.status).toBe(400);
      expect(plain.body).toEqual({ errors: ['child policies must be subset of parent'] });
      const inherited = await post('auth/token/create', issuer, {}, 'ns1/');
      expect(inherited.status).toBe(200);
      expect(inherited.body.auth.policies).toEqual(['default']);
      const named = await post('auth/token/create', sudoIssuer, { policies: ['reader'] }, 'ns1/');
      expect(named.status).toBe(200);
      expect(named.body.auth.policies).toEqual(['default', 'reader']);
      expect((await get('secret/data/x', named.body.auth.client_token, 'ns1')).status).toBe(200);
            // A namespace token cannot reach its parent's policies: `reader` of ns1 gives nothing in ns1/ns2.
      expect((await get('kv1/a', nsToken, 'ns1/ns2/')).status).toBe(403);
      expect((await get('kv1/a', root, 'ns1/ns2/')).status).toBe(200);
    });

    it('keeps each namespace its own token accessors', async () => {
      const inNs = await list('auth/token/accessors', root, 'ns1/');
      expect(inNs.status).toBe(200);
      // nsToken and the two made by the issuers above.
      const mine = (await get('auth/token/lookup-self', nsToken, 'ns1/')).body.data.accessor as string;
      expect(inNs.body.data.keys).toHaveLength(3);
      expect(inNs.body.data.keys).toContain(mine);
      expect((await list('auth/token/accessors', root)).body.data.keys).not.toContain(mine);
      const lookup = await post('auth/token/lookup-accessor', root, { accessor: mine }, 'ns1/');
      expect(lookup.status).toBe(200);
      expect(lookup.body.data.policies).toEqual(['default', 'reader']);
      // Another namespace's tokens are not found there, by accessor or by id.
      const fromRoot = await post('auth/token/lookup-accessor', root, { accessor: mine });
      expect(fromRoot.status).toBe(400);
      expect(fromRoot.body).toEqual({ errors: ['invalid accessor'] });
      const victim = (await post('auth/token/create', root, { policies: ['default'] })).body.auth as { client_token: string; accessor: string };
      expect((await post('auth/token/lookup', root, { token: victim.client_token }, 'ns1/')).status).toBe(403);
      await post('auth/token/revoke-accessor', root, { accessor: victim.accessor }, 'ns1/').expect(204);
      await post('auth/token/revoke', root, { token: victim.client_token }, 'ns1/').expect(204);
      expect((await get('auth/token/lookup-self', victim.client_token)).status).toBe(200);
    });

    it('refuses to delete a namespace with children, then deletes one with its mounts, policies and tokens', async () => {
      const refused = await del('sys/namespaces/ns1', root);
      expect(refused.status).toBe(400);
      expect(refused.body).toEqual({ errors: ['cannot delete namespace "ns1/" containing child namespaces'] });
      const ns2 = (await get('sys/namespaces/ns1/ns2', root)).body.data.id as string;
      const kv1 = (await get('sys/mounts/kv1', root, 'ns1/ns2/')).body.data.uuid as string;
      const stored = async (prefix: string): Promise<number> => {
        const rows = await h.prisma.$queryRawUnsafe<{ n: bigint }[]>('SELECT count(*) AS n FROM secrets.entries WHERE path LIKE $1', `${prefix}%`);
        return Number(rows[0]?.n ?? 0);
      };
      expect(await stored(`namespaces/${ns2}/`)).toBeGreaterThan(0);
      expect(await stored(`logical/${kv1}/`)).toBe(1);
      await del('sys/namespaces/ns2', root, 'ns1/').expect(204);
      expect(await stored(`namespaces/${ns2}/`)).toBe(0);
      expect(await stored(`logical/${kv1}/`)).toBe(0);
      expect((await get('sys/mounts', root, 'ns1/ns2/')).body).toEqual({ errors: ['namespace not found'] });
      await del('sys/namespaces/ns1', root).expect(204);
      // Its token is revoked, its data and tables gone.
      const gone = await get('auth/token/lookup-self', nsToken);
      expect(gone.status).toBe(403);
      expect((await list('sys/namespaces', root)).status).toBe(404);
      // Created again: a new, empty namespace (no mounts, only the default policy).
      await post('sys/namespaces/ns1', root).expect(200);
      expect(Object.keys((await get('sys/mounts', root, 'ns1/')).body.data)).toEqual(['sys/']);
      expect((await list('sys/policies/acl', root, 'ns1/')).body.data.keys).toEqual(['default']);
      // Deleting a namespace that does not exist is a no-op.
      await del('sys/namespaces/never', root).expect(204);
      await del('sys/namespaces/ns1', root).expect(204);
    });
  });

  describe('auth methods in a namespace', () => {
    it('issues login tokens that belong to the namespace', async () => {
      await post('sys/namespaces/team', root).expect(200);
      await post('sys/auth/userpass', root, { type: 'userpass' }, 'team/').expect(204);
      expect((await get('sys/auth', root)).body.data['userpass/']).toBeUndefined();
      // `renewer` (team's) lets the token renew itself in team/child as well: policy paths are relative to team/.
      await post('sys/policies/acl/renewer', root, { policy: 'path "child/auth/token/renew-self" { capabilities = ["update"] }' }, 'team').expect(204);
      await post('auth/userpass/users/alice', root, { password: 'pw-alice-1', token_policies: 'default,renewer' }, 'team/').expect(204);
      const login = await request(h.app).post('/v1/team/auth/userpass/login/alice').send({ password: 'pw-alice-1' });
      expect(login.status).toBe(200);
      const token = login.body.auth.client_token as string;
      const teamId = (await get('sys/namespaces/team', root)).body.data.id as string;
      expect(token.endsWith(`.${teamId}`)).toBe(true);
      expect((await get('auth/token/lookup-self', token, 'team')).status).toBe(200);
      expect((await get('auth/token/lookup-self', token)).status).toBe(403);
      // Renewal asks the method that issued it, in the token's namespace, also from a child.
      await post('sys/namespaces/child', root, {}, 'team').expect(200);
      const renewed = await post('auth/token/renew-self', token, { increment: '1h' }, 'team/child');
      expect(renewed.status).toBe(200);
      expect(renewed.body.auth.lease_duration).toBe(3600);
      await post('auth/userpass/users/alice', root, { password: 'pw-alice-1', token_policies: 'default' }, 'team/').expect(204);
      const refused = await post('auth/token/renew-self', token, {}, 'team');
      expect(refused.status).toBe(400);
      expect(refused.body).toEqual({ errors: ['policies have changed, not renewing'] });
      // Root has no userpass method: the same login there is no route.
      expect((await request(h.app).post('/v1/auth/userpass/login/alice').send({ password: 'pw-alice-1' })).status).toBe(403);
    });
  });

  describe('across replicas and seals', () => {
    it('a replica sees a namespace created on another one; namespaces survive seal and unseal', async () => {
      const replica = await h.replica();
      await request(replica.app).put('/v1/sys/unseal').send({ key: unsealKey }).expect(200);
      await post('sys/namespaces/shared', root).expect(200);
      await post('sys/mounts/kv', root, { type: 'kv' }, 'shared/').expect(204);
      await post('kv/k', root, { v: '1' }, 'shared/').expect(204);
      const r = await request(replica.app).get('/v1/kv/k').set(as(root, 'shared/'));
      expect(r.status).toBe(200);
      expect(r.body.data).toEqual({ v: '1' });
      // A replica that hears nothing on the bus finds a new namespace by either form all the same.
      const deaf = await h.replica({ busPrefix: `deaf-${process.pid}-` });
      await request(deaf.app).put('/v1/sys/unseal').send({ key: unsealKey }).expect(200);
      expect((await request(deaf.app).get('/v1/sys/mounts').set(as(root))).status).toBe(200);
      await post('sys/namespaces/late', root).expect(200);
      await post('sys/mounts/kv', root, { type: 'kv' }, 'late').expect(204);
      await post('kv/k', root, { v: 'late' }, 'late').expect(204);
      const byPath = await request(deaf.app).get('/v1/late/kv/k').set(as(root));
      expect(byPath.status).toBe(200);
      expect(byPath.body.data).toEqual({ v: 'late' });
      await post('sys/namespaces/later', root).expect(200);
      await post('sys/mounts/kv', root, { type: 'kv' }, 'later').expect(204);
      await post('kv/k', root, { v: 'later' }, 'later').expect(204);
      const byHeader = await request(deaf.app).get('/v1/kv/k').set(as(root, 'later/'));
      expect(byHeader.status).toBe(200);
      expect(byHeader.body.data).toEqual({ v: 'later' });
      await request(h.app).put('/v1/sys/seal').set(as(root)).expect(204);
      await request(h.app).put('/v1/sys/unseal').send({ key: unsealKey }).expect(200);
      expect((await get('shared/kv/k', root)).body.data).toEqual({ v: '1' });
    });
  });

  describe('node-vault', () => {
    let listener: Listener;
    beforeAll(async () => {
      listener = await createListener(h.app, { port: 0, host: '127.0.0.1' });
    });
    afterAll(async () => {
      await listener.close();
    });
    it('uses the namespace option (X-Vault-Namespace)', async () => {
      await post('sys/namespaces/nv', root).expect(200);
      const vault = nodeVault({ apiVersion: 'v1', endpoint: listener.url, token: root, namespace: 'nv' });
      await vault.write('sys/mounts/store', { type: 'kv', options: { version: '2' } });
      await vault.write('store/data/app', { data: { password: 'p1' } });
      expect((await vault.read('store/data/app')).data.data).toEqual({ password: 'p1' });
      expect(Object.keys((await vault.mounts()).data).sort()).toEqual(['store/', 'sys/']);
      const plain = nodeVault({ apiVersion: 'v1', endpoint: listener.url, token: root });
      await expect(plain.read('store/data/app')).rejects.toThrow();
      expect((await plain.read('nv/store/data/app')).data.data).toEqual({ password: 'p1' });
    });
  });
});

describe('hosted mode', () => {
  let h: Harness;
  let root = '';
  beforeAll(async () => {
    h = await startHarness({}, { hosted: true });
    root = (await initAndUnseal(h.app)).rootToken;
  });
  afterAll(async () => {
    await h.close();
  });

  it('creates the admin namespace at init and refuses requests without a namespace', async () => {
    const none = await request(h.app).get('/v1/sys/mounts').set({ 'X-Vault-Token': root });
    expect(none.status).toBe(403);
    expect(none.body).toEqual({ errors: [MULTI_DENIED] });
    const ns = await request(h.app).get('/v1/sys/namespaces/admin').set({ 'X-Vault-Token': root, 'X-Vault-Namespace': 'admin' });
    expect(ns.status).toBe(404);
    const admin = await request(h.app).get('/v1/sys/mounts').set({ 'X-Vault-Token': root, 'X-Secrets-Namespace': 'admin/' });
    expect(admin.status).toBe(200);
    expect((await request(h.app).get('/v1/admin/sys/mounts').set({ 'X-Vault-Token': root })).status).toBe(200);
    // Health and seal status stay reachable without a namespace.
    expect((await request(h.app).get('/v1/sys/health')).status).toBe(200);
    // A namespace under admin, and a token of admin at work in it.
    await request(h.app).post('/v1/admin/sys/namespaces/team').set({ 'X-Vault-Token': root }).expect(200);
    await request(h.app).post('/v1/admin/sys/policies/acl/ops').set({ 'X-Vault-Token': root }).send({ policy: 'path "team/sys/mounts" { capabilities = ["read"] }' }).expect(204);
    const token = (await request(h.app).post('/v1/admin/auth/token/create').set({ 'X-Vault-Token': root }).send({ policies: ['ops'] })).body.auth.client_token as string;
    expect((await request(h.app).get('/v1/admin/team/sys/mounts').set({ 'X-Vault-Token': token })).status).toBe(200);
    expect((await request(h.app).get('/v1/sys/mounts').set({ 'X-Vault-Token': token, 'X-Vault-Namespace': 'admin/team' })).status).toBe(200);
    expect((await request(h.app).get('/v1/sys/mounts').set({ 'X-Vault-Token': token })).status).toBe(403);
  });
});

describe('hosted mode configuration', () => {
  it('is off by default, on with SECRETS_HOSTED or the HCL file\'s hosted = true', async () => {
    expect((await loadSecretsConfig({})).hosted).toBe(false);
    expect((await loadSecretsConfig({ SECRETS_HOSTED: 'true' })).hosted).toBe(true);
    const env = envSchema.parse({});
    expect((await parseServerConfigText('hosted = true\n', 'h.hcl', env)).hosted).toBe(true);
    expect((await parseServerConfigText('hosted = false\n', 'h.hcl', env)).hosted).toBe(false);
    await expect(parseServerConfigText('hosted = "maybe"\n', 'h.hcl', env)).rejects.toThrow(ConfigError);
    await expect(loadSecretsConfig({ SECRETS_HOSTED: 'maybe' })).rejects.toThrow(ConfigError);
  });
});

describe('hosted mode, the real process (HCL hosted = true, dev mode)', () => {
  let db: TestDatabase;
  let dir: string;
  let svc: ServiceProcess;
  beforeAll(async () => {
    db = await createTestDatabase();
    dir = mkdtempSync(join(tmpdir(), 'secrets-hosted-'));
    const config = join(dir, 'server.hcl');
    writeFileSync(config, 'hosted = true\nlistener "tcp" {\n  address = "127.0.0.1:0"\n  tls_disable = true\n}\n');
    svc = await startService({
      DATABASE_URL: db.url,
      SECRETS_CONFIG: config,
      SECRETS_DEV_MODE: 'true',
      SECRETS_DEV_ROOT_TOKEN: 'hosted-root-token',
      SECRETS_DEV_STATE_FILE: join(dir, 'dev.json'),
      LOG_LEVEL: 'info',
    });
  });
  afterAll(async () => {
    await svc?.stop();
    await db?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves the admin namespace and refuses the root one', async () => {
    const url = svc.urls[0] as string;
    const call = (path: string, headers: Record<string, string> = {}) => fetch(`${url}/v1/${path}`, { headers: { 'X-Vault-Token': 'hosted-root-token', ...headers } });
    const none = await call('sys/mounts');
    expect(none.status).toBe(403);
    expect(await none.json()).toEqual({ errors: [MULTI_DENIED] });
    const admin = await call('sys/mounts', { 'X-Vault-Namespace': 'admin' });
    expect(admin.status).toBe(200);
    expect(Object.keys(((await admin.json()) as { data: Record<string, unknown> }).data)).toEqual(['sys/']);
    expect((await call('admin/auth/token/lookup-self')).status).toBe(200);
    expect((await fetch(`${url}/v1/sys/health`)).status).toBe(200);
  });
});
