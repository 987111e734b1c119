// Every read endpoint of spec part B with its parameters, meta block and errors.
import { createHash } from 'node:crypto';
import request from 'supertest';
import { sampleModuleTarGz, sampleModuleZip } from './archive-fixtures';
import { ADMIN_TOKEN, bearer, createNamespace, createToken, publish, startRegistry, type Registry } from './registry-harness';

jest.setTimeout(60_000);

let reg: Registry;
let acmeToken: string;
const tarV1 = sampleModuleTarGz();

function binary(res: request.Test) {
  return res.buffer(true).parse((r, cb) => {
    const chunks: Buffer[] = [];
    r.on('data', (c: Buffer) => chunks.push(c));
    r.on('end', () => cb(null, Buffer.concat(chunks)));
  });
}

beforeAll(async () => {
  reg = await startRegistry();
  await createNamespace(reg.app, 'acme', 'Acme Corp');
  await createNamespace(reg.app, 'beta');
  acmeToken = (await createToken(reg.app, { namespace: 'acme' })).token;
  const betaToken = (await createToken(reg.app, { namespace: 'beta' })).token;
  const pub = async (addr: string, archive: Buffer, t: string, q = '') => {
    const r = await publish(reg.app, addr, archive, t, q);
    if (r.status !== 201) throw new Error(`${addr}: ${r.status} ${r.text}`);
  };
  await pub('acme/network/aws/1.0.0', tarV1, acmeToken, '?description=Virtual%20private%20cloud%20networking%20for%20AWS');
  await pub('acme/network/aws/1.2.0', sampleModuleTarGz({ 'v12.tf': '' }), acmeToken, '?description=Virtual%20private%20cloud%20networking%20for%20AWS');
  await pub('acme/network/aws/2.0.0-beta.1', sampleModuleTarGz(), acmeToken, '?description=Prerelease');
  await pub('acme/network/google/0.1.0', await sampleModuleZip(), acmeToken, '?description=Networks%20on%20Google%20Cloud');
  await pub('acme/database/aws/1.0.0', sampleModuleTarGz(), acmeToken, '?description=Managed%20PostgreSQL%20databases');
  await pub('beta/network/aws/0.0.1', sampleModuleTarGz(), betaToken, '?description=Another%20network%20module');
  await pub('beta/cache/azurerm/1.0.0', sampleModuleTarGz(), betaToken, '?description=Redis%20cache');
  await request(reg.app).patch('/v1/admin/modules/acme/database/aws').set(bearer(ADMIN_TOKEN)).send({ verified: true }).expect(200);
}, 120_000);
afterAll(async () => {
  await reg.close();
}, 120_000);

