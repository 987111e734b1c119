// Who may call what (issue 33, item 2): every route x method of the tables buildApp mounts
// (discovery, admin, modules v1, downloads summary v2; sweepRoutes) has rows below giving
// the status each kind of caller gets, with public reads on (the default) and off; a route
// without a row fails the test. Rules (docs/registry.md "Tokens and namespaces"; features/
// auth/auth.service.ts): the admin API needs the admin token; publishing and deleting need
// a token of that namespace (or the admin token); reads are public, or need any valid token
// with REGISTRY_PUBLIC_READS=false; archives need the signed URL the download endpoint
// hands out, or a valid token.
import request from 'supertest';
import { checkJsonErrors, forAllowed, matrixProblems, runAccessMatrix, startTestListener, sweepRoutes, type AccessExpectations, type AccessMatrix, type AccessRow, type TestListener } from '@selfstack/testing';
import { sampleModuleTarGz, sampleModuleZip } from './archive-fixtures';
import { ADMIN_TOKEN, bearer, createNamespace, createToken, publish, startRegistry, type Registry } from './registry-harness';

const CALLERS = [
  'none', // no token
  'malformed', // `Authorization: Basic ...`: no token either
  'unknown', // a token that was never issued
  'expired',
  'admin', // REGISTRY_ADMIN_TOKEN
  'acme', // a token of namespace acme
  'wrong-ns', // a token of namespace other (the wrong one for acme's modules)
  'readonly', // a token without a namespace
] as const;
type Caller = (typeof CALLERS)[number];

let open: Registry;
let closed: Registry;
let openServer: TestListener;
let closedServer: TestListener;
const tokens = {} as Record<Caller, string>;
let tarGz: Buffer;
let n = 0;
const next = () => ++n;

async function ok(res: request.Test, what: string): Promise<request.Response> {
  const r = await res;
  if (r.status >= 300) throw new Error(`${what}: ${r.status} ${r.text}`);
  return r;
}

beforeAll(async () => {
  open = await startRegistry();
  closed = await startRegistry({ publicReads: false }, { db: open.db, prisma: open.prisma, readPool: open.readPool, blobRoot: open.blobRoot });
  openServer = await startTestListener(open.app);
  closedServer = await startTestListener(closed.app);
  for (const ns of ['acme', 'other']) await createNamespace(open.app, ns);
  tokens.admin = ADMIN_TOKEN;
  tokens.acme = (await createToken(open.app, { namespace: 'acme' })).token;
  tokens['wrong-ns'] = (await createToken(open.app, { namespace: 'other' })).token;
  tokens.readonly = (await createToken(open.app, {})).token;
  tokens.unknown = 'rgt_never-issued-0123456789abcdefghijklmnopqrstuv';
  const expiring = await createToken(open.app, { namespace: 'acme', ttl_seconds: 60 });
  await open.prisma.registryToken.update({ where: { id: expiring.id }, data: { expiresAt: new Date(Date.now() - 1000) } });
  tokens.expired = expiring.token;
  tarGz = sampleModuleTarGz();
  await ok(publish(open.app, 'acme/vpc/aws/1.0.0', tarGz, ADMIN_TOKEN), 'publish tar.gz');
  await ok(publish(open.app, 'acme/vpc/aws/1.1.0', await sampleModuleZip(), ADMIN_TOKEN), 'publish zip');
});
afterAll(async () => {
  await openServer?.close();
  await closedServer?.close();
  await closed?.close();
  await open?.close();
});

function headersOf(caller: Caller): Record<string, string> {
  if (caller === 'none') return {};
  if (caller === 'malformed') return { Authorization: `Basic ${Buffer.from(`x:${ADMIN_TOKEN}`).toString('base64')}` };
  return bearer(tokens[caller]);
}

const REFUSED = { none: 401, malformed: 401, unknown: 401, expired: 401 } as const;
/** Reads: everyone with public reads (a bad token is ignored), else any valid token. */
const reads = (publicReads: boolean, status: number): AccessExpectations<Caller> => (publicReads ? { other: status } : { ...REFUSED, other: status });
/** The admin API: 401 without a valid token, 403 with a namespace or read-only one. */
const adminOnly = (status: number): AccessExpectations<Caller> => ({ ...REFUSED, admin: status, other: 403 });
/** Publishing and deleting in a namespace: its own token or the admin token. */
const publishers = (ns: 'acme' | 'other', status: number): AccessExpectations<Caller> => ({ ...REFUSED, admin: status, [ns === 'acme' ? 'acme' : 'wrong-ns']: status, other: 403 });
/** Where the signed download location of a version points. */
async function signedArchive(version: string): Promise<string> {
  const res = await ok(request(open.app).get(`/v1/modules/acme/vpc/aws/${version}/download`).set(bearer(ADMIN_TOKEN)), 'download location');
  const base = `http://registry.invalid/v1/modules/acme/vpc/aws/${version}/download`;
  const url = new URL(String(res.headers['x-registry-get']), base);
  return `${url.pathname}${url.search}`;
}
/** A version of acme/vpc/aws published for a cell expected to delete it. */
const published = (ns: 'acme' | 'other') =>
  forAllowed<Caller>(async () => {
    const version = `3.${next()}.0`;
    await ok(publish(open.app, `${ns}/vpc/aws/${version}`, tarGz, ADMIN_TOKEN), 'version to delete');
    return { path: `/v1/modules/${ns}/vpc/aws/${version}` };
  });
const OCTETS = { 'Content-Type': 'application/octet-stream' };

