// Issue 28, item 3: `?help=1` on every path, sys/* included, only for callers with some
// capability on the path (spec "Help response", reference §7), OpenAPI paths relative to
// the queried path; `GET /v1/sys/internal/specs/openapi` for the whole API. The documents
// come from the route tables: the snapshots below are what clients generate code from.
import request from 'supertest';
import { initAndUnseal, INVALID_TOKEN, MULTI_DENIED, startHarness, type Harness } from './harness';

type Help = { help: string; openapi: { openapi: string; info: { title: string }; paths: Record<string, Record<string, unknown>> }; see_also: null };

let h: Harness;
let root = '';
let unsealKey = '';
const as = (t: string) => ({ 'X-Vault-Token': t });
const tokens = { deny: '', lister: '', team: '', plain: '' };

async function token(policies: string[]): Promise<string> {
  const r = await request(h.app).post('/v1/auth/token/create').set(as(root)).send({ policies });
  expect(r.status).toBe(200);
  return (r.body as { auth: { client_token: string } }).auth.client_token;
}

beforeAll(async () => {
  h = await startHarness();
  const init = await initAndUnseal(h.app);
  root = init.rootToken;
  unsealKey = init.keys[0] as string;
  const policies: Record<string, string> = {
    // Everything under sys/ and secret/ but the paths below denied.
    'deny-some': [
      'path "sys/*" { capabilities = ["read", "list", "update"] }',
      'path "sys/health" { capabilities = ["deny"] }',
      'path "sys/mounts" { capabilities = ["deny"] }',
      'path "sys/nothing" { capabilities = ["deny"] }',
      'path "secret/*" { capabilities = ["read", "list"] }',
      'path "secret/data/locked" { capabilities = ["deny"] }',
      'path "auth/token/create" { capabilities = ["deny"] }',
    ].join('\n'),
    lister: 'path "secret/metadata/team/" { capabilities = ["list"] }',
    team: 'path "secret/data/team/*" { capabilities = ["read"] }',
  };
  for (const [name, policy] of Object.entries(policies)) {
    expect((await request(h.app).put(`/v1/sys/policies/acl/${name}`).set(as(root)).send({ policy })).status).toBe(204);
  }
  tokens.deny = await token(['deny-some']);
  tokens.lister = await token(['lister']);
  tokens.team = await token(['team']);
  tokens.plain = await token(['default']);
  expect((await request(h.app).post('/v1/sys/mounts/kv1').set(as(root)).send({ type: 'kv', options: { version: '1' } })).status).toBe(204);
  expect((await request(h.app).post('/v1/sys/auth/userpass').set(as(root)).send({ type: 'userpass' })).status).toBe(204);
  expect((await request(h.app).post('/v1/sys/auth/machines').set(as(root)).send({ type: 'approle' })).status).toBe(204);
  expect((await request(h.app).post('/v1/sys/auth/machines/tune').set(as(root)).send({ listing_visibility: 'unauth' })).status).toBe(204);
});
afterAll(async () => {
  await h.close();
});

/**
 * What OpenAPI 3 requires of paths and that a hand-written document easily gets wrong:
 * every `{name}` in a key is a declared, required path parameter and no other path
 * parameter is declared; operationIds are unique.
 */
function openApiProblems(doc: { paths: Record<string, Record<string, unknown>> }): string[] {
  const problems: string[] = [];
  const ids = new Set<string>();
  for (const [key, item] of Object.entries(doc.paths)) {
    const inKey = [...key.matchAll(/\{([^}]+)\}/g)].map((m) => m[1] as string).sort();
    const params = ((item.parameters ?? []) as { name: string; in: string; required?: boolean }[]).filter((p) => p.in === 'path');
    const declared = params.map((p) => p.name).sort();
    if (JSON.stringify(inKey) !== JSON.stringify(declared)) problems.push(`${key}: path parameters ${JSON.stringify(declared)}`);
    for (const p of params) if (p.required !== true) problems.push(`${key}: ${p.name} not required`);
    for (const method of ['get', 'post', 'patch', 'delete']) {
      const op = item[method] as { operationId?: string } | undefined;
      if (!op) continue;
      if (!op.operationId || ids.has(op.operationId)) problems.push(`${key} ${method}: operationId ${String(op.operationId)}`);
      ids.add(op.operationId ?? '');
    }
  }
  return problems;
}

