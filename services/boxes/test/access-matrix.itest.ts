// Who may call what (issue 33, item 2): every route x method of the two tables buildApp
// mounts (the API under /api/v1 and the root catalog/download table; sweepRoutes) has rows
// below giving the status each kind of caller gets; a route without a row fails the test.
// Rules (spec "Authentication" 1 and 5, "Errors"; features/accounts/access.ts): public
// boxes are read by anyone; private ones by their owner, the owning organization's members
// and owners, and admins, everybody else gets 404 as for a missing box; writes need a
// token (401), visibility (404) and ownership or membership (403); an owner delinquent on
// billing gets 402 on writes and private reads (admins are not held back); unreleased and
// revoked versions download only for those who manage the box.
import request from 'supertest';
import { checkJsonErrors, forAllowed, groupRows, matrixProblems, runAccessMatrix, startTestListener, sweepRoutes, type AccessExpectations, type AccessMatrix, type AccessRow, type TestListener } from '@selfstack/testing';
import { auth, createHarness, userWithToken, type Harness } from './harness';

const CALLERS = [
  'none', // no token
  'malformed', // `Authorization: Basic ...`: no token either
  'unknown', // a token that was never issued
  'alice', // owns alice/pub and alice/priv
  'mia', // member of organization acme (owns acme/priv)
  'olga', // owner of organization acme
  'eve', // a stranger
  'admin',
  'bob', // owns bob/pub and bob/priv, delinquent on billing
] as const;
type Caller = (typeof CALLERS)[number];

const TARGETS = ['alice/pub', 'alice/priv', 'acme/priv', 'bob/pub', 'bob/priv'] as const;
type Target = (typeof TARGETS)[number];
const MANAGERS: Record<Target, Caller[]> = { 'alice/pub': ['alice'], 'alice/priv': ['alice'], 'acme/priv': ['mia', 'olga'], 'bob/pub': ['bob'], 'bob/priv': ['bob'] };
const isPrivate = (t: Target) => t.endsWith('/priv');
const isDelinquent = (t: Target) => t.startsWith('bob/');
const ADMIN = 'site-admin'; // ("admin" is a reserved username)
const PLENTY = { limit: 1_000_000, windowMs: 60_000 };
const URL_BOX = 'https://boxes.example.com/file.box';

let h: Harness;
let server: TestListener;
const tokens = {} as Record<Caller, string>;
const callbacks = {} as Record<Target, string>;
let n = 0;
const next = () => ++n;

const as = (caller: Caller = 'admin') => auth(tokens[caller]);
async function ok(res: request.Test, what: string): Promise<request.Response> {
  const r = await res;
  if (r.status >= 300) throw new Error(`${what}: ${r.status} ${r.text}`);
  return r;
}
const api = () => request(h.app);
const boxPath = (t: string) => `/api/v1/box/${t}`;
const versionOf = async (t: string, version: string, status: 'unreleased' | 'active' | 'revoked', provider = 'virtualbox') => {
  await ok(api().post(`${boxPath(t)}/versions`).set(as()).send({ version: { version } }), `version ${t} ${version}`);
  await ok(api().post(`${boxPath(t)}/version/${version}/providers`).set(as()).send({ provider: { name: provider, url: URL_BOX } }), `provider ${t} ${version}`);
  if (status !== 'unreleased') await ok(api().put(`${boxPath(t)}/version/${version}/release`).set(as()), `release ${t} ${version}`);
  if (status === 'revoked') await ok(api().put(`${boxPath(t)}/version/${version}/revoke`).set(as()), `revoke ${t} ${version}`);
};

