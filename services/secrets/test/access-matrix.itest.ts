// Who may call what (issue 33, item 2): every route x method of every table the /v1
// handler dispatches to (sys-raw, sys, auth/token, kv v1, kv v2; sweepRoutes) has a row
// below giving the status each kind of caller gets; a route without a row fails the test.
// Rules: reference secrets-service-vault-api.md §6 (policy matching: exact beats glob,
// the most specific glob wins, `+` is one segment, deny wins), §4.4 and §5.3 (sudo on
// sys/seal, auth/token/accessors, auth/token/revoke-orphan), §4.9 (default policy), issue
// 33 item 1 (sys/internal/ui/mounts shows only mounts the caller's policies reach).
import request from 'supertest';
import { forAllowed, groupRows, matrixProblems, runAccessMatrix, startTestListener, sweepRoutes, type AccessMatrix, type AccessRow, type SweepResponse, type TestListener } from '@selfstack/testing';
import { INVALID_V2_PATH, ROOT_V2_PATH } from '../src/features/kv/kv.paths';
import { initAndUnseal, INVALID_TOKEN, MULTI_DENIED, startHarness, type Harness } from './harness';

const CALLERS = [
  // Refused before any policy is looked at.
  'none', // no token at all
  'malformed', // an Authorization header that is not `Bearer <token>`
  'unknown', // a token that was never issued
  'expired', // TTL ran out
  'revoked',
  'exhausted', // num_uses: 1, used once
  // Valid tokens; every one but root carries the default policy too.
  'default', // the default policy only
  'deny', // secret/* and kv1/* granted, team/ paths denied by a second policy
  'glob', // secret/{data,metadata,...}/team/* and kv1/team/*, one exact deny inside
  'plus', // secret/data/+/shared (read)
  'exact', // secret/data/team/exact (read)
  'lister', // list on secret/metadata/team/ and kv1/team/ only
  'createonly', // create (not update) on secret/data/team/* and kv1/team/*
  'admin', // sys/* and auth/token/* without sudo
  'sudo', // the same with sudo
  'root',
] as const;
type Caller = (typeof CALLERS)[number];

const POLICIES: Record<string, string> = {
  broad: 'path "secret/*" { capabilities = ["create", "read", "update", "patch", "delete", "list"] }\npath "kv1/*" { capabilities = ["create", "read", "update", "delete", "list"] }',
  'deny-team': 'path "secret/data/team/*" { capabilities = ["deny"] }\npath "secret/metadata/team/*" { capabilities = ["deny"] }\npath "kv1/team/*" { capabilities = ["deny"] }',
  team: [
    'path "secret/data/team/*" { capabilities = ["create", "read", "update", "patch", "delete"] }',
    'path "secret/data/team/locked" { capabilities = ["deny"] }',
    'path "secret/metadata/team/*" { capabilities = ["read", "list", "update", "patch", "delete"] }',
    'path "secret/delete/team/*" { capabilities = ["update"] }',
    'path "secret/undelete/team/*" { capabilities = ["update"] }',
    'path "secret/destroy/team/*" { capabilities = ["update"] }',
    'path "secret/subkeys/team/*" { capabilities = ["read"] }',
    'path "kv1/team/*" { capabilities = ["create", "read", "update", "delete", "list"] }',
  ].join('\n'),
  plus: 'path "secret/data/+/shared" { capabilities = ["read"] }',
  exact: 'path "secret/data/team/exact" { capabilities = ["read"] }',
  lister: 'path "secret/metadata/team/" { capabilities = ["list"] }\npath "kv1/team/" { capabilities = ["list"] }',
  createonly: 'path "secret/data/team/*" { capabilities = ["create"] }\npath "kv1/team/*" { capabilities = ["create"] }',
  admin: 'path "sys/*" { capabilities = ["create", "read", "update", "delete", "list"] }\npath "auth/token/*" { capabilities = ["create", "read", "update", "delete", "list"] }',
  sudo: 'path "sys/*" { capabilities = ["create", "read", "update", "delete", "list", "sudo"] }\npath "auth/token/*" { capabilities = ["create", "read", "update", "delete", "list", "sudo"] }',
};
const POLICIES_OF: Partial<Record<Caller, string[]>> = {
  default: ['default'],
  deny: ['broad', 'deny-team'],
  glob: ['team'],
  plus: ['plus'],
  exact: ['exact'],
  lister: ['lister'],
  createonly: ['createonly'],
  admin: ['admin'],
  sudo: ['sudo'],
  root: ['root'],
};

const BAD_TOKEN = new Set<Caller>(['unknown', 'expired', 'revoked', 'exhausted']);
const NO_TOKEN = new Set<Caller>(['none', 'malformed']);

const PASSWORD = 'correct horse battery staple';
let appRoleId = '';
let appSecretId = '';
/** A fresh secret ID of the `login` role (each destroy cell gets its own). */
const secretId = async () => (await ok(api('post', '/v1/auth/approle/role/login/secret-id', {}), 'secret-id')).body.data as { secret_id: string; secret_id_accessor: string };