describe('list', () => {
  it('lists every module (latest version each) with the meta block', async () => {
    const res = await request(reg.app).get('/v1/modules');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body.meta).toEqual({ limit: 15, current_offset: 0 });
    expect(res.body.modules.map((m: { id: string }) => m.id)).toEqual([
      'acme/database/aws/1.0.0',
      'acme/network/aws/1.2.0',
      'acme/network/google/0.1.0',
      'beta/cache/azurerm/1.0.0',
      'beta/network/aws/0.0.1',
    ]);
    expect(res.body.modules[1]).toEqual({
      id: 'acme/network/aws/1.2.0',
      owner: 'Acme Corp',
      namespace: 'acme',
      name: 'network',
      version: '1.2.0',
      provider: 'aws',
      description: 'Virtual private cloud networking for AWS',
      source: '',
      published_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/),
      downloads: 0,
      verified: false,
    });
  });

  it('filters by namespace (path), provider and verified=true only', async () => {
    const ns = await request(reg.app).get('/v1/modules/beta');
    expect(ns.body.modules.map((m: { id: string }) => m.id)).toEqual(['beta/cache/azurerm/1.0.0', 'beta/network/aws/0.0.1']);
    const prov = await request(reg.app).get('/v1/modules?provider=aws');
    expect(prov.body.modules.map((m: { provider: string }) => m.provider)).toEqual(['aws', 'aws', 'aws']);
    const verified = await request(reg.app).get('/v1/modules?verified=true');
    expect(verified.body.modules.map((m: { id: string }) => m.id)).toEqual(['acme/database/aws/1.0.0']);
    expect(verified.body.modules[0].verified).toBe(true);
    for (const v of ['false', 'yes', '1', '']) {
      const all = await request(reg.app).get(`/v1/modules?verified=${v}`);
      expect([v, all.body.modules.length]).toEqual([v, 5]);
    }
    const empty = await request(reg.app).get('/v1/modules/nobody');
    expect(empty.status).toBe(200);
    expect(empty.body).toEqual({ meta: { limit: 15, current_offset: 0 }, modules: [] });
  });

  it('paginates: next_offset/next_url only when more, prev_offset only past 0, limit capped', async () => {
    const p1 = await request(reg.app).get('/v1/modules?limit=2&provider=aws');
    expect(p1.body.meta).toEqual({ limit: 2, current_offset: 0, next_offset: 2, next_url: '/v1/modules?provider=aws&limit=2&offset=2' });
    expect(p1.body.modules).toHaveLength(2);
    const p2 = await request(reg.app).get(p1.body.meta.next_url);
    expect(p2.body.meta).toEqual({ limit: 2, current_offset: 2, prev_offset: 0 });
    expect(p2.body.modules.map((m: { id: string }) => m.id)).toEqual(['beta/network/aws/0.0.1']);
    const mid = await request(reg.app).get('/v1/modules?limit=1&offset=3');
    expect(mid.body.meta).toEqual({ limit: 1, current_offset: 3, next_offset: 4, prev_offset: 2, next_url: '/v1/modules?limit=1&offset=4' });
    const capped = await request(reg.app).get('/v1/modules?limit=100000');
    expect(capped.body.meta.limit).toBe(100);
    const past = await request(reg.app).get('/v1/modules?offset=50');
    expect(past.body).toEqual({ meta: { limit: 15, current_offset: 50, prev_offset: 35 }, modules: [] });
  });

  it.each([
    ['offset=-1', /invalid value for field "offset"/],
    ['offset=abc', /invalid value for field "offset"/],
    ['limit=0', /invalid value for field "limit"/],
    ['limit=1.5', /invalid value for field "limit"/],
    ['limit=99999999999999', /invalid value for field "limit"/],
  ])('rejects %s with 400', async (query, pattern) => {
    const res = await request(reg.app).get(`/v1/modules?${query}`);
    expect(res.status).toBe(400);
    expect(res.body.errors[0]).toMatch(pattern);
  });
});