beforeAll(async () => {
  // Maintenance mode is not what this file tests: its flag is read once a minute, as a
  // deployment may (the harness reads it on every request).
  h = await createHarness({ maintenanceCheckMs: 60_000, rateLimits: { api: PLENTY, login: PLENTY, 'two-factor': PLENTY, upload: PLENTY } });
  server = await startTestListener(h.app);
  for (const c of ['alice', 'mia', 'olga', 'eve', 'bob'] as const) tokens[c] = await userWithToken(h, c);
  tokens.admin = await userWithToken(h, ADMIN, { admin: true });
  tokens.unknown = 'never-issued-token-0123456789abcdef';
  await h.composed.admin.createOrganization({ username: 'acme', owner: 'olga' });
  await h.composed.admin.addMember({ org: 'acme', user: 'mia', role: 'member' });
  await h.composed.admin.setTwoFactor('eve', '+15550100');
  // Each target box is built by its own chain of requests, the five side by side.
  await Promise.all(TARGETS.map(async (t) => {
    const [username, name] = t.split('/') as [string, string];
    await ok(api().post('/api/v1/boxes').set(as()).send({ box: { username, name, is_private: isPrivate(t), short_description: t } }), `box ${t}`);
    await versionOf(t, '1.0.0', 'active');
    await versionOf(t, '2.0.0', 'unreleased');
    await versionOf(t, '0.9.0', 'revoked');
    // A direct upload received and finalized: its callback answers again (idempotent).
    await ok(api().post(`${boxPath(t)}/version/1.0.0/providers`).set(as()).send({ provider: { name: 'direct' } }), 'direct provider');
    await ok(api().post(`${boxPath(t)}/version/2.0.0/providers`).set(as()).send({ provider: { name: 'classic' } }), 'classic provider');
    const issued = await ok(api().get(`${boxPath(t)}/version/1.0.0/provider/direct/upload/direct`).set(as()), 'issue');
    await ok(api().put(new URL(issued.body.upload_path as string).pathname).send(Buffer.from('box')), 'upload');
    callbacks[t] = issued.body.callback as string;
    await ok(api().put(new URL(callbacks[t]).pathname).set(as()), 'complete');
  }));
  await h.composed.admin.setBilling('bob', 'delinquent');
});
afterAll(async () => {
  await server?.close();
  await h?.close();
});

function headersOf(caller: Caller): Record<string, string> {
  if (caller === 'none') return {};
  if (caller === 'malformed') return { Authorization: `Basic ${Buffer.from('alice:alice-password').toString('base64')}` };
  return auth(tokens[caller]);
}

/** Reads of a box and what is in it (404 hides a private box; 402 for a delinquent owner's private one). */
function reads(t: Target, status: number): AccessExpectations<Caller> {
  if (!isPrivate(t)) return { other: status };
  const e: AccessExpectations<Caller> = { other: 404, admin: status };
  for (const m of MANAGERS[t]) e[m] = isDelinquent(t) ? 402 : status;
  return e;
}
/** Writes: 401 without a valid token, 404 if invisible, 403 if not yours, 402 if delinquent. */
function writes(t: Target, status: number): AccessExpectations<Caller> {
  const e: AccessExpectations<Caller> = { none: 401, malformed: 401, unknown: 401, admin: status, other: isPrivate(t) ? 404 : 403 };
  for (const m of MANAGERS[t]) e[m] = isDelinquent(t) ? 402 : status;
  return e;
}
/** Downloads of a version that is not active: only those who manage the box. */
function drafts(t: Target): AccessExpectations<Caller> {
  const e: AccessExpectations<Caller> = { other: 404, admin: 302 };
  for (const m of MANAGERS[t]) e[m] = isDelinquent(t) && isPrivate(t) ? 402 : 302;
  return e;
}

/** Rows of one box-scoped route for every target box. */
const perTarget = (make: (t: Target) => AccessRow<Caller>): AccessRow<Caller>[] => TARGETS.map(make);
/** Versions, providers and uploads sit behind the same box check: a public, an organization's
 * private and a delinquent owner's private box cover its outcomes (the box rows take all five). */
const perNested = (make: (t: Target) => AccessRow<Caller>): AccessRow<Caller>[] => (['alice/pub', 'acme/priv', 'bob/priv'] as const).map(make);
const PV = (t: string, v = '1.0.0', p = 'virtualbox') => `${boxPath(t)}/version/${v}/provider/${p}`;