function rowsFor(publicReads: boolean): AccessRow<Caller>[] {
  const R = (status: number) => reads(publicReads, status);
  return [
    // Discovery is always public.
    { route: 'GET,HEAD /.well-known/terraform.json', expect: { other: 200 } },

    // Admin API.
    { route: 'GET,HEAD /v1/admin/namespaces', expect: adminOnly(200) },
    { route: 'PUT,POST /v1/admin/namespaces', body: () => ({ name: `ns-${next()}` }), expect: adminOnly(201) },
    {
      route: 'DELETE /v1/admin/namespaces/:name',
      path: '/v1/admin/namespaces/none-such',
      setup: forAllowed(async () => {
        const name = `gone-${next()}`;
        await createNamespace(open.app, name);
        return { path: `/v1/admin/namespaces/${name}` };
      }),
      expect: adminOnly(204),
    },
    { route: 'GET,HEAD /v1/admin/tokens', expect: adminOnly(200) },
    { route: 'PUT,POST /v1/admin/tokens', body: { namespace: 'acme' }, expect: adminOnly(201) },
    {
      route: 'DELETE /v1/admin/tokens/:id',
      path: '/v1/admin/tokens/none-such',
      setup: forAllowed(async () => ({ path: `/v1/admin/tokens/${(await createToken(open.app, {})).id}` })),
      expect: adminOnly(204),
    },
    { route: 'GET,HEAD /v1/admin/maintenance', expect: adminOnly(200) },
    // Switching it off: rows after this one still expect normal answers.
    { route: 'PUT,POST /v1/admin/maintenance', body: { enabled: false }, expect: adminOnly(200) },
    { route: 'PATCH /v1/admin/modules/:namespace/:name/:provider', path: '/v1/admin/modules/acme/vpc/aws', body: { verified: true }, expect: adminOnly(200) },

    // Reads (v1 and v2).
    { route: 'GET,HEAD /v1/modules', expect: R(200) },
    { route: 'GET,HEAD /v1/modules/search', path: '/v1/modules/search?q=vpc', expect: R(200) },
    { route: 'GET,HEAD /v1/modules/:namespace', path: '/v1/modules/acme', expect: R(200) },
    { route: 'GET,HEAD /v1/modules/:namespace/:name', path: '/v1/modules/acme/vpc', expect: R(200) },
    { route: 'GET,HEAD /v1/modules/:namespace/:name/:provider', path: '/v1/modules/acme/vpc/aws', expect: R(200) },
    { route: 'GET,HEAD /v1/modules/:namespace/:name/:provider/versions', path: '/v1/modules/acme/vpc/aws/versions', expect: R(200) },
    { route: 'GET,HEAD /v1/modules/:namespace/:name/:provider/download', path: '/v1/modules/acme/vpc/aws/download', expect: R(302) },
    { route: 'GET,HEAD /v1/modules/:namespace/:name/:provider/:version', path: '/v1/modules/acme/vpc/aws/1.0.0', expect: R(200) },
    { route: 'GET,HEAD /v1/modules/:namespace/:name/:provider/:version/download', path: '/v1/modules/acme/vpc/aws/1.0.0/download', expect: R(204) },
    { route: 'GET,HEAD /v2/modules/:namespace/:name/:provider/downloads/summary', path: '/v2/modules/acme/vpc/aws/downloads/summary', expect: R(200) },

    // Archives: the signed location works for anyone; unsigned needs a valid token (either
    // way, whatever the public-reads setting: REGISTRY_PUBLIC_ARCHIVES is off).
    ...(['tar.gz', 'zip'] as const).flatMap((format): AccessRow<Caller>[] => {
      const version = format === 'zip' ? '1.1.0' : '1.0.0';
      const route = `GET,HEAD /v1/modules/:namespace/:name/:provider/:version/archive.${format}`;
      return [
        { route, setup: async () => ({ path: await signedArchive(version) }), expect: { other: 200 }, note: 'signed' },
        { route, path: `/v1/modules/acme/vpc/aws/${version}/archive.${format}`, expect: { ...REFUSED, other: 200 }, note: 'unsigned' },
      ];
    }),

    // Publishing (the raw archive as the body) and deleting a version.
    ...(['acme', 'other'] as const).map(
      (ns): AccessRow<Caller> => ({
        route: 'PUT,POST /v1/modules/:namespace/:name/:provider/:version',
        path: () => `/v1/modules/${ns}/vpc/aws/2.${next()}.0`,
        headers: OCTETS,
        body: () => tarGz,
        expect: publishers(ns, 201),
      }),
    ),
    ...(['acme', 'other'] as const).map(
      (ns): AccessRow<Caller> => ({ route: 'DELETE /v1/modules/:namespace/:name/:provider/:version', path: `/v1/modules/${ns}/vpc/aws/9.9.9`, setup: published(ns), expect: publishers(ns, 204) }),
    ),
  ];
}

describe.each([
  ['on', true],
  ['off', false],
])('registry access matrix, public reads %s', (_name, publicReads) => {
  const matrix = (): AccessMatrix<Caller> => ({ routes: sweepRoutes(open.app), callers: CALLERS, rows: rowsFor(publicReads) });

  it('has a row for every declared route and method, and an expectation for every caller', () => {
    expect(matrixProblems(matrix())).toEqual([]);
  });

  it('answers every caller as the table says', async () => {
    const result = await runAccessMatrix(matrix(), {
      baseUrl: publicReads ? openServer.url : closedServer.url,
      auth: headersOf,
      // docs/registry.md "Errors": {"errors":[...]}.
      denialShape: (res) => checkJsonErrors(res),
    });
    console.log(`registry access matrix (public reads ${publicReads ? 'on' : 'off'}): ${result.cells} cells, statuses ${JSON.stringify(result.statuses)}`);
    expect(result.failures).toEqual([]);
  });
});