/** A help answer: Vault's raw shape, JSON, not cached. */
function expectHelp(r: request.Response): Help {
  expect(r.status).toBe(200);
  expect(r.headers['content-type']).toBe('application/json');
  expect(r.headers['cache-control']).toBe('no-store');
  const body = r.body as Help;
  expect(Object.keys(body).sort()).toEqual(['help', 'openapi', 'see_also']);
  expect(body.see_also).toBeNull();
  expect(body.openapi.openapi).toBe('3.0.2');
  expect(body.openapi.info.title).toBe('Secrets Service API');
  expect(openApiProblems(body.openapi)).toEqual([]);
  return body;
}

describe('help on every path', () => {
  it('sys/health?help=1 is help, not the health body', async () => {
    const body = expectHelp(await request(h.app).get('/v1/sys/health?help=1').set(as(root)));
    expect(body.help).toMatch(/^Request:        health\nMatching Route: \^health\/\?\$\n/);
    expect(body.help).toContain('    standbyok (bool)');
    expect(Object.keys(body.openapi.paths)).toEqual(['/']);
    expect(body.openapi.paths['/']).toMatchObject({ 'x-vault-unauthenticated': true, get: { operationId: 'read-health', tags: ['system'] } });
    // Without help the raw handler answers as before.
    const health = await request(h.app).get('/v1/sys/health');
    expect(health.status).toBe(200);
    expect(health.body).toMatchObject({ initialized: true, sealed: false });
  });

  it('every raw sys handler has help (init, seal-status, unseal, leader)', async () => {
    for (const path of ['init', 'seal-status', 'unseal', 'leader']) {
      const body = expectHelp(await request(h.app).get(`/v1/sys/${path}?help=1`).set(as(root)));
      expect(body.help.split('\n')[0]).toBe(`Request:        ${path}`);
    }
    // unseal is a write: help answers it without unsealing anything or reading the body.
    expectHelp(await request(h.app).put('/v1/sys/unseal?help=1').set(as(root)).send({ key: 'not-a-key' }));
  });

  it('sys/ root help lists the raw handlers with the logical ones', async () => {
    const body = expectHelp(await request(h.app).get('/v1/sys?help=1').set(as(root)));
    expect(body.help).toMatch(/^## DESCRIPTION\n\nThe system backend is built in/);
    expect(body.help).toContain('    ^health/?$\n');
    expect(body.help).toContain('    ^mounts/?$\n');
    expect(Object.keys(body.openapi.paths)).toEqual(expect.arrayContaining(['/health', '/seal-status', '/mounts', '/mounts/{path}', '/policy/{name}', '/auth/{path}', '/internal/specs/openapi']));
  });

  it('paths are relative to the queried path; parameters the query fixes are left out', async () => {
    let body = expectHelp(await request(h.app).get('/v1/sys/mounts/secret?help=1').set(as(root)));
    expect(Object.keys(body.openapi.paths).sort()).toEqual(['/', '/tune']);
    expect(body.openapi.paths['/']?.parameters).toBeUndefined();
    body = expectHelp(await request(h.app).get('/v1/sys/policy?help=1').set(as(root)));
    expect(Object.keys(body.openapi.paths)).toEqual(['/', '/{name}']);
    body = expectHelp(await request(h.app).get('/v1/secret/metadata/?help=1').set(as(root)));
    expect(Object.keys(body.openapi.paths)).toEqual(['/{path}']);
    // The mount root: relative to the mount, as the reference's example.
    body = expectHelp(await request(h.app).get('/v1/secret?help=1').set(as(root)));
    expect(body.help).toMatch(/^## DESCRIPTION\n\nThis backend provides a versioned key-value store\./);
    expect(Object.keys(body.openapi.paths)).toEqual(['/config', '/data/{path}', '/delete/{path}', '/undelete/{path}', '/destroy/{path}', '/metadata/{path}', '/subkeys/{path}', '/{path}']);
    body = expectHelp(await request(h.app).get('/v1/auth/userpass/users/bob?help=1').set(as(root)));
    expect(Object.keys(body.openapi.paths)).toEqual(['/', '/password', '/policies']);
    body = expectHelp(await request(h.app).get('/v1/auth/machines?help=1').set(as(root)));
    expect(body.help).toMatch(/^## DESCRIPTION\n\nThe AppRole auth method/);
    expect(body.openapi.paths['/login']).toMatchObject({ 'x-vault-unauthenticated': true, post: { tags: ['auth'] } });
  });

  it('KV v1, auth/token and the unauthenticated login paths have help too', async () => {
    let body = expectHelp(await request(h.app).get('/v1/kv1/app/one?help=1').set(as(root)));
    expect(body.help).toMatch(/^Request:        app\/one\nMatching Route: \^\(\?P<path>\.\*\)\$/);
    body = expectHelp(await request(h.app).get('/v1/kv1?help=1').set(as(root)));
    expect(body.help).toMatch(/^## DESCRIPTION\n\nThis backend provides a key-value store\./);
    body = expectHelp(await request(h.app).get('/v1/auth/token?help=1').set(as(root)));
    expect(Object.keys(body.openapi.paths)).toContain('/create-orphan');
    body = expectHelp(await request(h.app).get('/v1/auth/userpass/login/bob?help=1').set(as(root)));
    expect(body.help.split('\n')[0]).toBe('Request:        login/bob');
  });

  it('any method with a true help value is help; nothing is written; ?help=0 is an ordinary request', async () => {
    for (const q of ['help=1', 'help=true', 'help=t']) expectHelp(await request(h.app).get(`/v1/secret/data/helped?${q}`).set(as(root)));
    expectHelp(await request(h.app).post('/v1/secret/data/helped?help=1').set(as(root)).send({ data: { a: 1 } }));
    expectHelp(await request(h.app).delete('/v1/secret/data/helped?help=1').set(as(root)));
    // A login asked for help does not log in (and needs a token like every help).
    expectHelp(await request(h.app).post('/v1/auth/userpass/login/bob?help=1').set(as(root)).send({ password: 'x' }));
    let r = await request(h.app).get('/v1/secret/data/helped').set(as(root));
    expect(r.status).toBe(404);
    r = await request(h.app).get('/v1/secret/data/helped?help=0').set(as(root));
    expect(r.status).toBe(404);
    expect(r.body).toEqual({ errors: [] });
    // HEAD: the same status and headers, no body.
    r = await request(h.app).head('/v1/sys/health?help=1').set(as(root));
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('application/json');
  });

  it('outside /v1/: 404 Missing /v1/ prefix (the root and the UI answer as before without help)', async () => {
    for (const path of ['/?help=1', '/ui/?help=1', '/sys/health?help=1']) {
      const r = await request(h.app).get(path).set(as(root));
      expect([path, r.status, r.body]).toEqual([path, 404, { errors: ['Missing /v1/ prefix in path. Use vault path-help command to retrieve API help for paths'] }]);
      expect(r.headers['content-type']).toMatch(/^application\/json/);
    }
    expect((await request(h.app).get('/')).status).toBe(307);
    expect((await request(h.app).get('/?help=0')).status).toBe(307);
  });
});

describe('who may read help', () => {
  it('a token whose capability on the path is deny gets 403', async () => {
    for (const path of ['/v1/sys/health?help=1', '/v1/sys/mounts?help=1', '/v1/secret/data/locked?help=1', '/v1/auth/token/create?help=1']) {
      const r = await request(h.app).get(path).set(as(tokens.deny));
      expect([path, r.status]).toEqual([path, 403]);
      expect(r.headers['content-type']).toBe('application/json');
      expect(r.body).toEqual({ errors: [MULTI_DENIED] });
    }
    // The same token has help where its policy gives some capability.
    expectHelp(await request(h.app).get('/v1/sys/seal-status?help=1').set(as(tokens.deny)));
    expectHelp(await request(h.app).get('/v1/secret/data/open?help=1').set(as(tokens.deny)));
  });

  it('some capability is enough (list alone); none is 403; no token or a bad token is refused', async () => {
    expectHelp(await request(h.app).get('/v1/secret/metadata/team/?help=1').set(as(tokens.lister)));
    let r = await request(h.app).get('/v1/secret/metadata/other/?help=1').set(as(tokens.lister));
    expect(r.status).toBe(403);
    expect(r.body).toEqual({ errors: [MULTI_DENIED] });
    expectHelp(await request(h.app).get('/v1/secret/data/team/a?help=1').set(as(tokens.team)));
    r = await request(h.app).get('/v1/sys/health?help=1').set(as(tokens.team));
    expect(r.status).toBe(403);
    r = await request(h.app).get('/v1/sys/health?help=1');
    expect(r.status).toBe(403);
    expect(r.body).toEqual({ errors: ['permission denied'] });
    r = await request(h.app).get('/v1/sys/health?help=1').set(as('hvs.AAAAAAAAAAAAAAAAAAAAAAAA'));
    expect(r.status).toBe(403);
    expect(r.body).toEqual({ errors: [INVALID_TOKEN] });
  });

  it('unknown paths: 404 in the error shape for a caller allowed there, 403 before it for one who is not', async () => {
    const cases: [string, string][] = [
      ['/v1/nomount/x?help=1', 'no handler for route "nomount/x". route entry not found.'],
      ['/v1/sys/nothing?help=1', '1 error occurred:\n\t* unsupported path\n\n'],
      ['/v1/auth/token/nothing?help=1', '1 error occurred:\n\t* unsupported path\n\n'],
      ['/v1/auth/userpass/nothing/here?help=1', '1 error occurred:\n\t* unsupported path\n\n'],
      ['/v1/auth/nomethod/login?help=1', 'no handler for route "auth/nomethod/login". route entry not found.'],
    ];
    for (const [path, message] of cases) {
      const r = await request(h.app).get(path).set(as(root));
      expect([path, r.status, r.body]).toEqual([path, 404, { errors: [message] }]);
      expect(r.headers['content-type']).toBe('application/json');
    }
    const r = await request(h.app).get('/v1/sys/nothing?help=1').set(as(tokens.deny));
    expect(r.status).toBe(403);
    expect((await request(h.app).get('/v1/nomount/x?help=1').set(as(tokens.deny))).status).toBe(403);
  });

  it('while sealed, help is the sealed error like any logical request', async () => {
    expect((await request(h.app).put('/v1/sys/seal').set(as(root))).status).toBe(204);
    try {
      const r = await request(h.app).get('/v1/sys/health?help=1').set(as(root));
      expect(r.status).toBe(503);
      expect(r.body).toEqual({ errors: ['Vault is sealed'] });
    } finally {
      expect((await request(h.app).put('/v1/sys/unseal').send({ key: unsealKey })).status).toBe(200);
    }
  });
});

describe('GET /v1/sys/internal/specs/openapi', () => {
  const spec = (query = '', t?: string) => {
    const r = request(h.app).get(`/v1/sys/internal/specs/openapi${query}`);
    return t ? r.set(as(t)) : r;
  };
  const pathsOf = (r: request.Response) => Object.keys((r.body as { paths: object }).paths);

  it('a raw OpenAPI 3.0.2 document (no envelope) of every mounted path, under /v1', async () => {
    const r = await spec('', root);
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('application/json');
    expect(r.headers['cache-control']).toBe('no-store');
    expect(Object.keys(r.body).sort()).toEqual(['components', 'info', 'openapi', 'paths']);
    expect(r.body.openapi).toBe('3.0.2');
    const paths = pathsOf(r);
    expect(paths).toEqual([...paths].sort());
    expect(paths).toEqual(
      expect.arrayContaining(['/sys/health', '/sys/mounts/{path}', '/secret/data/{path}', '/kv1/{path}', '/auth/token/create', '/auth/userpass/login/{username}', '/auth/machines/login']),
    );
    const item = r.body.paths['/secret/data/{path}'];
    expect(item.get).toMatchObject({ operationId: 'read-secret-data-path', tags: ['secrets'] });
    expect(r.body.paths['/sys/mounts'].get.tags).toEqual(['system']);
    expect(r.body.paths['/auth/token/create'].post.tags).toEqual(['auth']);
    expect(r.body.paths['/auth/userpass/login/{username}']['x-vault-unauthenticated']).toBe(true);
    expect(r.body.paths['/sys/seal']['x-vault-sudo']).toBe(true);
    expect(openApiProblems(r.body)).toEqual([]);
  });

  it('without a token: only the auth methods listed as unauthenticated', async () => {
    const r = await spec();
    expect(r.status).toBe(200);
    const paths = pathsOf(r);
    expect(paths.length).toBeGreaterThan(0);
    expect(paths.every((p) => p.startsWith('/auth/machines/'))).toBe(true);
    expect(paths).toContain('/auth/machines/login');
    // A token that is not valid is refused, not treated as none.
    const bad = await spec('', 'hvs.AAAAAAAAAAAAAAAAAAAAAAAA');
    expect(bad.status).toBe(403);
    expect(bad.body).toEqual({ errors: [INVALID_TOKEN] });
  });

  it('with a token: the mounts its policies reach (no capability on the path itself needed)', async () => {
    // team: its own policy reaches secret/, the default policy sys/ and auth/token/.
    const team = pathsOf(await spec('', tokens.team));
    expect(team).toEqual(expect.arrayContaining(['/secret/data/{path}', '/sys/capabilities-self', '/auth/token/lookup-self', '/auth/machines/login']));
    expect(team.some((p) => p.startsWith('/kv1/') || p.startsWith('/auth/userpass/'))).toBe(false);
    const plain = pathsOf(await spec('', tokens.plain));
    expect(plain).toEqual(expect.arrayContaining(['/sys/capabilities-self', '/auth/token/lookup-self']));
    expect(plain.some((p) => p.startsWith('/secret/'))).toBe(false);
  });

  it('generic_mount_paths names mounts by type, with the mount as the default', async () => {
    const r = await spec('?generic_mount_paths=true', root);
    expect(r.status).toBe(200);
    const paths = pathsOf(r);
    expect(paths).toEqual(expect.arrayContaining(['/sys/health', '/{kv_mount_path}/data/{path}', '/auth/{token_mount_path}/create', '/auth/{userpass_mount_path}/login/{username}']));
    expect(paths.some((p) => p.startsWith('/secret/'))).toBe(false);
    expect(r.body.paths['/auth/{userpass_mount_path}/login/{username}'].parameters[0]).toEqual({
      name: 'userpass_mount_path',
      description: 'Path that the backend was mounted at',
      in: 'path',
      required: true,
      schema: { type: 'string', default: 'userpass' },
    });
    expect(openApiProblems(r.body)).toEqual([]);
    const bad = await spec('?generic_mount_paths=maybe', root);
    expect(bad.status).toBe(400);
    expect(bad.body.errors).toHaveLength(1);
  });

  it('help on it is help', async () => {
    const body = expectHelp(await request(h.app).get('/v1/sys/internal/specs/openapi?help=1').set(as(tokens.plain)));
    expect(body.help).toContain('generic_mount_paths (bool)');
  });
});

describe('snapshots (what generated clients see)', () => {
  it('sys/internal/specs/openapi', async () => {
    expect((await spec()).body).toMatchSnapshot('unauthenticated');
    expect((await spec(root)).body).toMatchSnapshot('root');
    async function spec(t?: string) {
      const r = t ? await request(h.app).get('/v1/sys/internal/specs/openapi').set(as(t)) : await request(h.app).get('/v1/sys/internal/specs/openapi');
      expect(r.status).toBe(200);
      return r;
    }
  });

  it.each([
    ['KV v2 data', '/v1/secret/data/app/config'],
    ['KV v2 mount root', '/v1/secret'],
    ['sys/mounts', '/v1/sys/mounts'],
    ['auth/token/create', '/v1/auth/token/create'],
  ])('help on %s', async (_name, path) => {
    const body = expectHelp(await request(h.app).get(`${path}?help=1`).set(as(root)));
    expect(body.help).toMatchSnapshot('help');
    expect(body.openapi).toMatchSnapshot('openapi');
  });
});
