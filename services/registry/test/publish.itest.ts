// Publishing and deleting versions: authentication, validation, immutability, archive
// safety, analysis errors, size limits, the all-or-nothing guarantee and races.
import request from 'supertest';
import { makeTarGz, makeZip, renameInZip, sampleModuleTarGz, sampleModuleZip } from './archive-fixtures';
import { ADMIN_TOKEN, bearer, createNamespace, createToken, publish, startRegistry, type Registry } from './registry-harness';

jest.setTimeout(60_000);

let reg: Registry;
let token: string;

beforeAll(async () => {
  reg = await startRegistry();
  await createNamespace(reg.app, 'acme', 'Acme Corp');
  await createNamespace(reg.app, 'other');
  token = (await createToken(reg.app, { namespace: 'acme', description: 'acme ci' })).token;
}, 120_000);
afterAll(async () => {
  await reg.close();
}, 120_000);

async function expectNothingStored(address: { namespace: string; name: string; provider: string }, filesBefore: string[]) {
  expect(await reg.prisma.registryModule.count({ where: address })).toBe(0);
  expect(await reg.archiveFiles()).toEqual(filesBefore);
}

describe('publish', () => {
  it('stores a .tar.gz version and answers 201 with its summary and archive facts', async () => {
    const archive = sampleModuleTarGz();
    const res = await publish(reg.app, 'acme/storage/aws/1.0.0', archive, token, '?source=https://git.example.com/acme/storage');
    expect(res.status).toBe(201);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body).toEqual({
      id: 'acme/storage/aws/1.0.0',
      owner: 'Acme Corp',
      namespace: 'acme',
      name: 'storage',
      version: '1.0.0',
      provider: 'aws',
      description: 'A demo module.',
      source: 'https://git.example.com/acme/storage',
      published_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/),
      downloads: 0,
      verified: false,
      archive: { format: 'tar.gz', size: archive.length, sha256: expect.stringMatching(/^[0-9a-f]{64}$/), files: 7 },
    });
    expect(await reg.archiveFiles()).toHaveLength(1);
  });

  it('stores a .zip version', async () => {
    const res = await publish(reg.app, 'acme/storage/aws/1.1.0', await sampleModuleZip(), token, '?description=Zipped');
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ version: '1.1.0', description: 'Zipped', archive: { format: 'zip' } });
  });

  it('refuses to overwrite a version (immutable): 409 and nothing changes', async () => {
    const before = await reg.archiveFiles();
    const res = await publish(reg.app, 'acme/storage/aws/1.0.0', sampleModuleTarGz({ 'extra.tf': '' }), token);
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ errors: ['acme/storage/aws 1.0.0 already exists; published versions are immutable'] });
    expect(await reg.archiveFiles()).toEqual(before);
  });

  it('lets exactly one of many concurrent publishes of the same version win', async () => {
    const before = await reg.archiveFiles();
    const archives = Array.from({ length: 6 }, (_, i) => sampleModuleTarGz({ [`race${i}.tf`]: `# ${i}\n` }));
    const results = await Promise.all(archives.map((a) => publish(reg.app, 'acme/race/aws/2.0.0', a, token)));
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([201, 409, 409, 409, 409, 409]);
    for (const r of results.filter((x) => x.status === 409)) expect(r.body.errors[0]).toMatch(/already exists/);
    expect(await reg.prisma.registryModuleVersion.count({ where: { version: '2.0.0', module: { name: 'race' } } })).toBe(1);
    // Losers removed their blobs again: exactly one new archive.
    expect((await reg.archiveFiles()).length).toBe(before.length + 1);
  });

  it('keeps latest_version right when different versions race', async () => {
    const versions = ['3.0.0', '3.2.0', '3.1.0', '3.2.0-rc.1', '2.9.9'];
    const results = await Promise.all(versions.map((v) => publish(reg.app, `acme/latest/aws/${v}`, sampleModuleTarGz(), token)));
    expect(results.map((r) => r.status)).toEqual([201, 201, 201, 201, 201]);
    const m = await reg.prisma.registryModule.findFirstOrThrow({ where: { namespace: 'acme', name: 'latest' } });
    expect(m.latestVersion).toBe('3.2.0');
  });

  it('needs a token of the namespace (or the admin token)', async () => {
    const anon = await request(reg.app).post('/v1/modules/acme/x/aws/1.0.0').set('Content-Type', 'application/gzip').send(sampleModuleTarGz());
    expect(anon.status).toBe(401);
    expect(anon.body).toEqual({ errors: ['a registry token is required: send "Authorization: Bearer <token>"'] });
    const wrong = await publish(reg.app, 'acme/x/aws/1.0.0', sampleModuleTarGz(), 'rgt_not-a-real-token');
    expect(wrong.status).toBe(401);
    expect(wrong.body).toEqual({ errors: ['invalid or expired registry token'] });
    const otherNs = await publish(reg.app, 'other/x/aws/1.0.0', sampleModuleTarGz(), token);
    expect(otherNs.status).toBe(403);
    expect(otherNs.body).toEqual({ errors: ['this token may not publish or delete in namespace other'] });
    const admin = await publish(reg.app, 'other/x/aws/1.0.0', sampleModuleTarGz(), ADMIN_TOKEN);
    expect(admin.status).toBe(201);
  });

  it('validates the address and the version (semver, no v prefix)', async () => {
    const res = await publish(reg.app, 'acme/Bad_Name-/AWS/v1.0', sampleModuleTarGz(), token);
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([
      'invalid module name "Bad_Name-": 1-64 letters, digits, "-" or "_", starting and ending with a letter or digit',
      'invalid provider "AWS": 1-64 lowercase letters or digits',
      'invalid version "v1.0": must be a semantic version such as 1.2.3 or 1.2.3-rc.1 (no "v" prefix)',
    ]);
    const noNs = await publish(reg.app, 'ghost/x/aws/1.0.0', sampleModuleTarGz(), ADMIN_TOKEN);
    expect(noNs.status).toBe(404);
    expect(noNs.body).toEqual({ errors: ['namespace ghost does not exist; an administrator creates it (POST /v1/admin/namespaces)'] });
  });

  it('reports malformed HCL naming the file, and stores nothing', async () => {
    const before = await reg.archiveFiles();
    const bad = makeTarGz([
      { name: 'main.tf', content: 'resource "a" "b" {}\n' },
      { name: 'modules/net/vars.tf', content: 'variable "x" {\n  default =\n}\n' },
    ]);
    const res = await publish(reg.app, 'acme/broken/aws/1.0.0', bad, token);
    expect(res.status).toBe(400);
    expect(res.body.errors).toHaveLength(1);
    expect(res.body.errors[0]).toMatch(/^invalid HCL in modules\/net\/vars\.tf: modules\/net\/vars\.tf:2,\d+-\d+,\d+: /);
    await expectNothingStored({ namespace: 'acme', name: 'broken', provider: 'aws' }, before);
  });

  it.each([
    ['a ../ entry', () => Promise.resolve(makeTarGz([{ name: 'main.tf', content: '' }, { name: '../../etc/cron.d/x', content: 'x' }])), /climbs out of the archive/],
    ['an absolute path', () => Promise.resolve(makeTarGz([{ name: '/etc/passwd', content: 'x' }])), /is an absolute path/],
    ['a symlink', () => Promise.resolve(makeTarGz([{ name: 'main.tf', type: '2', linkname: '/etc/shadow' }])), /is a link \(to "\/etc\/shadow"\); links are not allowed/],
    ['a zip ../ entry', async () => renameInZip(await makeZip([{ name: 'main.tf' }, { name: 'xx/evil.tf', content: 'x' }]), 'xx/evil.tf', '../evil.tf'), /(climbs out|invalid relative path|not a valid zip)/],
    ['a zip symlink', async () => makeZip([{ name: 'link.tf', content: '/etc/passwd', mode: 0o120777 }]), /is a symbolic link/],
    ['not an archive', () => Promise.resolve(Buffer.from('{"hello":"world"}')), /^unsupported archive format: upload a \.tar\.gz \(gzip-compressed tar\) or a \.zip archive$/],
    ['a truncated gzip', () => Promise.resolve(sampleModuleTarGz().subarray(0, 200)), /not a valid (gzip stream|tar archive)/],
    ['an archive with no files', () => Promise.resolve(makeTarGz([{ name: 'dir/', type: '5' }])), /^the archive contains no files$/],
  ])('refuses %s with 400 and stores nothing', async (_label, build, pattern) => {
    const before = await reg.archiveFiles();
    const res = await publish(reg.app, 'acme/evil/aws/1.0.0', await build(), token);
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body.errors).toHaveLength(1);
    expect(res.body.errors[0]).toMatch(pattern);
    await expectNothingStored({ namespace: 'acme', name: 'evil', provider: 'aws' }, before);
  });

  it('refuses an empty body', async () => {
    const res = await publish(reg.app, 'acme/empty/aws/1.0.0', Buffer.alloc(0), token);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ errors: ['empty request body: send the module archive (.tar.gz or .zip) as the body'] });
  });

  it('refuses uploads over REGISTRY_MAX_ARCHIVE_BYTES with 413 (declared and chunked)', async () => {
    const big = Buffer.alloc(reg.settings.maxArchiveBytes + 1, 7);
    const res = await publish(reg.app, 'acme/huge/aws/1.0.0', big, token);
    expect(res.status).toBe(413);
    expect(res.body).toEqual({ errors: ['request body too large'] });
    // Chunked: no Content-Length, the limit is counted while reading.
    const chunked = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(reg.app).post('/v1/modules/acme/huge/aws/1.0.0').set(bearer(token)).set('Transfer-Encoding', 'chunked');
      req.on('error', reject);
      const chunk = Buffer.alloc(256 * 1024, 1);
      let sent = 0;
      while (sent <= reg.settings.maxArchiveBytes) {
        req.write(chunk);
        sent += chunk.length;
      }
      req.end((err: unknown, r: { status: number; text: string }) => (err ? reject(err as Error) : resolve({ status: r.status, body: r.text })));
    }).catch((err: unknown) => ({ status: -1, body: String(err) }));
    // Either the 413 arrives, or the server closed the connection mid-upload after it.
    expect([413, -1]).toContain(chunked.status);
    if (chunked.status === 413) expect(JSON.parse(chunked.body)).toEqual({ errors: ['request body too large'] });
    expect(await reg.prisma.registryModule.count({ where: { name: 'huge' } })).toBe(0);
  });

  it('refuses a gzip bomb with 413 and stores nothing', async () => {
    const before = await reg.archiveFiles();
    const bomb = makeTarGz([{ name: 'main.tf', content: '' }, { name: 'zeros.bin', content: Buffer.alloc(reg.settings.maxUnpackedBytes + 1024) }]);
    expect(bomb.length).toBeLessThan(reg.settings.maxArchiveBytes);
    const res = await publish(reg.app, 'acme/bomb/aws/1.0.0', bomb, token);
    expect(res.status).toBe(413);
    expect(res.body).toEqual({ errors: [`archive unpacks to more than ${reg.settings.maxUnpackedBytes} bytes`] });
    await expectNothingStored({ namespace: 'acme', name: 'bomb', provider: 'aws' }, before);
  });

  it('refuses multipart uploads with a hint', async () => {
    const res = await request(reg.app).post('/v1/modules/acme/mp/aws/1.0.0').set(bearer(token)).attach('module', sampleModuleTarGz(), 'mod.tar.gz');
    expect(res.status).toBe(415);
    expect(res.body).toEqual({ errors: ['send the archive as the raw request body (e.g. curl --data-binary @module.tar.gz), not as a multipart form'] });
  });

  it('removes the blob again when the database write fails', async () => {
    const before = await reg.archiveFiles();
    // Make the insert fail inside the transaction: a check constraint the store does not know.
    await reg.prisma.$executeRawUnsafe(`ALTER TABLE "registry"."module_versions" ADD CONSTRAINT "test_no_9" CHECK ("version" <> '9.9.9')`);
    try {
      const res = await publish(reg.app, 'acme/dbfail/aws/9.9.9', sampleModuleTarGz(), token);
      expect(res.status).toBe(500);
      expect(res.body.errors[0]).toMatch(/^internal error \(request id [^)]+\)$/);
    } finally {
      await reg.prisma.$executeRawUnsafe(`ALTER TABLE "registry"."module_versions" DROP CONSTRAINT "test_no_9"`);
    }
    await expectNothingStored({ namespace: 'acme', name: 'dbfail', provider: 'aws' }, before);
  });
});

