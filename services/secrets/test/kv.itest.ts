// Issue 3, item 6 (KV v1 and v2) and item 7 (general request rules).
import request from 'supertest';
import { initAndUnseal, startHarness, type Harness } from './harness';

describe('KV engines', () => {
  let h: Harness;
  let root = '';
  const as = (t: string) => ({ 'X-Vault-Token': t });
  beforeAll(async () => {
    h = await startHarness();
    root = (await initAndUnseal(h.app)).rootToken;
    const v1 = await request(h.app).post('/v1/sys/mounts/kv1').set(as(root)).send({ type: 'kv' });
    expect(v1.status).toBe(204);
  });
  afterAll(async () => {
    await h.close();
  });

  describe('v1', () => {
    it('write (204), read with lease, list, delete', async () => {
      let r = await request(h.app).put('/v1/kv1/app/one').set(as(root)).send({ foo: 'bar', ttl: '1h' });
      expect(r.status).toBe(204);
      expect(r.text).toBe('');
      expect(r.headers['cache-control']).toBe('no-store');
      await request(h.app).post('/v1/kv1/app/two').set(as(root)).send({ z: 1, a: { y: 2, b: 3 } }).expect(204);
      await request(h.app).post('/v1/kv1/app/dir/three').set(as(root)).send({ x: true }).expect(204);

      r = await request(h.app).get('/v1/kv1/app/one').set(as(root));
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ data: { foo: 'bar', ttl: '1h' }, lease_duration: 3600, lease_id: '', renewable: false, mount_type: 'kv' });
      r = await request(h.app).get('/v1/kv1/app/two').set(as(root));
      expect(r.body.lease_duration).toBe(2764800);
      // Go encodes maps with sorted keys.
      expect(r.text).toContain('"data":{"a":{"b":3,"y":2},"z":1}');

      r = await request(h.app).get('/v1/kv1/app?list=true').set(as(root));
      expect(r.status).toBe(200);
      expect(r.body.data).toEqual({ keys: ['dir/', 'one', 'two'] });
      r = await request(h.app).get('/v1/kv1/app/?list=1').set(as(root));
      expect(r.body.data.keys).toEqual(['dir/', 'one', 'two']);
      r = await request(h.app).get('/v1/kv1/nothing/?list=true').set(as(root));
      expect(r.status).toBe(404);
      expect(r.text).toBe('{"errors":[]}\n');

      r = await request(h.app).delete('/v1/kv1/app/one').set(as(root));
      expect(r.status).toBe(204);
      expect((await request(h.app).get('/v1/kv1/app/one').set(as(root))).status).toBe(404);
      // Deleting a missing key is 204 too (no existence oracle).
      expect((await request(h.app).delete('/v1/kv1/app/never').set(as(root))).status).toBe(204);
      r = await request(h.app).put('/v1/kv1/app/empty').set(as(root)).send({});
      expect(r.status).toBe(400);
      expect(r.body).toEqual({ errors: ['missing data fields'] });
    });
  });

  describe('v2', () => {
    it('write returns version metadata; read returns data + metadata', async () => {
      const w = await request(h.app).post('/v1/secret/data/my-secret').set(as(root)).send({ data: { foo: 'bar', zip: 'zap' } });
      expect(w.status).toBe(200);
      expect(w.body.data).toEqual({ created_time: expect.stringMatching(/^\d{4}-\d\d-\d\dT[\d:.]+Z$/), custom_metadata: null, deletion_time: '', destroyed: false, version: 1 });
      expect(Object.keys(w.body.data)).toEqual(['created_time', 'custom_metadata', 'deletion_time', 'destroyed', 'version']);
      const r = await request(h.app).get('/v1/secret/data/my-secret').set(as(root));
      expect(r.status).toBe(200);
      expect(r.body.data).toEqual({ data: { foo: 'bar', zip: 'zap' }, metadata: { ...w.body.data } });
      expect(r.body.mount_type).toBe('kv');
      expect(r.body.warnings).toBeNull();
    });

    it('check-and-set: create-only, mismatch, required, parse error', async () => {
      let r = await request(h.app).post('/v1/secret/data/cas').set(as(root)).send({ options: { cas: 0 }, data: { v: 1 } });
      expect(r.status).toBe(200);
      r = await request(h.app).post('/v1/secret/data/cas').set(as(root)).send({ options: { cas: 0 }, data: { v: 2 } });
      expect(r.status).toBe(400);
      expect(r.body).toEqual({ errors: ['check-and-set parameter did not match the current version'] });
      r = await request(h.app).post('/v1/secret/data/cas').set(as(root)).send({ options: { cas: '1' }, data: { v: 2 } });
      expect(r.status).toBe(200);
      expect(r.body.data.version).toBe(2);
      r = await request(h.app).post('/v1/secret/data/cas').set(as(root)).send({ options: { cas: 'x' }, data: { v: 2 } });
      expect(r.body).toEqual({ errors: ['error parsing check-and-set parameter'] });
      await request(h.app).post('/v1/secret/metadata/cas').set(as(root)).send({ cas_required: true }).expect(204);
      r = await request(h.app).post('/v1/secret/data/cas').set(as(root)).send({ data: { v: 3 } });
      expect(r.status).toBe(400);
      expect(r.body).toEqual({ errors: ['check-and-set parameter required for this call'] });
    });

    it('concurrent writers with the same cas: exactly one wins', async () => {
      await request(h.app).post('/v1/secret/data/race').set(as(root)).send({ data: { n: 0 } }).expect(200);
      const attempts = await Promise.all(
        Array.from({ length: 8 }, (_, i) => request(h.app).post('/v1/secret/data/race').set(as(root)).send({ options: { cas: 1 }, data: { n: i } })),
      );
      const ok = attempts.filter((a) => a.status === 200);
      expect(ok).toHaveLength(1);
      expect(attempts.filter((a) => a.status === 400).every((a) => a.body.errors[0] === 'check-and-set parameter did not match the current version')).toBe(true);
      // Concurrent creators without cas all succeed with distinct versions.
      const creators = await Promise.all(Array.from({ length: 6 }, (_, i) => request(h.app).post('/v1/secret/data/fresh').set(as(root)).send({ data: { i } })));
      expect(creators.map((c) => c.status)).toEqual([200, 200, 200, 200, 200, 200]);
      expect(creators.map((c) => c.body.data.version as number).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6]);
    });

    it('reads a version; version 0 is latest; unknown versions 404', async () => {
      await request(h.app).post('/v1/secret/data/ver').set(as(root)).send({ data: { n: 1 } });
      await request(h.app).post('/v1/secret/data/ver').set(as(root)).send({ data: { n: 2 } });
      expect((await request(h.app).get('/v1/secret/data/ver?version=1').set(as(root))).body.data.data).toEqual({ n: 1 });
      expect((await request(h.app).get('/v1/secret/data/ver?version=0').set(as(root))).body.data.data).toEqual({ n: 2 });
      const missing = await request(h.app).get('/v1/secret/data/ver?version=9').set(as(root));
      expect(missing.status).toBe(404);
      expect(missing.body).toEqual({ errors: [] });
      expect((await request(h.app).get('/v1/secret/data/nope').set(as(root))).body).toEqual({ errors: [] });
    });

    it('soft delete, undelete, destroy', async () => {
      await request(h.app).post('/v1/secret/data/life').set(as(root)).send({ data: { n: 1 } });
      await request(h.app).post('/v1/secret/data/life').set(as(root)).send({ data: { n: 2 } });
      expect((await request(h.app).delete('/v1/secret/data/life').set(as(root))).status).toBe(204);
      let r = await request(h.app).get('/v1/secret/data/life').set(as(root));
      expect(r.status).toBe(404);
      expect(r.body.errors).toBeUndefined();
      expect(r.body.data.data).toBeNull();
      expect(r.body.data.metadata).toMatchObject({ version: 2, destroyed: false });
      expect(r.body.data.metadata.deletion_time).not.toBe('');
      expect(typeof r.body.request_id).toBe('string');

      r = await request(h.app).post('/v1/secret/undelete/life').set(as(root)).send({ versions: [2] });
      expect(r.status).toBe(204);
      expect((await request(h.app).get('/v1/secret/data/life').set(as(root))).body.data.data).toEqual({ n: 2 });

      r = await request(h.app).post('/v1/secret/delete/life').set(as(root)).send({ versions: [1] });
      expect(r.status).toBe(204);
      expect((await request(h.app).get('/v1/secret/data/life?version=1').set(as(root))).status).toBe(404);

      r = await request(h.app).put('/v1/secret/destroy/life').set(as(root)).send({ versions: '1,2' });
      expect(r.status).toBe(204);
      r = await request(h.app).get('/v1/secret/data/life').set(as(root));
      expect(r.status).toBe(404);
      expect(r.body.data.metadata).toMatchObject({ version: 2, destroyed: true, deletion_time: '' });
      // Destroyed versions cannot be undeleted.
      await request(h.app).post('/v1/secret/undelete/life').set(as(root)).send({ versions: [2] }).expect(204);
      expect((await request(h.app).get('/v1/secret/data/life').set(as(root))).status).toBe(404);

      expect((await request(h.app).post('/v1/secret/delete/life').set(as(root)).send({})).body).toEqual({ errors: ['No version number provided'] });
      expect((await request(h.app).post('/v1/secret/undelete/life').set(as(root)).send({ versions: [] })).body).toEqual({ errors: ['No version number provided'] });
      expect((await request(h.app).post('/v1/secret/destroy/life').set(as(root)).send({})).body).toEqual({ errors: ['no version number provided'] });
      // Soft-deleted keys keep their version counter: cas must match it.
      r = await request(h.app).post('/v1/secret/data/life').set(as(root)).send({ options: { cas: 2 }, data: { n: 3 } });
      expect(r.body.data.version).toBe(3);
    });

    it('metadata: read, write, custom_metadata validation, list, delete', async () => {
      await request(h.app).post('/v1/secret/data/team/a').set(as(root)).send({ data: { a: 1 } });
      await request(h.app).post('/v1/secret/data/team/b/c').set(as(root)).send({ data: { c: 1 } });
      let r = await request(h.app)
        .post('/v1/secret/metadata/team/a')
        .set(as(root))
        .send({ max_versions: 3, delete_version_after: '3h25m19s', custom_metadata: { owner: 'jdoe', mission_critical: 'false' } });
      expect(r.status).toBe(204);
      r = await request(h.app).get('/v1/secret/metadata/team/a').set(as(root));
      expect(r.status).toBe(200);
      expect(Object.keys(r.body.data)).toEqual([
        'cas_required', 'created_time', 'current_version', 'custom_metadata', 'delete_version_after', 'max_versions', 'oldest_version', 'updated_time', 'versions',
      ]);
      expect(r.body.data).toMatchObject({
        cas_required: false,
        current_version: 1,
        delete_version_after: '3h25m19s',
        max_versions: 3,
        oldest_version: 0,
        custom_metadata: { mission_critical: 'false', owner: 'jdoe' },
      });
      expect(Object.keys(r.body.data.versions)).toEqual(['1']);
      // The custom metadata is reported on data reads too.
      const read = await request(h.app).get('/v1/secret/data/team/a').set(as(root));
      expect(read.body.data.metadata.custom_metadata).toEqual({ mission_critical: 'false', owner: 'jdoe' });

      const tooMany = Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`k${i}`, 'v']));
      r = await request(h.app).post('/v1/secret/metadata/team/a').set(as(root)).send({ custom_metadata: tooMany });
      expect(r.status).toBe(400);
      expect(r.body.errors[0]).toBe('custom_metadata validation failed: payload must contain at most 64 keys, provided 65');

      r = await request(h.app).get('/v1/secret/metadata/team?list=true').set(as(root));
      expect(r.body.data.keys).toEqual(['a', 'b/']);
      r = await request(h.app).get('/v1/secret/metadata/?list=true').set(as(root));
      expect(r.body.data.keys).toEqual(expect.arrayContaining(['team/', 'my-secret']));
      expect((await request(h.app).get('/v1/secret/metadata/none/?list=true').set(as(root))).status).toBe(404);

      // Metadata for a key that has no versions yet.
      await request(h.app).post('/v1/secret/metadata/only-meta').set(as(root)).send({ max_versions: 2 }).expect(204);
      r = await request(h.app).get('/v1/secret/metadata/only-meta').set(as(root));
      expect(r.body.data).toMatchObject({ current_version: 0, versions: {} });

      expect((await request(h.app).delete('/v1/secret/metadata/team/a').set(as(root))).status).toBe(204);
      expect((await request(h.app).get('/v1/secret/data/team/a').set(as(root))).status).toBe(404);
      expect((await request(h.app).get('/v1/secret/metadata/team/a').set(as(root))).status).toBe(404);
      r = await request(h.app).post('/v1/secret/data/team/a').set(as(root)).send({ data: { again: true } });
      expect(r.body.data.version).toBe(1);
    });

    it('prunes beyond max_versions', async () => {
      await request(h.app).post('/v1/secret/metadata/pruned').set(as(root)).send({ max_versions: 2 }).expect(204);
      for (let i = 1; i <= 4; i++) await request(h.app).post('/v1/secret/data/pruned').set(as(root)).send({ data: { i } }).expect(200);
      const meta = await request(h.app).get('/v1/secret/metadata/pruned').set(as(root));
      expect(Object.keys(meta.body.data.versions)).toEqual(['3', '4']);
      expect(meta.body.data.oldest_version).toBe(3);
      expect((await request(h.app).get('/v1/secret/data/pruned?version=1').set(as(root))).status).toBe(404);
      expect((await request(h.app).get('/v1/secret/data/pruned?version=3').set(as(root))).body.data.data).toEqual({ i: 3 });
    });

    it('config read/write and the mount-wide default of 10 versions', async () => {
      let r = await request(h.app).get('/v1/secret/config').set(as(root));
      expect(r.body.data).toEqual({ cas_required: false, delete_version_after: '0s', max_versions: 0 });
      await request(h.app).post('/v1/secret/config').set(as(root)).send({ max_versions: 5, delete_version_after: '1h' }).expect(204);
      r = await request(h.app).get('/v1/secret/config').set(as(root));
      expect(r.body.data).toEqual({ cas_required: false, delete_version_after: '1h0m0s', max_versions: 5 });
      await request(h.app).post('/v1/secret/config').set(as(root)).send({ max_versions: 0, delete_version_after: 0 }).expect(204);
      for (let i = 1; i <= 12; i++) await request(h.app).post('/v1/secret/data/ten').set(as(root)).send({ data: { i } });
      const meta = await request(h.app).get('/v1/secret/metadata/ten').set(as(root));
      expect(Object.keys(meta.body.data.versions)).toHaveLength(10);
    });

    it('PATCH merges (RFC 7396) and needs the merge-patch content type', async () => {
      await request(h.app).post('/v1/secret/data/patchme').set(as(root)).send({ data: { a: 1, nested: { x: 1, y: 2 }, gone: true } });
      let r = await request(h.app).patch('/v1/secret/data/patchme').set(as(root)).set('Content-Type', 'application/json').send({ data: { b: 2 } });
      expect(r.status).toBe(415);
      expect(r.body).toEqual({ errors: ['PATCH requires Content-Type of application/merge-patch+json, provided application/json'] });
      r = await request(h.app)
        .patch('/v1/secret/data/patchme')
        .set(as(root))
        .set('Content-Type', 'application/merge-patch+json')
        .send(JSON.stringify({ data: { b: 2, nested: { y: null }, gone: null } }));
      expect(r.status).toBe(200);
      expect(r.body.data.version).toBe(2);
      r = await request(h.app).get('/v1/secret/data/patchme').set(as(root));
      expect(r.body.data.data).toEqual({ a: 1, b: 2, nested: { x: 1 } });
      // Issue 28, item 4: the spec's error body where Vault sends none.
      r = await request(h.app).patch('/v1/secret/data/absent').set(as(root)).set('Content-Type', 'application/merge-patch+json').send('{"data":{"a":1}}');
      expect(r.status).toBe(404);
      expect(r.headers['content-type']).toBe('application/json');
      expect(r.body).toEqual({ errors: [] });
      r = await request(h.app).patch('/v1/secret/metadata/absent').set(as(root)).set('Content-Type', 'application/merge-patch+json').send('{"max_versions":3}');
      expect(r.status).toBe(404);
      expect(r.body).toEqual({ errors: [] });
    });

    it('subkeys', async () => {
      await request(h.app).post('/v1/secret/data/sub').set(as(root)).send({ data: { foo: 'x', bar: { baz: { q: 1 } }, quux: [1] } });
      let r = await request(h.app).get('/v1/secret/subkeys/sub').set(as(root));
      expect(r.status).toBe(200);
      expect(r.body.data.subkeys).toEqual({ bar: { baz: { q: null } }, foo: null, quux: null });
      r = await request(h.app).get('/v1/secret/subkeys/sub?depth=1').set(as(root));
      expect(r.body.data.subkeys).toEqual({ bar: null, foo: null, quux: null });
      expect(r.body.data.metadata.version).toBe(1);
    });

    it('invalid v2 paths and the mount root answer 404 with a warning', async () => {
      let r = await request(h.app).get('/v1/secret/foo').set(as(root));
      expect(r.status).toBe(404);
      expect(r.body.warnings[0]).toMatch(/^Invalid path for a versioned K\/V secrets engine/);
      expect(r.body.errors).toBeUndefined();
      r = await request(h.app).delete('/v1/secret/data').set(as(root));
      expect(r.status).toBe(404);
      expect(r.body.warnings).toEqual(['Non-listing operations on the root of a K/V v2 mount are not supported.']);
    });
  });

  describe('general request rules', () => {
    it('reports unknown parameters as a warning (200 instead of 204)', async () => {
      const r = await request(h.app).post('/v1/secret/metadata/warned').set(as(root)).send({ max_versions: 1, mount_point: 'secret', bogus: 1 });
      expect(r.status).toBe(200);
      expect(r.body.warnings).toEqual(['Endpoint ignored these unrecognized parameters: [bogus mount_point]']);
      expect(r.body.data).toBeNull();
    });

    it('malformed JSON, non-object bodies and huge bodies are 4xx, never 500', async () => {
      let r = await request(h.app).post('/v1/secret/data/x').set(as(root)).set('Content-Type', 'application/json').send('{"data": {');
      expect(r.status).toBe(400);
      expect(r.body.errors[0]).toMatch(/^failed to parse JSON input: /);
      r = await request(h.app).post('/v1/secret/data/x').set(as(root)).send('[1,2]');
      expect(r.status).toBe(400);
      r = await request(h.app).post('/v1/secret/data/x').set(as(root)).send({ data: 'string' });
      expect(r.status).toBe(400);
      r = await request(h.app).post('/v1/secret/data/x').set(as(root)).send({});
      expect(r.body).toEqual({ errors: ['no data provided'] });
    });

    it('path tricks: .., trailing periods, %2F', async () => {
      await request(h.app).post('/v1/secret/data/b').set(as(root)).send({ data: { b: 1 } }).expect(200);
      // `..` is a segment ending in a period: 404, never resolved to another key.
      let r = await request(h.app).get('/v1/secret/data/a/../b').set(as(root));
      expect(r.status).toBe(404);
      expect(r.body).toEqual({ errors: ['1 error occurred:\n\t* unsupported path\n\n'] });
      r = await request(h.app).get('/v1/secret/data/a%2F..%2Fb').set(as(root));
      expect(r.status).toBe(404);
      expect(r.body).toEqual({ errors: ['1 error occurred:\n\t* unsupported path\n\n'] });
      r = await request(h.app).post('/v1/secret/data/name.').set(as(root)).send({ data: { a: 1 } });
      expect(r.status).toBe(404);
      expect(r.body).toEqual({ errors: ['1 error occurred:\n\t* unsupported path\n\n'] });
      // %2F is a slash: the key is a/b, listed under a/.
      await request(h.app).post('/v1/secret/data/enc%2Fkey').set(as(root)).send({ data: { a: 1 } }).expect(200);
      r = await request(h.app).get('/v1/secret/data/enc/key').set(as(root));
      expect(r.body.data.data).toEqual({ a: 1 });
      // A literal percent sign in a key survives.
      await request(h.app).post('/v1/secret/data/100%25').set(as(root)).send({ data: { p: 1 } }).expect(200);
      expect((await request(h.app).get('/v1/secret/metadata/?list=true').set(as(root))).body.data.keys).toContain('100%');
      r = await request(h.app).get('/v1/secret/data/%E0%A4%A').set(as(root));
      expect(r.status).toBe(400);
    });

    it('bad field types and odd input answer 400, never 500', async () => {
      const cases: [string, string, Record<string, unknown> | string][] = [
        ['post', '/v1/secret/data/a%00b', { data: { a: 1 } }],
        ['post', '/v1/sys/mounts/odd', { type: 'kv', config: 'string' }],
        ['post', '/v1/auth/token/create', { meta: { a: { nested: true } } }],
        ['post', '/v1/auth/token/create', { ttl: 'forever' }],
        ['post', '/v1/secret/data/x', { data: { a: 1 }, options: 'cas' }],
        ['get', '/v1/secret/subkeys/sub?depth=abc', {}],
        ['post', '/v1/secret/metadata/x', { max_versions: 'ten' }],
        ['post', '/v1/secret/metadata/x', { delete_version_after: '5 parsecs' }],
        ['post', '/v1/secret/destroy/x', { versions: ['one'] }],
        ['put', '/v1/sys/policies/acl/p', { policy: 42 }],
        ['post', '/v1/sys/capabilities-self', {}],
      ];
      for (const [method, url, body] of cases) {
        const req = method === 'get' ? request(h.app).get(url) : method === 'put' ? request(h.app).put(url).send(body) : request(h.app).post(url).send(body);
        const r = await req.set(as(root));
        expect({ url, status: r.status }).toEqual({ url, status: 400 });
        expect(Array.isArray(r.body.errors) && r.body.errors.length > 0).toBe(true);
      }
    });

    it('405 for unsupported methods and operations', async () => {
      let r = await request(h.app).put('/v1/secret/subkeys/sub').set(as(root)).send({});
      expect(r.status).toBe(405);
      expect(r.body).toEqual({ errors: ['1 error occurred:\n\t* unsupported operation\n\n'] });
      r = await request(h.app).delete('/v1/sys/init');
      expect(r.status).toBe(405);
      expect(r.body).toEqual({ errors: [] });
    });

    it('no mount: 404 no handler (for a privileged token)', async () => {
      const r = await request(h.app).get('/v1/nomount/data/x/y').set(as(root));
      expect(r.status).toBe(404);
      expect(r.body).toEqual({ errors: ['no handler for route "nomount/data/x/y". route entry not found.'] });
    });

    it('help and OpenAPI for a path', async () => {
      const r = await request(h.app).get('/v1/secret/data/foo?help=1').set(as(root));
      expect(r.status).toBe(200);
      expect(typeof r.body.help).toBe('string');
      expect(r.body.openapi.openapi).toMatch(/^3\./);
      expect(r.body.see_also).toBeNull();
      const denied = await request(h.app).get('/v1/secret/data/foo?help=1');
      expect(denied.status).toBe(403);
    });
  });
});