describe('search', () => {
  it('requires q', async () => {
    const res = await request(reg.app).get('/v1/modules/search');
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ errors: ['missing required field "q"'] });
    const blank = await request(reg.app).get('/v1/modules/search?q=%20%20');
    expect(blank.status).toBe(400);
    expect(blank.body).toEqual({ errors: ['q must not be empty'] });
  });

  it('finds keywords in names and descriptions (stemmed), best match first', async () => {
    const res = await request(reg.app).get('/v1/modules/search?q=network');
    expect(res.status).toBe(200);
    expect(res.body.meta).toEqual({ limit: 15, current_offset: 0 });
    // Name matches (weight A) rank above description-only matches.
    expect(res.body.modules.map((m: { id: string }) => m.id).sort()).toEqual(['acme/network/aws/1.2.0', 'acme/network/google/0.1.0', 'beta/network/aws/0.0.1']);
    const stem = await request(reg.app).get('/v1/modules/search?q=databases');
    expect(stem.body.modules.map((m: { id: string }) => m.id)).toEqual(['acme/database/aws/1.0.0']);
    const both = await request(reg.app).get('/v1/modules/search?q=network%20google');
    expect(both.body.modules.map((m: { id: string }) => m.id)).toEqual(['acme/network/google/0.1.0']);
    const none = await request(reg.app).get('/v1/modules/search?q=kubernetes');
    expect(none.body).toEqual({ meta: { limit: 15, current_offset: 0 }, modules: [] });
  });

  it('matches plain words as prefixes (what a search box user expects)', async () => {
    const netw = await request(reg.app).get('/v1/modules/search?q=netw');
    expect(netw.body.modules.map((m: { id: string }) => m.id).sort()).toEqual(['acme/network/aws/1.2.0', 'acme/network/google/0.1.0', 'beta/network/aws/0.0.1']);
    const two = await request(reg.app).get('/v1/modules/search?q=datab%20postg');
    expect(two.body.modules.map((m: { id: string }) => m.id)).toEqual(['acme/database/aws/1.0.0']);
    const stop = await request(reg.app).get('/v1/modules/search?q=the');
    expect(stop.status).toBe(200);
    expect(stop.body.modules).toEqual([]);
  });

  it('supports phrase search', async () => {
    const phrase = await request(reg.app).get('/v1/modules/search').query({ q: '"private cloud"' });
    expect(phrase.body.modules.map((m: { id: string }) => m.id)).toEqual(['acme/network/aws/1.2.0']);
    const wrongOrder = await request(reg.app).get('/v1/modules/search').query({ q: '"cloud private"' });
    expect(wrongOrder.body.modules).toEqual([]);
  });

  it('filters by namespace, provider and verified, and paginates', async () => {
    const ns = await request(reg.app).get('/v1/modules/search?q=network&namespace=beta');
    expect(ns.body.modules.map((m: { id: string }) => m.id)).toEqual(['beta/network/aws/0.0.1']);
    const prov = await request(reg.app).get('/v1/modules/search?q=network&provider=google');
    expect(prov.body.modules.map((m: { id: string }) => m.id)).toEqual(['acme/network/google/0.1.0']);
    const ver = await request(reg.app).get('/v1/modules/search?q=network&verified=true');
    expect(ver.body.modules).toEqual([]);
    const p1 = await request(reg.app).get('/v1/modules/search?q=network&limit=2');
    expect(p1.body.meta).toEqual({ limit: 2, current_offset: 0, next_offset: 2, next_url: '/v1/modules/search?q=network&limit=2&offset=2' });
    const p2 = await request(reg.app).get(p1.body.meta.next_url);
    expect(p2.body.meta).toEqual({ limit: 2, current_offset: 2, prev_offset: 0 });
    expect([...p1.body.modules, ...p2.body.modules].map((m: { id: string }) => m.id).sort()).toEqual(['acme/network/aws/1.2.0', 'acme/network/google/0.1.0', 'beta/network/aws/0.0.1']);
  });

  it('treats operator characters as text, never as a syntax error', async () => {
    for (const q of ["net'work", 'a & | ! (', '-', 'or', ':*']) {
      const res = await request(reg.app).get('/v1/modules/search').query({ q });
      expect([q, res.status]).toEqual([q, 200]);
    }
  });
});

describe('versions', () => {
  it('lists every version with root and submodule requirements; the first module is the requested one', async () => {
    const res = await request(reg.app).get('/v1/modules/acme/network/aws/versions');
    expect(res.status).toBe(200);
    expect(res.body.modules).toHaveLength(1);
    expect(res.body.modules[0].source).toBe('acme/network/aws');
    expect(res.body.modules[0].versions.map((v: { version: string }) => v.version)).toEqual(['2.0.0-beta.1', '1.2.0', '1.0.0']);
    expect(res.body.modules[0].versions[2]).toEqual({
      version: '1.0.0',
      root: { providers: [{ name: 'aws', version: '>= 4.0' }], dependencies: [{ name: 'label', source: 'cloudposse/label/null', version: '0.25.0' }] },
      submodules: [{ path: 'modules/policy', providers: [{ name: 'aws', version: '' }], dependencies: [] }],
    });
  });
  it('404s an unknown module with {"errors":[...]}', async () => {
    const res = await request(reg.app).get('/v1/modules/acme/nope/aws/versions');
    expect(res.status).toBe(404);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body).toEqual({ errors: ['module acme/nope/aws not found'] });
  });
});