describe('delete a version', () => {
  it('deletes, recomputes latest, removes the blob, and drops the module with its last version', async () => {
    await publish(reg.app, 'acme/del/aws/1.0.0', sampleModuleTarGz(), token).expect(201);
    await publish(reg.app, 'acme/del/aws/1.1.0', sampleModuleTarGz(), token).expect(201);
    const files = await reg.archiveFiles();

    const anon = await request(reg.app).delete('/v1/modules/acme/del/aws/1.1.0');
    expect(anon.status).toBe(401);
    const otherToken = (await createToken(reg.app, { namespace: 'other' })).token;
    const forbidden = await request(reg.app).delete('/v1/modules/acme/del/aws/1.1.0').set(bearer(otherToken));
    expect(forbidden.status).toBe(403);

    const del = await request(reg.app).delete('/v1/modules/acme/del/aws/1.1.0').set(bearer(token));
    expect(del.status).toBe(204);
    expect(del.text).toBe('');
    expect((await reg.archiveFiles()).length).toBe(files.length - 1);
    const latest = await request(reg.app).get('/v1/modules/acme/del/aws');
    expect(latest.status).toBe(200);
    expect(latest.body.version).toBe('1.0.0');
    expect(latest.body.versions).toEqual(['1.0.0']);

    const again = await request(reg.app).delete('/v1/modules/acme/del/aws/1.1.0').set(bearer(token));
    expect(again.status).toBe(404);
    expect(again.body).toEqual({ errors: ['module acme/del/aws version 1.1.0 not found'] });

    // Re-publishing a deleted version is allowed (it is a new version row and archive).
    await publish(reg.app, 'acme/del/aws/1.1.0', sampleModuleTarGz(), token).expect(201);
    await request(reg.app).delete('/v1/modules/acme/del/aws/1.1.0').set(bearer(token)).expect(204);

    await request(reg.app).delete('/v1/modules/acme/del/aws/1.0.0').set(bearer(token)).expect(204);
    expect(await reg.prisma.registryModule.count({ where: { namespace: 'acme', name: 'del' } })).toBe(0);
    const gone = await request(reg.app).get('/v1/modules/acme/del/aws/versions');
    expect(gone.status).toBe(404);
    expect(gone.body).toEqual({ errors: ['module acme/del/aws not found'] });
  });
});
