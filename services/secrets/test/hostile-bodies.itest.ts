// Issue 29 "Found": request bodies that used to be a 500 or a silent change in the secrets
// service. Deep JSON in KV writes (v1, v2, patch) overflowed the stack in canonicalJson; a
// `__proto__` key was accepted and dropped. The kit's body policy (docs/operations.md
// "Request bodies") answers 400 in Vault's shape, and `__proto__` is data end to end.
import request from 'supertest';
import { DEFAULT_MAX_BODY_DEPTH } from '@selfstack/http-kit';
import { initAndUnseal, startHarness, type Harness } from './harness';

const nested = (levels: number, leaf = '1') => '{"a":'.repeat(levels) + leaf + '}'.repeat(levels);

describe('hostile request bodies (secrets)', () => {
  let h: Harness;
  let root = '';
  const as = (t: string) => ({ 'X-Vault-Token': t });
  beforeAll(async () => {
    h = await startHarness();
    root = (await initAndUnseal(h.app)).rootToken;
    await request(h.app).post('/v1/sys/mounts/kv1').set(as(root)).send({ type: 'kv' }).expect(204);
  });
  afterAll(async () => {
    await h.close();
  });

  const send = (method: 'put' | 'post' | 'patch', path: string, body: string, type = 'application/json') =>
    request(h.app)[method](path).set(as(root)).set('Content-Type', type).send(body);

  it('answers 4,500 nested levels in a KV write (v1, v2, patch) with a 400 naming the depth', async () => {
    const deep = nested(4500);
    await request(h.app).post('/v1/secret/data/deep').set(as(root)).send({ data: { a: 1 } }).expect(200);
    for (const [method, path, body, type] of [
      ['put', '/v1/kv1/deep', deep, 'application/json'],
      ['post', '/v1/secret/data/deep', `{"data":${deep}}`, 'application/json'],
      ['patch', '/v1/secret/data/deep', `{"data":${deep}}`, 'application/merge-patch+json'],
    ] as const) {
      const r = await send(method, path, body, type);
      expect([method, path, r.status]).toEqual([method, path, 400]);
      expect(r.headers['content-type']).toMatch(/^application\/json/);
      expect(r.body).toEqual({ errors: [expect.stringMatching(new RegExp(`^failed to parse JSON input: field (data\\.)?a(\\.a)*\\.\\.\\.\\(\\d+ levels\\)\\.\\.\\.a(\\.a)*: nesting deeper than ${DEFAULT_MAX_BODY_DEPTH} levels$`))] });
    }
    // Nothing was written: version 1 is still the current one.
    const read = await request(h.app).get('/v1/secret/data/deep').set(as(root)).expect(200);
    expect(read.body.data).toMatchObject({ data: { a: 1 }, metadata: { version: 1 } });
    // At the limit, a write stores and reads back exactly.
    const atLimit = nested(DEFAULT_MAX_BODY_DEPTH - 1, '"leaf"');
    await send('put', '/v1/kv1/limit', atLimit).expect(204);
    const back = await request(h.app).get('/v1/kv1/limit').set(as(root)).expect(200);
    expect(JSON.stringify(back.body.data)).toBe(atLimit);
  });

  it('keeps a __proto__ key as data through KV v1, v2 writes and patches', async () => {
    const body = '{"__proto__":{"polluted":"yes"},"constructor":"c","prototype":{"__proto__":"x"},"plain":"p"}';
    await send('put', '/v1/kv1/proto', body).expect(204);
    let r = await request(h.app).get('/v1/kv1/proto').set(as(root)).expect(200);
    expect(r.text).toContain('"data":{"__proto__":{"polluted":"yes"},"constructor":"c","plain":"p","prototype":{"__proto__":"x"}}');

    await send('post', '/v1/secret/data/proto', `{"data":${body}}`).expect(200);
    r = await request(h.app).get('/v1/secret/data/proto').set(as(root)).expect(200);
    expect(r.text).toContain('"data":{"data":{"__proto__":{"polluted":"yes"},"constructor":"c","plain":"p","prototype":{"__proto__":"x"}}');

    await send('patch', '/v1/secret/data/proto', '{"data":{"__proto__":{"more":"1"},"prototype":null}}', 'application/merge-patch+json').expect(200);
    r = await request(h.app).get('/v1/secret/data/proto').set(as(root)).expect(200);
    expect(r.text).toContain('"data":{"data":{"__proto__":{"more":"1","polluted":"yes"},"constructor":"c","plain":"p"}');
    expect(r.body.data.metadata.version).toBe(2);

    // Subkeys list it too; nothing leaked into Object.prototype.
    r = await request(h.app).get('/v1/secret/subkeys/proto').set(as(root)).expect(200);
    expect(r.text).toContain('"subkeys":{"__proto__":{"more":null,"polluted":null},"constructor":null,"plain":null}');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('answers NUL, lone surrogates and inexact big integers with a 400 naming the field', async () => {
    let r = await send('post', '/v1/secret/data/nul', '{"data":{"k":"a\\u0000b"}}');
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ errors: ['failed to parse JSON input: field data.k contains a NUL character (\\u0000), which cannot be stored'] });
    r = await send('put', '/v1/kv1/sur', '{"x":"\\udfff"}');
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ errors: ['failed to parse JSON input: field x contains a lone UTF-16 surrogate, which is not valid Unicode'] });
    r = await send('put', '/v1/kv1/big', '{"n":9007199254740993}');
    expect(r.status).toBe(400);
    expect(r.body.errors[0]).toMatch(/^failed to parse JSON input: number 9007199254740993 cannot be represented exactly/);
    // An integer beyond 2^53 that a double holds exactly comes back as sent.
    await send('put', '/v1/kv1/big', '{"n":1764244966123000000}').expect(204);
    r = await request(h.app).get('/v1/kv1/big').set(as(root)).expect(200);
    expect(r.text).toContain('"data":{"n":1764244966123000000}');
    for (const path of ['/v1/kv1/sur', '/v1/secret/data/nul']) expect((await request(h.app).get(path).set(as(root))).status).toBe(404);
    // Form bodies (Vault accepts them for writes) follow the same NUL rule.
    r = await request(h.app).put('/v1/kv1/form').set(as(root)).type('form').send('foo=a%00b');
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ errors: ['form field "foo" contains a NUL character (\\u0000), which cannot be stored'] });
    await request(h.app).put('/v1/kv1/form').set(as(root)).type('form').send('foo=ab').expect(204);
  });

  // Found by the body sweep: a duration beyond Go's time.Duration (9e18 s, an exact double)
  // was stored, then every KV answer computing a deletion_time threw (500), and an AppRole
  // role with such a token TTL could no longer be read.
  it('refuses durations longer than time.Duration holds instead of storing them', async () => {
    let r = await send('post', '/v1/secret/config', '{"delete_version_after":8999999999987000000}');
    expect(r.status).toBe(400);
    expect(r.body.errors).toHaveLength(1);
    r = await send('post', '/v1/secret/metadata/dva', '{"delete_version_after":"3000000000000h"}');
    expect(r.status).toBe(400);
    await request(h.app).post('/v1/secret/data/dva').set(as(root)).send({ data: { a: 1 } }).expect(200);
    await request(h.app).post('/v1/sys/auth/approle').set(as(root)).send({ type: 'approle' }).expect(204);
    r = await send('post', '/v1/auth/approle/role/ttl', '{"token_ttl":8999999999987000000}');
    expect(r.status).toBe(400);
    expect(r.body.errors).toHaveLength(1);
    await send('post', '/v1/auth/approle/role/ttl', '{"token_ttl":9223372036}').expect(204);
    const role = await request(h.app).get('/v1/auth/approle/role/ttl').set(as(root));
    expect(role.status).toBe(200);
    expect(role.body.data.token_ttl).toBe(9223372036);
  });
});