const ROWS: AccessRow<Caller>[] = [
  // Tokens: anyone may log in or ask for a code with the right password; reading and
  // revoking "the token sent" needs one (401 otherwise).
  { route: 'PUT,POST /api/v1/authenticate', body: { user: { login: 'alice', password: 'alice-password' } }, expect: { other: 200 } },
  { route: 'PUT,POST /api/v1/authenticate', body: { user: { login: 'alice', password: 'wrong' } }, expect: { other: 401 } },
  { route: 'GET,HEAD /api/v1/authenticate', expect: { none: 401, malformed: 401, unknown: 401, other: 200 } },
  {
    route: 'DELETE /api/v1/authenticate',
    setup: async ({ caller }) => (['none', 'malformed', 'unknown'].includes(caller) ? undefined : { headers: auth((await h.composed.admin.createToken(caller === 'admin' ? ADMIN : caller, 'disposable')).token) }),
    expect: { none: 401, malformed: 401, unknown: 401, other: 204 },
    note: 'each cell revokes a token of its own',
  },
  { route: 'PUT,POST /api/v1/two-factor/request-code', body: { user: { login: 'eve', password: 'eve-password' }, two_factor: { delivery_method: 'sms' } }, expect: { other: 200 } },

  // Listings: open to all, private boxes filtered out (not refused).
  { route: 'GET,HEAD /api/v1/user/:username', path: '/api/v1/user/acme', expect: { other: 200 } },
  { route: 'GET,HEAD /api/v1/user/:username', path: '/api/v1/user/nobody', expect: { other: 404 } },
  { route: 'GET,HEAD /api/v1/search', path: '/api/v1/search?q=priv', expect: { other: 200 } },

  // Creating a box for an owner: that user, a member or owner of that organization, an admin.
  ...(['alice', 'acme', 'bob'] as const).map(
    (owner): AccessRow<Caller> => ({
      route: 'PUT,POST /api/v1/boxes',
      body: () => ({ box: { username: owner, name: `new-${next()}`, is_private: true } }),
      expect: { ...writes(`${owner}/priv` as Target, 201), other: 403 },
      note: 'boxes of another owner: 403',
    }),
  ),

  // One box and everything in it, for each target box.
  ...perTarget((t) => ({ route: 'GET,HEAD /api/v1/box/:username/:name', path: boxPath(t), expect: reads(t, 200) })),
  ...perTarget((t) => ({ route: 'PUT,POST /api/v1/box/:username/:name', path: boxPath(t), body: { box: { short_description: t } }, expect: writes(t, 200) })),
  ...perTarget((t) => ({
    route: 'DELETE /api/v1/box/:username/:name',
    setup: async () => {
      const [username] = t.split('/') as [string];
      const name = `doomed-${next()}`;
      await ok(api().post('/api/v1/boxes').set(as()).send({ box: { username, name, is_private: isPrivate(t) } }), 'box to delete');
      return { path: boxPath(`${username}/${name}`) };
    },
    expect: writes(t, 200),
  })),
  ...perNested((t) => ({ route: 'PUT,POST /api/v1/box/:username/:name/versions', path: `${boxPath(t)}/versions`, body: () => ({ version: { version: `3.${next()}.0` } }), expect: writes(t, 201) })),
  ...perNested((t) => ({ route: 'GET,HEAD /api/v1/box/:username/:name/version/:box_version', path: `${boxPath(t)}/version/1.0.0`, expect: reads(t, 200) })),
  ...perNested((t) => ({ route: 'PUT,POST /api/v1/box/:username/:name/version/:box_version', path: `${boxPath(t)}/version/2.0.0`, body: { version: { description: 'd' } }, expect: writes(t, 200) })),
  ...perNested((t) => ({
    route: 'DELETE /api/v1/box/:username/:name/version/:box_version',
    path: `${boxPath(t)}/version/0.0.1`,
    setup: forAllowed(async () => {
      const v = `4.${next()}.0`;
      await ok(api().post(`${boxPath(t)}/versions`).set(as()).send({ version: { version: v } }), 'version to delete');
      return { path: `${boxPath(t)}/version/${v}` };
    }),
    expect: writes(t, 200),
  })),
  ...perNested((t) => ({
    route: 'PUT,POST /api/v1/box/:username/:name/version/:box_version/release',
    path: `${boxPath(t)}/version/2.0.0/release`,
    setup: forAllowed(async () => {
      const v = `5.${next()}.0`;
      await versionOf(t, v, 'unreleased');
      return { path: `${boxPath(t)}/version/${v}/release` };
    }),
    expect: writes(t, 200),
  })),
  ...perNested((t) => ({
    route: 'PUT,POST /api/v1/box/:username/:name/version/:box_version/revoke',
    path: `${boxPath(t)}/version/1.0.0/revoke`,
    setup: forAllowed(async () => {
      const v = `6.${next()}.0`;
      await versionOf(t, v, 'active');
      return { path: `${boxPath(t)}/version/${v}/revoke` };
    }),
    expect: writes(t, 200),
  })),
  ...perNested((t) => ({
    route: 'PUT,POST /api/v1/box/:username/:name/version/:box_version/providers',
    path: `${boxPath(t)}/version/2.0.0/providers`,
    body: () => ({ provider: { name: `p${next()}`, url: URL_BOX } }),
    expect: writes(t, 201),
  })),
  ...perNested((t) => ({ route: 'GET,HEAD /api/v1/box/:username/:name/version/:box_version/provider/:provider_name', path: PV(t), expect: reads(t, 200) })),
  ...perNested((t) => ({ route: 'PUT,POST /api/v1/box/:username/:name/version/:box_version/provider/:provider_name', path: PV(t, '2.0.0'), body: { provider: { url: URL_BOX } }, expect: writes(t, 200) })),
  ...perNested((t) => ({
    route: 'DELETE /api/v1/box/:username/:name/version/:box_version/provider/:provider_name',
    path: PV(t, '2.0.0', 'nothing'),
    setup: forAllowed(async () => {
      const name = `d${next()}`;
      await ok(api().post(`${boxPath(t)}/version/2.0.0/providers`).set(as()).send({ provider: { name, url: URL_BOX } }), 'provider to delete');
      return { path: PV(t, '2.0.0', name) };
    }),
    expect: writes(t, 200),
  })),

  // Uploads: issuing a URL and finalizing a direct upload are writes; the signed URL itself
  // is the credential (no token needed), refused for a delinquent owner's box. (Admins act
  // for a delinquent owner: the fixtures issue URLs as one.)
  ...perNested((t) => ({ route: 'GET,HEAD /api/v1/box/:username/:name/version/:box_version/provider/:provider_name/upload', path: `${PV(t, '2.0.0')}/upload`, expect: writes(t, 200) })),
  ...perNested((t) => ({ route: 'GET,HEAD /api/v1/box/:username/:name/version/:box_version/provider/:provider_name/upload/direct', path: `${PV(t, '2.0.0')}/upload/direct`, expect: writes(t, 200) })),
  ...perNested((t) => ({
    route: 'PUT,POST /api/v1/box/:username/:name/version/:box_version/provider/:provider_name/upload/direct/:upload_id',
    path: () => new URL(callbacks[t]).pathname,
    expect: writes(t, 200),
    note: 'the callback of a finalized upload answers again',
  })),
  ...(['alice/pub', 'bob/pub'] as const).map(
    (t): AccessRow<Caller> => ({
      route: 'PUT,POST /api/v1/uploads/:token',
      setup: async () => {
        const issued = await ok(api().get(`${PV(t, '2.0.0', 'classic')}/upload`).set(as()), 'issue');
        return { path: new URL(issued.body.upload_path as string).pathname };
      },
      body: 'a box image',
      headers: { 'Content-Type': 'application/octet-stream' },
      expect: { other: t === 'bob/pub' ? 402 : 200 },
    }),
  ),
  { route: 'PUT,POST /api/v1/uploads/:token', path: '/api/v1/uploads/forged.token.value', body: 'x', headers: { 'Content-Type': 'application/octet-stream' }, expect: { other: 403 } },

  // Root table: the catalog vagrant reads, and downloads (302 to the provider's url).
  ...perTarget((t) => ({ route: 'GET,HEAD /:username/:name', path: `/${t}`, expect: reads(t, 200) })),
  ...perTarget((t) => ({ route: 'GET,HEAD /:username/boxes/:name/versions/:box_version/providers/:file', path: `/${t.replace('/', '/boxes/')}/versions/1.0.0/providers/virtualbox.box`, expect: reads(t, 302) })),
  ...perTarget((t) => ({ route: 'GET,HEAD /:username/boxes/:name/versions/:box_version/providers/:file', path: `/${t.replace('/', '/boxes/')}/versions/2.0.0/providers/virtualbox.box`, expect: drafts(t), note: 'unreleased' })),
  ...perTarget((t) => ({ route: 'GET,HEAD /:username/boxes/:name/versions/:box_version/providers/:file', path: `/${t.replace('/', '/boxes/')}/versions/0.9.0/providers/virtualbox.box`, expect: drafts(t), note: 'revoked' })),
];