describe('download and archive', () => {
  it('answers 204, empty body, X-Registry-Get and X-Terraform-Get (relative, .tar.gz, signed, checksummed)', async () => {
    const res = await request(reg.app).get('/v1/modules/acme/network/aws/1.0.0/download');
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    const loc = res.headers['x-registry-get'] as string;
    expect(res.headers['x-terraform-get']).toBe(loc);
    expect(res.headers['cache-control']).toBe('no-store');
    const sha = createHash('sha256').update(tarV1).digest('hex');
    expect(loc).toMatch(new RegExp(`^\\./archive\\.tar\\.gz\\?token=[A-Za-z0-9_.-]+&checksum=sha256%3A${sha}$`));

    // Resolve it the way Terraform does: against the full download URL.
    const resolved = new URL(loc, 'https://registry.example.com/v1/modules/acme/network/aws/1.0.0/download');
    expect(resolved.pathname).toBe('/v1/modules/acme/network/aws/1.0.0/archive.tar.gz');
    const archive = await binary(request(reg.app).get(resolved.pathname + resolved.search));
    expect(archive.status).toBe(200);
    expect(archive.headers['content-type']).toBe('application/gzip');
    expect(archive.headers['content-length']).toBe(String(tarV1.length));
    expect(archive.headers['x-checksum-sha256']).toBe(sha);
    expect(archive.headers.digest).toBe(`sha-256=${Buffer.from(sha, 'hex').toString('base64')}`);
    expect(archive.headers['content-disposition']).toBe('attachment; filename="acme-network-aws-1.0.0.tar.gz"');
    expect(Buffer.compare(archive.body as Buffer, tarV1)).toBe(0);

    const head = await request(reg.app).head(resolved.pathname + resolved.search);
    expect(head.status).toBe(200);
    expect(head.headers['content-length']).toBe(String(tarV1.length));
  });

  it('serves zip archives as application/zip under archive.zip', async () => {
    const res = await request(reg.app).get('/v1/modules/acme/network/google/0.1.0/download');
    const loc = res.headers['x-registry-get'] as string;
    expect(loc).toMatch(/^\.\/archive\.zip\?token=/);
    const url = new URL(loc, 'http://h/v1/modules/acme/network/google/0.1.0/download');
    const archive = await binary(request(reg.app).get(url.pathname + url.search));
    expect(archive.status).toBe(200);
    expect(archive.headers['content-type']).toBe('application/zip');
    const wrongExt = await request(reg.app).get(`/v1/modules/acme/network/google/0.1.0/archive.tar.gz${url.search}`);
    expect(wrongExt.status).toBe(404);
    expect(wrongExt.body).toEqual({ errors: ['module acme/network/google version 0.1.0 has no archive.tar.gz (it is archive.zip)'] });
  });

  it('refuses unsigned, tampered, cross-version and expired archive URLs; a registry token also works', async () => {
    const base = '/v1/modules/acme/network/aws/1.0.0/archive.tar.gz';
    const unsigned = await request(reg.app).get(base);
    expect(unsigned.status).toBe(401);
    expect(unsigned.body).toEqual({ errors: ["archive URL is not signed: get the download location from the version's download endpoint"] });

    const other = await request(reg.app).get('/v1/modules/acme/network/aws/1.2.0/download');
    const otherToken = new URL(other.headers['x-registry-get'] as string, 'http://h/x/y').searchParams.get('token')!;
    const crossVersion = await request(reg.app).get(`${base}?token=${otherToken}`);
    expect(crossVersion.status).toBe(401);
    expect(crossVersion.body).toEqual({ errors: ["archive URL signature is invalid or expired: get a new download location from the version's download endpoint"] });
    const tampered = await request(reg.app).get(`${base}?token=${otherToken.slice(0, -3)}abc`);
    expect(tampered.status).toBe(401);

    const expiredReg = await startRegistry({ archiveUrlTtlSeconds: 1, clock: () => new Date(Date.now() - 10_000) }, { db: reg.db, prisma: reg.prisma, readPool: reg.readPool, blobRoot: reg.blobRoot });
    const stale = await request(expiredReg.app).get('/v1/modules/acme/network/aws/1.0.0/download');
    const staleToken = new URL(stale.headers['x-registry-get'] as string, 'http://h/x/y').searchParams.get('token')!;
    const expired = await request(reg.app).get(`${base}?token=${staleToken}`);
    expect(expired.status).toBe(401);

    const withToken = await request(reg.app).get(base).set(bearer(acmeToken));
    expect(withToken.status).toBe(200);
  });

  it('serves archives without a signature when REGISTRY_PUBLIC_ARCHIVES=true', async () => {
    const pub = await startRegistry({ publicArchives: true }, { db: reg.db, prisma: reg.prisma, readPool: reg.readPool, blobRoot: reg.blobRoot });
    const res = await request(pub.app).get('/v1/modules/acme/network/aws/1.0.0/download');
    expect(res.headers['x-registry-get']).toMatch(/^\.\/archive\.tar\.gz\?checksum=sha256%3A[0-9a-f]{64}$/);
    const archive = await request(pub.app).get('/v1/modules/acme/network/aws/1.0.0/archive.tar.gz');
    expect(archive.status).toBe(200);
  });

  it('404s unknown versions and modules', async () => {
    const v = await request(reg.app).get('/v1/modules/acme/network/aws/9.9.9/download');
    expect(v.status).toBe(404);
    expect(v.body).toEqual({ errors: ['module acme/network/aws version 9.9.9 not found'] });
    const m = await request(reg.app).get('/v1/modules/acme/ghost/aws/1.0.0/download');
    expect(m.status).toBe(404);
    expect(m.body).toEqual({ errors: ['module acme/ghost/aws not found'] });
  });

  it('download latest: 302 to the versioned download endpoint of the newest release', async () => {
    const res = await request(reg.app).get('/v1/modules/acme/network/aws/download');
    expect(res.status).toBe(302);
    expect(res.headers.location).toBe('/v1/modules/acme/network/aws/1.2.0/download');
    const missing = await request(reg.app).get('/v1/modules/acme/ghost/aws/download');
    expect(missing.status).toBe(404);
  });
});