let h: Harness;
let server: TestListener;
let root = '';
let unsealKey = '';
const tokens = {} as Record<Caller, string>;

const api = (method: 'get' | 'put' | 'post' | 'delete', path: string, body?: object, token = root) => {
  const r = request(h.app)[method](path).set('X-Vault-Token', token);
  return body ? r.send(body) : r;
};
async function ok(res: Promise<request.Response> | request.Test, what: string): Promise<request.Response> {
  const r = await res;
  if (r.status >= 300) throw new Error(`${what}: ${r.status} ${r.text}`);
  return r;
}
/** A fresh token of a valid kind (for routes that revoke the caller's own token). */
async function mint(caller: Caller, extra: object = {}): Promise<string> {
  const policies = POLICIES_OF[caller] ?? ['default'];
  const res = await ok(api('post', '/v1/auth/token/create', { policies, no_default_policy: caller === 'root', ...extra }), `token for ${caller}`);
  return (res.body as { auth: { client_token: string } }).auth.client_token;
}
const victim = async () => (await ok(api('post', '/v1/auth/token/create-orphan', { policies: ['default'], ttl: '1h' }), 'victim')).body.auth as { client_token: string; accessor: string };

beforeAll(async () => {
  h = await startHarness();
  const init = await initAndUnseal(h.app);
  root = init.rootToken;
  unsealKey = init.keys[0] as string;
  server = await startTestListener(h.app);
  // The expired token first: it needs a second to expire while the rest is built.
  tokens.expired = await mint('glob', { ttl: '1s' });
  await ok(api('post', '/v1/sys/mounts/kv1', { type: 'kv', options: { version: '1' } }), 'mount kv1');
  await ok(api('post', '/v1/sys/mounts/tunable', { type: 'kv', options: { version: '2' } }), 'mount tunable');
  for (const [name, policy] of Object.entries(POLICIES)) await ok(api('put', `/v1/sys/policies/acl/${name}`, { policy }), `policy ${name}`);
  for (const key of ['team/a', 'team/shared', 'team/exact', 'team/locked', 'team/vers', 'other/shared', 'x/y/shared']) {
    await ok(api('post', `/v1/secret/data/${key}`, { data: { v: key } }), `seed ${key}`);
  }
  for (const key of ['team/a', 'other/a']) await ok(api('post', `/v1/kv1/${key}`, { v: key }), `seed kv1 ${key}`);
  // Auth methods: a userpass mount with two users (alice logs in, bob's password changes)
  // and an approle mount with a role to log in with and one to change.
  await ok(api('post', '/v1/sys/auth/userpass', { type: 'userpass' }), 'enable userpass');
  await ok(api('post', '/v1/sys/auth/approle', { type: 'approle' }), 'enable approle');
  await ok(api('post', '/v1/sys/auth/tunable-auth', { type: 'userpass' }), 'enable tunable-auth');
  for (const user of ['alice', 'bob']) await ok(api('post', `/v1/auth/userpass/users/${user}`, { password: PASSWORD, policies: 'default' }), `user ${user}`);
  for (const role of ['login', 'other']) await ok(api('post', `/v1/auth/approle/role/${role}`, { token_policies: ['default'] }), `role ${role}`);
  appRoleId = (await ok(api('get', '/v1/auth/approle/role/login/role-id'), 'role-id')).body.data.role_id as string;
  appSecretId = (await secretId()).secret_id;
  for (const caller of CALLERS) if (POLICIES_OF[caller]) tokens[caller] = caller === 'root' ? root : await mint(caller);
  tokens.unknown = 'hvs.AAAAAAAAAAAAAAAAAAAAAAAA';
  tokens.revoked = await mint('glob');
  await ok(api('post', '/v1/auth/token/revoke', { token: tokens.revoked }), 'revoke');
  tokens.exhausted = await mint('glob', { num_uses: 1 });
  await ok(api('get', '/v1/auth/token/lookup-self', undefined, tokens.exhausted), 'use the single-use token');
  // Every refused kind really is refused before the matrix starts.
  for (const kind of BAD_TOKEN) {
    const deadline = Date.now() + 10_000;
    while ((await api('get', '/v1/auth/token/lookup-self', undefined, tokens[kind])).status !== 403) {
      if (Date.now() > deadline) throw new Error(`${kind} token still accepted`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
});
afterAll(async () => {
  await server?.close();
  await h?.close();
});

function headersOf(caller: Caller): Record<string, string> {
  if (caller === 'none') return {};
  if (caller === 'malformed') return { Authorization: `Basic ${Buffer.from('root:root').toString('base64')}` };
  return { 'X-Vault-Token': tokens[caller] };
}

/** A disposable token of the caller's kind (valid kinds only; the others are refused anyway). */
const ownToken = async ({ caller }: { caller: Caller }) => (POLICIES_OF[caller] ? { headers: { 'X-Vault-Token': await mint(caller) } } : undefined);

// Shorthands for the rows: who holds which grant.
const ADMINS = (status: number) => ({ admin: status, sudo: status, root: status, other: 403 });
const SUDO = (status: number) => ({ sudo: status, root: status, other: 403 });
const VALID = (status: number) => ({ ...Object.fromEntries(Object.keys(POLICIES_OF).map((c) => [c, status])), other: 403 });
const ANYONE = (status: number) => ({ other: status });
const PATCH = { 'Content-Type': 'application/merge-patch+json' };
const per = (prefix: string) => ({ caller, method }: { caller: Caller; method: string }) => `${prefix}-${caller}-${method.toLowerCase()}`;

// Issue 28 item 3 (help and OpenAPI): the whole-API document answers without a token (the
// auth methods listed unauth) and any valid token (the mounts it reaches), no capability
// on the path itself; a token that is not valid is refused. Help on sys/health (a raw
// handler) needs some capability on sys/health like any help.
const HELP_ROWS: AccessRow<Caller>[] = [
  { route: 'GET,HEAD /v1/sys/internal/specs/openapi', expect: { unknown: 403, expired: 403, revoked: 403, exhausted: 403, other: 200 }, note: 'unauthenticated, filtered by the token' },
  { route: 'GET,HEAD /v1/sys/health', path: '/v1/sys/health?help=1', expect: ADMINS(200), note: 'help on a raw handler needs some capability on it' },
];

const ROWS: AccessRow<Caller>[] = [
  ...HELP_ROWS,
  // sys-raw: no token, answered the same to everyone (reference §4: work while sealed).
  { route: 'GET,HEAD /v1/sys/init', expect: ANYONE(200) },
  { route: 'PUT,POST /v1/sys/init', body: { secret_shares: 1, secret_threshold: 1 }, expect: ANYONE(400), note: 'already initialized' },
  { route: 'GET,HEAD /v1/sys/seal-status', expect: ANYONE(200) },
  { route: 'PUT,POST /v1/sys/unseal', body: () => ({ key: unsealKey }), expect: ANYONE(200), note: 'a key on an unsealed server is a no-op' },
  { route: 'GET,HEAD /v1/sys/health', expect: ANYONE(200) },
  { route: 'GET,HEAD /v1/sys/leader', expect: ANYONE(200) },

  // sys: the policy path is sys/<route>; only seal needs sudo.
  { route: 'GET,HEAD /v1/sys/mounts', expect: ADMINS(200) },
  { route: 'GET /v1/sys/mounts', path: '/v1/sys/mounts?help=1', expect: ADMINS(200), note: 'help needs some capability on the path' },
  { route: 'GET,HEAD /v1/sys/mounts/:path/tune', path: '/v1/sys/mounts/tunable/tune', expect: ADMINS(200) },
  { route: 'PUT,POST /v1/sys/mounts/:path/tune', path: '/v1/sys/mounts/tunable/tune', body: { description: 'tuned' }, expect: ADMINS(204) },
  { route: 'GET,HEAD /v1/sys/mounts/*path', path: '/v1/sys/mounts/secret', expect: ADMINS(200) },
  { route: 'PUT,POST /v1/sys/mounts/*path', path: (c) => `/v1/sys/mounts/${per('m')(c)}`, body: { type: 'kv' }, expect: ADMINS(204) },
  {
    route: 'DELETE /v1/sys/mounts/*path',
    path: (c) => `/v1/sys/mounts/${per('d')(c)}`,
    setup: forAllowed(async (c) => void (await ok(api('post', `/v1/sys/mounts/${per('d')(c)}`, { type: 'kv' }), 'mount to disable'))),
    expect: ADMINS(204),
  },
  { route: 'GET,HEAD /v1/sys/auth', expect: ADMINS(200) },
  // Every sys/auth/<path> route and sys/config/cors is root-protected (sudo), as in Vault.
  { route: 'GET,HEAD /v1/sys/auth/:path/tune', path: '/v1/sys/auth/tunable-auth/tune', expect: SUDO(200) },
  { route: 'PUT,POST /v1/sys/auth/:path/tune', path: '/v1/sys/auth/tunable-auth/tune', body: { description: 'tuned' }, expect: SUDO(204) },
  { route: 'GET,HEAD /v1/sys/auth/*path', path: '/v1/sys/auth/userpass', expect: SUDO(200) },
  { route: 'PUT,POST /v1/sys/auth/*path', path: (c) => `/v1/sys/auth/${per('a')(c)}`, body: { type: 'userpass' }, expect: SUDO(204) },
  {
    route: 'DELETE /v1/sys/auth/*path',
    path: (c) => `/v1/sys/auth/${per('da')(c)}`,
    setup: forAllowed(async (c) => void (await ok(api('post', `/v1/sys/auth/${per('da')(c)}`, { type: 'approle' }), 'auth method to disable'))),
    expect: SUDO(204),
  },
  { route: 'GET,HEAD /v1/sys/config/cors', expect: SUDO(200) },
  { route: 'PUT,POST /v1/sys/config/cors', body: { allowed_origins: ['https://console.example'] }, expect: SUDO(204) },
  { route: 'DELETE /v1/sys/config/cors', expect: SUDO(204), note: 'disables CORS; the next PUT enables it again' },
  { route: 'GET,HEAD,LIST /v1/sys/policy', expect: ADMINS(200) },
  { route: 'GET,HEAD /v1/sys/policy/:name', path: '/v1/sys/policy/team', expect: ADMINS(200) },
  { route: 'PUT,POST /v1/sys/policy/:name', path: (c) => `/v1/sys/policy/${per('p')(c)}`, body: { policy: 'path "x" { capabilities = ["read"] }' }, expect: ADMINS(204) },
  {
    route: 'DELETE /v1/sys/policy/:name',
    path: (c) => `/v1/sys/policy/${per('dp')(c)}`,
    setup: forAllowed(async (c) => void (await ok(api('put', `/v1/sys/policy/${per('dp')(c)}`, { policy: 'path "x" { capabilities = ["read"] }' }), 'policy to delete'))),
    expect: ADMINS(204),
  },
  { route: 'LIST /v1/sys/policies/acl', expect: ADMINS(200) },
  { route: 'GET,HEAD /v1/sys/policies/acl/:name', path: '/v1/sys/policies/acl/team', expect: ADMINS(200) },
  { route: 'PUT,POST /v1/sys/policies/acl/:name', path: (c) => `/v1/sys/policies/acl/${per('pa')(c)}`, body: { policy: 'path "x" { capabilities = ["read"] }' }, expect: ADMINS(204) },
  {
    route: 'DELETE /v1/sys/policies/acl/:name',
    path: (c) => `/v1/sys/policies/acl/${per('dpa')(c)}`,
    setup: forAllowed(async (c) => void (await ok(api('put', `/v1/sys/policies/acl/${per('dpa')(c)}`, { policy: 'path "x" { capabilities = ["read"] }' }), 'policy to delete'))),
    expect: ADMINS(204),
  },
  { route: 'PUT,POST /v1/sys/capabilities-self', body: { paths: ['secret/data/team/a'] }, expect: VALID(200), note: 'the default policy grants it' },
  { route: 'PUT,POST /v1/sys/seal', serial: true, expect: SUDO(204), note: 'root or sudo on sys/seal (reference §4.4)' },
  // Issue 33 item 1: a mount is shown only to callers with some capability on or under it.
  { route: 'GET,HEAD /v1/sys/internal/ui/mounts/*path', path: '/v1/sys/internal/ui/mounts', expect: VALID(200), note: 'the listing form, filtered' },
  {
    route: 'GET,HEAD /v1/sys/internal/ui/mounts/*path',
    path: '/v1/sys/internal/ui/mounts/secret',
    expect: { deny: 200, glob: 200, plus: 200, exact: 200, lister: 200, createonly: 200, root: 200, other: 403 },
  },
  {
    route: 'GET,HEAD /v1/sys/internal/ui/mounts/*path',
    path: '/v1/sys/internal/ui/mounts/kv1/team/a',
    expect: { deny: 200, glob: 200, lister: 200, createonly: 200, root: 200, other: 403 },
  },

  // auth/token: ACL on auth/token/<route>; accessors and revoke-orphan need sudo.
  { route: 'PUT,POST /v1/auth/token/create', body: { policies: ['default'], ttl: '1h' }, expect: ADMINS(200) },
  { route: 'PUT,POST /v1/auth/token/create-orphan', body: { policies: ['default'], ttl: '1h' }, expect: ADMINS(200) },
  { route: 'PUT,POST /v1/auth/token/lookup', body: { token: 'hvs.no-such-token' }, setup: forAllowed(async () => ({ body: { token: (await victim()).client_token } })), expect: ADMINS(200) },
  { route: 'GET,HEAD /v1/auth/token/lookup-self', expect: VALID(200), note: 'default policy: read' },
  {
    route: 'PUT,POST /v1/auth/token/lookup-self',
    expect: { root: 200, other: 403 },
    note: "an update; the default policy's exact rule (read) beats the admins' auth/token/* glob",
  },
  { route: 'PUT,POST /v1/auth/token/lookup-accessor', body: { accessor: 'no-such-accessor' }, setup: forAllowed(async () => ({ body: { accessor: (await victim()).accessor } })), expect: ADMINS(200) },
  { route: 'PUT,POST /v1/auth/token/renew', body: { token: 'hvs.no-such-token' }, setup: forAllowed(async () => ({ body: { token: (await victim()).client_token } })), expect: ADMINS(200) },
  { route: 'PUT,POST /v1/auth/token/renew-self', body: { increment: '1h' }, expect: { ...VALID(200), root: 400 }, note: 'the root token does not expire: not renewable' },
  { route: 'PUT,POST /v1/auth/token/renew-accessor', body: { accessor: 'no-such-accessor' }, setup: forAllowed(async () => ({ body: { accessor: (await victim()).accessor } })), expect: ADMINS(200) },
  { route: 'PUT,POST /v1/auth/token/revoke', body: { token: 'hvs.no-such-token' }, setup: forAllowed(async () => ({ body: { token: (await victim()).client_token } })), expect: ADMINS(204) },
  { route: 'PUT,POST /v1/auth/token/revoke-self', setup: ownToken, expect: VALID(204), note: 'each cell revokes a token of its own' },
  { route: 'PUT,POST /v1/auth/token/revoke-accessor', body: { accessor: 'no-such-accessor' }, setup: forAllowed(async () => ({ body: { accessor: (await victim()).accessor } })), expect: ADMINS(204) },
  { route: 'LIST /v1/auth/token/accessors', expect: SUDO(200), note: 'sudo (reference §5.3)' },
  { route: 'PUT,POST /v1/auth/token/revoke-orphan', body: { token: 'hvs.no-such-token' }, setup: forAllowed(async () => ({ body: { token: (await victim()).client_token } })), expect: SUDO(204) },

  // Auth methods: ACL on auth/<mount>/<route>; only root holds a grant there. Logins need no
  // token (Vault's unauthenticated paths): every caller gets the same answer.
  { route: 'LIST /v1/auth/:mount/users', path: '/v1/auth/userpass/users', expect: { root: 200, other: 403 } },
  { route: 'GET,HEAD /v1/auth/:mount/users/:username', path: '/v1/auth/userpass/users/alice', expect: { root: 200, other: 403 } },
  { route: 'PUT,POST /v1/auth/:mount/users/:username', path: (c) => `/v1/auth/userpass/users/${per('u')(c)}`, body: { password: PASSWORD }, expect: { root: 204, other: 403 } },
  {
    route: 'DELETE /v1/auth/:mount/users/:username',
    path: (c) => `/v1/auth/userpass/users/${per('du')(c)}`,
    setup: forAllowed(async (c) => void (await ok(api('post', `/v1/auth/userpass/users/${per('du')(c)}`, { password: PASSWORD }), 'user to delete'))),
    expect: { root: 204, other: 403 },
  },
  { route: 'PUT,POST /v1/auth/:mount/users/:username/password', path: '/v1/auth/userpass/users/bob/password', body: { password: PASSWORD }, expect: { root: 204, other: 403 } },
  { route: 'PUT,POST /v1/auth/:mount/users/:username/policies', path: '/v1/auth/userpass/users/bob/policies', body: { policies: 'default' }, expect: { root: 204, other: 403 } },
  { route: 'PUT,POST /v1/auth/:mount/login/:username', path: '/v1/auth/userpass/login/alice', body: { password: PASSWORD }, expect: ANYONE(200) },
  { route: 'PUT,POST /v1/auth/:mount/login/:username', path: '/v1/auth/userpass/login/alice', body: { password: 'wrong' }, expect: ANYONE(400), note: 'a wrong password, whoever asks' },
  { route: 'LIST /v1/auth/:mount/role', path: '/v1/auth/approle/role', expect: { root: 200, other: 403 } },
  { route: 'GET,HEAD /v1/auth/:mount/role/:role_name', path: '/v1/auth/approle/role/login', expect: { root: 200, other: 403 } },
  { route: 'PUT,POST /v1/auth/:mount/role/:role_name', path: '/v1/auth/approle/role/other', body: { token_policies: ['default'] }, expect: { root: 204, other: 403 } },
  {
    route: 'DELETE /v1/auth/:mount/role/:role_name',
    path: (c) => `/v1/auth/approle/role/${per('dr')(c)}`,
    setup: forAllowed(async (c) => void (await ok(api('post', `/v1/auth/approle/role/${per('dr')(c)}`, {}), 'role to delete'))),
    expect: { root: 204, other: 403 },
  },
  { route: 'GET,HEAD /v1/auth/:mount/role/:role_name/role-id', path: '/v1/auth/approle/role/login/role-id', expect: { root: 200, other: 403 } },
  { route: 'PUT,POST /v1/auth/:mount/role/:role_name/role-id', path: '/v1/auth/approle/role/other/role-id', body: (c) => ({ role_id: per('rid')(c) }), expect: { root: 204, other: 403 } },
  { route: 'LIST /v1/auth/:mount/role/:role_name/secret-id', path: '/v1/auth/approle/role/login/secret-id', expect: { root: 200, other: 403 } },
  { route: 'PUT,POST /v1/auth/:mount/role/:role_name/secret-id', path: '/v1/auth/approle/role/other/secret-id', body: {}, expect: { root: 200, other: 403 } },
  { route: 'PUT,POST /v1/auth/:mount/role/:role_name/custom-secret-id', path: '/v1/auth/approle/role/other/custom-secret-id', body: (c) => ({ secret_id: per('sid')(c) }), expect: { root: 200, other: 403 } },
  { route: 'PUT,POST /v1/auth/:mount/role/:role_name/secret-id/lookup', path: '/v1/auth/approle/role/login/secret-id/lookup', body: () => ({ secret_id: appSecretId }), expect: { root: 200, other: 403 } },
  {
    route: 'PUT,POST /v1/auth/:mount/role/:role_name/secret-id/destroy',
    path: '/v1/auth/approle/role/login/secret-id/destroy',
    body: { secret_id: 'no-such-secret-id' },
    setup: forAllowed(async () => ({ body: { secret_id: (await secretId()).secret_id } })),
    expect: { root: 204, other: 403 },
  },
  {
    route: 'DELETE /v1/auth/:mount/role/:role_name/secret-id/destroy',
    path: '/v1/auth/approle/role/login/secret-id/destroy?secret_id=no-such-secret-id',
    setup: forAllowed(async () => ({ path: `/v1/auth/approle/role/login/secret-id/destroy?secret_id=${(await secretId()).secret_id}` })),
    expect: { root: 204, other: 403 },
    note: 'a DELETE takes its parameters from the query string, as in Vault',
  },
  {
    route: 'PUT,POST /v1/auth/:mount/role/:role_name/secret-id-accessor/lookup',
    path: '/v1/auth/approle/role/login/secret-id-accessor/lookup',
    body: { secret_id_accessor: 'no-such-accessor' },
    setup: forAllowed(async () => ({ body: { secret_id_accessor: (await secretId()).secret_id_accessor } })),
    expect: { root: 200, other: 403 },
  },
  {
    route: 'PUT,POST /v1/auth/:mount/role/:role_name/secret-id-accessor/destroy',
    path: '/v1/auth/approle/role/login/secret-id-accessor/destroy',
    body: { secret_id_accessor: 'no-such-accessor' },
    setup: forAllowed(async () => ({ body: { secret_id_accessor: (await secretId()).secret_id_accessor } })),
    expect: { root: 204, other: 403 },
  },
  {
    route: 'DELETE /v1/auth/:mount/role/:role_name/secret-id-accessor/destroy',
    path: '/v1/auth/approle/role/login/secret-id-accessor/destroy?secret_id_accessor=no-such-accessor',
    setup: forAllowed(async () => ({ path: `/v1/auth/approle/role/login/secret-id-accessor/destroy?secret_id_accessor=${(await secretId()).secret_id_accessor}` })),
    expect: { root: 204, other: 403 },
  },
  { route: 'PUT,POST /v1/auth/:mount/tidy/secret-id', path: '/v1/auth/approle/tidy/secret-id', expect: { root: 200, other: 403 } },
  { route: 'PUT,POST /v1/auth/:mount/login', path: '/v1/auth/approle/login', body: () => ({ role_id: appRoleId, secret_id: appSecretId }), expect: ANYONE(200) },
  { route: 'PUT,POST /v1/auth/:mount/login', path: '/v1/auth/approle/login', body: () => ({ role_id: appRoleId, secret_id: 'wrong' }), expect: ANYONE(400), note: 'a wrong secret ID, whoever asks' },

  // KV v1 at kv1/: the policy path is kv1/<key>; PUT/POST is create or update by existence.
  { route: 'kv-v1 GET,HEAD /v1/:mount/*path', path: '/v1/kv1/team/a', expect: { glob: 200, root: 200, other: 403 } },
  { route: 'kv-v1 GET,HEAD /v1/:mount/*path', path: '/v1/kv1/other/a', expect: { deny: 200, root: 200, other: 403 }, note: 'outside the denied team/' },
  { route: 'kv-v1 LIST /v1/:mount/*path', path: '/v1/kv1/team/', expect: { glob: 200, lister: 200, root: 200, other: 403 } },
  { route: 'kv-v1 PUT,POST /v1/:mount/*path', path: (c) => `/v1/kv1/team/${per('new')(c)}`, body: { v: 1 }, expect: { glob: 204, createonly: 204, root: 204, other: 403 }, note: 'create' },
  { route: 'kv-v1 PUT,POST /v1/:mount/*path', path: '/v1/kv1/team/a', body: { v: 'team/a' }, expect: { glob: 204, root: 204, other: 403 }, note: 'update: create alone is not enough' },
  {
    route: 'kv-v1 DELETE /v1/:mount/*path',
    path: (c) => `/v1/kv1/team/${per('del')(c)}`,
    setup: forAllowed(async (c) => void (await ok(api('post', `/v1/kv1/team/${per('del')(c)}`, { v: 1 }), 'key to delete'))),
    expect: { glob: 204, root: 204, other: 403 },
  },

  // KV v2 at secret/: the policy path includes data/, metadata/, ... (reference §6).
  { route: 'kv-v2 GET,HEAD /v1/:mount/config', path: '/v1/secret/config', expect: { deny: 200, root: 200, other: 403 } },
  { route: 'kv-v2 PUT,POST /v1/:mount/config', path: '/v1/secret/config', body: { cas_required: false }, expect: { deny: 204, root: 204, other: 403 } },
  { route: 'kv-v2 GET,HEAD /v1/:mount/data/*path', path: '/v1/secret/data/team/a', expect: { glob: 200, root: 200, other: 403 } },
  { route: 'kv-v2 GET /v1/:mount/data/*path', path: '/v1/secret/data/team/a?help=1', expect: { glob: 200, createonly: 200, root: 200, other: 403 }, note: 'help needs some capability on the path' },
  { route: 'kv-v2 GET,HEAD /v1/:mount/data/*path', path: '/v1/secret/data/team/locked', expect: { root: 200, other: 403 }, note: 'an exact deny beats the team/* glob' },
  { route: 'kv-v2 GET,HEAD /v1/:mount/data/*path', path: '/v1/secret/data/team/shared', expect: { glob: 200, plus: 200, root: 200, other: 403 } },
  { route: 'kv-v2 GET,HEAD /v1/:mount/data/*path', path: '/v1/secret/data/other/shared', expect: { deny: 200, plus: 200, root: 200, other: 403 } },
  { route: 'kv-v2 GET,HEAD /v1/:mount/data/*path', path: '/v1/secret/data/x/y/shared', expect: { deny: 200, root: 200, other: 403 }, note: '+ is exactly one segment' },
  { route: 'kv-v2 GET,HEAD /v1/:mount/data/*path', path: '/v1/secret/data/team/exact', expect: { glob: 200, exact: 200, root: 200, other: 403 } },
  { route: 'kv-v2 GET,HEAD /v1/:mount/data/*path', path: '/v1/secret/data/team/exact/sub', expect: { glob: 404, root: 404, other: 403 }, note: 'an exact path covers nothing below it' },
  {
    route: 'kv-v2 PUT,POST /v1/:mount/data/*path',
    path: (c) => `/v1/secret/data/team/${per('new')(c)}`,
    body: { data: { v: 1 } },
    expect: { glob: 200, createonly: 200, root: 200, other: 403 },
    note: 'create',
  },
  { route: 'kv-v2 PUT,POST /v1/:mount/data/*path', path: '/v1/secret/data/team/a', body: { data: { v: 'team/a' } }, expect: { glob: 200, root: 200, other: 403 }, note: 'update' },
  { route: 'kv-v2 PATCH /v1/:mount/data/*path', path: '/v1/secret/data/team/a', headers: PATCH, body: { data: { v: 'team/a' } }, expect: { glob: 200, root: 200, other: 403 } },
  {
    route: 'kv-v2 DELETE /v1/:mount/data/*path',
    path: (c) => `/v1/secret/data/team/${per('del')(c)}`,
    setup: forAllowed(async (c) => void (await ok(api('post', `/v1/secret/data/team/${per('del')(c)}`, { data: { v: 1 } }), 'key to delete'))),
    expect: { glob: 204, root: 204, other: 403 },
  },
  // Policies name paths, not secrets: denying data/ and metadata/ leaves delete/, undelete/,
  // destroy/ and subkeys/ to the deny caller's secret/* grant.
  { route: 'kv-v2 PUT,POST /v1/:mount/delete/*path', path: '/v1/secret/delete/team/vers', body: { versions: [1] }, expect: { glob: 204, deny: 204, root: 204, other: 403 } },
  { route: 'kv-v2 PUT,POST /v1/:mount/undelete/*path', path: '/v1/secret/undelete/team/vers', body: { versions: [1] }, expect: { glob: 204, deny: 204, root: 204, other: 403 } },
  { route: 'kv-v2 PUT,POST /v1/:mount/destroy/*path', path: '/v1/secret/destroy/team/vers', body: { versions: [9] }, expect: { glob: 204, deny: 204, root: 204, other: 403 } },
  { route: 'kv-v2 GET,HEAD /v1/:mount/metadata/*path', path: '/v1/secret/metadata/team/a', expect: { glob: 200, root: 200, other: 403 } },
  { route: 'kv-v2 LIST /v1/:mount/metadata/*path', path: '/v1/secret/metadata/team/', expect: { glob: 200, lister: 200, root: 200, other: 403 }, note: 'list, not read' },
  { route: 'kv-v2 LIST /v1/:mount/metadata/*path', path: '/v1/secret/metadata/', expect: { deny: 200, root: 200, other: 403 } },
  { route: 'kv-v2 PUT,POST /v1/:mount/metadata/*path', path: '/v1/secret/metadata/team/a', body: { max_versions: 20 }, expect: { glob: 204, root: 204, other: 403 } },
  { route: 'kv-v2 PATCH /v1/:mount/metadata/*path', path: '/v1/secret/metadata/team/a', headers: PATCH, body: { max_versions: 20 }, expect: { glob: 204, root: 204, other: 403 } },
  {
    route: 'kv-v2 DELETE /v1/:mount/metadata/*path',
    path: (c) => `/v1/secret/metadata/team/${per('mdel')(c)}`,
    setup: forAllowed(async (c) => void (await ok(api('post', `/v1/secret/data/team/${per('mdel')(c)}`, { data: { v: 1 } }), 'key to delete'))),
    expect: { glob: 204, root: 204, other: 403 },
  },
  { route: 'kv-v2 GET,HEAD /v1/:mount/subkeys/*path', path: '/v1/secret/subkeys/team/a', expect: { glob: 200, deny: 200, root: 200, other: 403 }, note: 'see delete/ above' },
  // Any other path of a v2 mount: 404 with a warning, once the ACL on it lets the caller in.
  {
    route: 'kv-v2 GET,HEAD,LIST,PUT,POST,PATCH,DELETE /v1/:mount/*path',
    path: '/v1/secret/team/a',
    headers: ({ method }) => (method === 'PATCH' ? PATCH : {}),
    body: ({ method }) => (['PUT', 'POST', 'PATCH'].includes(method) ? { v: 1 } : undefined),
    expect: { deny: 404, root: 404, other: 403 },
  },
];

/** Vault's `{"errors":[...]}`, or the KV v2 invalid-path 404 (reference §3.5). */
function vaultShape(res: SweepResponse): string | undefined {
  if (!String(res.headers['content-type'] ?? '').startsWith('application/json')) return `content-type ${String(res.headers['content-type'])}`;
  const body = JSON.parse(res.text) as { errors?: unknown; warnings?: unknown; data?: unknown };
  if (Array.isArray(body.errors) && body.errors.every((e) => typeof e === 'string')) return undefined;
  const w = body.warnings;
  if (res.status === 404 && Array.isArray(w) && (w[0] === INVALID_V2_PATH || w[0] === ROOT_V2_PATH) && body.data === null) return undefined;
  return 'no `errors` list';
}

/** A refused token says why, in Vault's words (reference §6, "403 bodies"). */
function refusalMessage(cell: { caller: Caller; method: string }, res: SweepResponse): string | undefined {
  if (res.status !== 403 || cell.method === 'HEAD') return undefined;
  const errors = (JSON.parse(res.text) as { errors: string[] }).errors;
  const want = BAD_TOKEN.has(cell.caller) ? [INVALID_TOKEN] : NO_TOKEN.has(cell.caller) ? ['permission denied'] : null;
  if (want && JSON.stringify(errors) !== JSON.stringify(want)) return `refusal ${JSON.stringify(errors)}, want ${JSON.stringify(want)}`;
  if (!want && errors[0] !== MULTI_DENIED && !errors[0]?.startsWith('preflight capability check returned 403')) return `denial ${JSON.stringify(errors)}`;
  return undefined;
}

/** sys (raw and logical), auth/token, the other auth methods, and the KV mounts. */
const groupOf = (pattern: string): string =>
  pattern.startsWith('/v1/sys') ? 'sys' : pattern.startsWith('/v1/auth/token') ? 'auth/token' : pattern.startsWith('/v1/auth/') ? 'auth methods' : 'kv';

// Namespaces (issue 28, item 1): sys/namespaces is an ordinary sys path (policy path
// sys/namespaces/<path>), relative to the request's namespace (the root one here).
let namespaceReady: Promise<unknown> | undefined;
const withNamespace = async () => void (await (namespaceReady ??= ok(api('post', '/v1/sys/namespaces/matrix-ns', {}), 'namespace for reads')));
const NAMESPACE_ROWS: AccessRow<Caller>[] = [
  { route: 'GET,HEAD,LIST /v1/sys/namespaces', setup: withNamespace, expect: ADMINS(200) },
  { route: 'GET,HEAD /v1/sys/namespaces/*path', path: '/v1/sys/namespaces/matrix-ns', setup: withNamespace, expect: ADMINS(200) },
  { route: 'LIST /v1/sys/namespaces/*path', path: '/v1/sys/namespaces/', setup: withNamespace, expect: ADMINS(200), note: 'the trailing-slash form of the list' },
  { route: 'PUT,POST /v1/sys/namespaces/*path', path: (c) => `/v1/sys/namespaces/${per('ns')(c)}`, body: { custom_metadata: { team: 'a' } }, expect: ADMINS(200) },
  { route: 'PATCH /v1/sys/namespaces/*path', path: '/v1/sys/namespaces/matrix-ns', setup: withNamespace, headers: PATCH, body: { custom_metadata: { team: 'b' } }, expect: { root: 200, other: 403 }, note: 'the patch capability: the admins\' policies do not grant it' },
  {
    route: 'DELETE /v1/sys/namespaces/*path',
    path: (c) => `/v1/sys/namespaces/${per('nsd')(c)}`,
    setup: forAllowed(async (c) => void (await ok(api('post', `/v1/sys/namespaces/${per('nsd')(c)}`, {}), 'namespace to delete'))),
    expect: ADMINS(204),
  },
];
ROWS.push(...NAMESPACE_ROWS);

describe('secrets access matrix', () => {
  const matrix = (): AccessMatrix<Caller> => ({ routes: sweepRoutes(h.app), callers: CALLERS, rows: ROWS });

  it('has a row for every declared route and method, and an expectation for every caller', () => {
    expect(matrixProblems(matrix())).toEqual([]);
  });

  it.each(groupRows(ROWS, groupOf))('answers every caller as the table says: %s routes', async (group, rows) => {
    const result = await runAccessMatrix(
      { ...matrix(), rows },
      {
        baseUrl: server.url,
        auth: headersOf,
        denialShape: vaultShape,
        check: refusalMessage,
        heal: async () => {
          if (h.services.barrier.isSealed()) await ok(request(h.app).put('/v1/sys/unseal').send({ key: unsealKey }), 'unseal');
        },
      },
    );
    console.log(`secrets access matrix, ${group} routes: ${result.cells} cells, statuses ${JSON.stringify(result.statuses)}`);
    expect(result.failures).toEqual([]);
  });
});