const matrix = (): AccessMatrix<Caller> => ({ routes: sweepRoutes(h.app), callers: CALLERS, rows: ROWS });

/** Tokens and listings; boxes; versions; providers and uploads; the root table. */
function groupOf(pattern: string): string {
  if (!pattern.startsWith('/api/v1/')) return 'catalog and download';
  if (!pattern.startsWith('/api/v1/box/')) return pattern.startsWith('/api/v1/uploads/') ? 'provider, upload' : 'token, listing, box creation';
  if (pattern.includes('/provider')) return 'provider, upload';
  return pattern.includes('/version') ? 'version' : 'box';
}

describe('boxes access matrix', () => {
  // Hundreds of cells a group, each with its own setup: minutes on a loaded 2-core machine.
  jest.setTimeout(180_000);
  it('has a row for every declared route and method, and an expectation for every caller', () => {
    expect(matrixProblems(matrix())).toEqual([]);
  });

  it.each(groupRows(ROWS, groupOf))('answers every caller as the table says: %s routes', async (group, rows) => {
    const result = await runAccessMatrix(
      { ...matrix(), rows },
      // docs/boxes.md "Errors": {"errors":[...],"success":false}.
      { baseUrl: server.url, auth: headersOf, denialShape: (res) => checkJsonErrors(res, { success: false }) },
    );
    console.log(`boxes access matrix, ${group} routes: ${result.cells} cells, statuses ${JSON.stringify(result.statuses)}`);
    expect(result.failures).toEqual([]);
  });
});