describe('latest and one version', () => {
  it('latest for every provider: paginated summaries', async () => {
    const res = await request(reg.app).get('/v1/modules/acme/network');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      meta: { limit: 15, current_offset: 0 },
      modules: [
        expect.objectContaining({ id: 'acme/network/aws/1.2.0', provider: 'aws' }),
        expect.objectContaining({ id: 'acme/network/google/0.1.0', provider: 'google' }),
      ],
    });
    const page = await request(reg.app).get('/v1/modules/acme/network?limit=1');
    expect(page.body.meta).toEqual({ limit: 1, current_offset: 0, next_offset: 1, next_url: '/v1/modules/acme/network?limit=1&offset=1' });
    const capped = await request(reg.app).get('/v1/modules/acme/network?limit=1000');
    expect(capped.body.meta.limit).toBe(50);
    const missing = await request(reg.app).get('/v1/modules/acme/ghost');
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ errors: ['module acme/ghost not found'] });
  });

  it('latest for one provider: module detail with analysis, providers and versions', async () => {
    const res = await request(reg.app).get('/v1/modules/acme/network/aws');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      id: 'acme/network/aws/1.2.0',
      version: '1.2.0',
      providers: ['aws', 'google'],
      versions: ['1.0.0', '1.2.0', '2.0.0-beta.1'],
    });
    expect(res.body.root).toEqual({
      path: '',
      readme: '# Demo\n\nA demo module.\n',
      empty: false,
      inputs: [
        { name: 'name', type: 'string', description: 'Bucket name', default: '', required: true },
        { name: 'region', type: 'string', description: 'Region', default: '"us-east-1"', required: false },
        { name: 'tags', type: 'map(string)', description: '', default: '{}', required: false },
      ],
      outputs: [{ name: 'arn', description: 'Bucket ARN' }],
      dependencies: [{ name: 'label', source: 'cloudposse/label/null', version: '0.25.0' }],
      provider_dependencies: [{ name: 'aws', namespace: 'hashicorp', source: 'hashicorp/aws', version: '>= 4.0' }],
      resources: [{ name: 'this', type: 'aws_s3_bucket' }],
    });
    expect(res.body.submodules).toEqual([
      expect.objectContaining({ path: 'modules/policy', readme: 'Policy submodule\n', empty: false, resources: [{ name: 'p', type: 'aws_iam_policy' }] }),
    ]);
  });

  it('one version: detail of exactly that version; 404 for unknown ones', async () => {
    const res = await request(reg.app).get('/v1/modules/acme/network/aws/1.0.0');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: 'acme/network/aws/1.0.0', version: '1.0.0', description: 'Virtual private cloud networking for AWS' });
    const pre = await request(reg.app).get('/v1/modules/acme/network/aws/2.0.0-beta.1');
    expect(pre.body).toMatchObject({ version: '2.0.0-beta.1', description: 'Prerelease' });
    const missing = await request(reg.app).get('/v1/modules/acme/network/aws/3.0.0');
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ errors: ['module acme/network/aws version 3.0.0 not found'] });
    const missingModule = await request(reg.app).get('/v1/modules/acme/network/azurerm');
    expect(missingModule.status).toBe(404);
    expect(missingModule.body).toEqual({ errors: ['module acme/network/azurerm not found'] });
  });

  it('?help=1 describes an endpoint from its PathSpec', async () => {
    const res = await request(reg.app).get('/v1/modules/search?help=1');
    expect(res.status).toBe(200);
    expect(res.body.help).toContain('Search modules');
    expect(JSON.stringify(res.body.openapi)).toContain('/search');
  });

  it('unknown paths under the API: 404 in the registry error shape; wrong method: 405', async () => {
    const res = await request(reg.app).get('/v1/modules/a/b/c/d/e/f');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ errors: ['not found'] });
    const put = await request(reg.app).put('/v1/modules/acme/network/aws/versions').send({});
    expect(put.status).toBe(405);
    expect(put.body).toEqual({ errors: ['unsupported operation'] });
  });
});

describe('downloads summary (v2)', () => {
  it('counts download events by week, month, year and total', async () => {
    const before = await request(reg.app).get('/v2/modules/acme/database/aws/downloads/summary');
    expect(before.status).toBe(200);
    expect(before.body).toEqual({ data: { type: 'module-downloads-summary', id: 'acme/database/aws', attributes: { week: 0, month: 0, year: 0, total: 0 } } });

    for (let i = 0; i < 3; i++) await request(reg.app).get('/v1/modules/acme/database/aws/1.0.0/download').expect(204);
    // HEAD answers the same headers but is not counted.
    const head = await request(reg.app).head('/v1/modules/acme/database/aws/1.0.0/download');
    expect(head.status).toBe(204);
    expect(head.headers['x-registry-get']).toMatch(/^\.\/archive\.tar\.gz\?token=/);
    // Older events, written directly: 10 days, 100 days and 2 years ago.
    const m = await reg.prisma.registryModule.findFirstOrThrow({ where: { namespace: 'acme', name: 'database', provider: 'aws' } });
    for (const days of [10, 100, 800]) {
      await reg.prisma.registryDownload.create({ data: { moduleId: m.id, version: '1.0.0', createdAt: new Date(Date.now() - days * 86_400_000) } });
      await reg.prisma.registryModule.update({ where: { id: m.id }, data: { downloads: { increment: 1 } } });
    }
    const res = await request(reg.app).get('/v2/modules/acme/database/aws/downloads/summary');
    expect(res.body.data.attributes).toEqual({ week: 3, month: 4, year: 5, total: 6 });
    const list = await request(reg.app).get('/v1/modules/acme/database/aws');
    expect(list.body.downloads).toBe(6);

    const missing = await request(reg.app).get('/v2/modules/acme/ghost/aws/downloads/summary');
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ errors: ['module acme/ghost/aws not found'] });
  });
});
