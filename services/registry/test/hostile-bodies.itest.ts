// Issue 29 "Found" (registry): a NUL in the admin namespace `owner` or the admin token
// `description` was a 500 from PostgreSQL (22021). The kit's body policy answers 400 in the
// registry's `{"errors":[...]}` naming the field, before anything is stored.
import request from 'supertest';
import { ADMIN_TOKEN, bearer, startRegistry, type Registry } from './registry-harness';

jest.setTimeout(60_000);

let reg: Registry;
beforeAll(async () => {
  reg = await startRegistry();
}, 120_000);
afterAll(async () => {
  await reg.close();
}, 120_000);

const post = (path: string, body: string) => request(reg.app).post(path).set(bearer(ADMIN_TOKEN)).set('Content-Type', 'application/json').send(body);

describe('hostile admin bodies', () => {
  it('answers a NUL in a namespace owner with a 400 naming the field, and creates nothing', async () => {
    const res = await post('/v1/admin/namespaces', '{"name":"nulns","owner":"Acme\\u0000Corp"}');
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body).toEqual({ errors: ['failed to parse JSON input: field owner contains a NUL character (\\u0000), which cannot be stored'] });
    const list = await request(reg.app).get('/v1/admin/namespaces').set(bearer(ADMIN_TOKEN));
    expect(JSON.stringify(list.body)).not.toContain('nulns');
  });

  it('answers a NUL in a token description with a 400 naming the field', async () => {
    const res = await post('/v1/admin/tokens', '{"description":"ci\\u0000"}');
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ errors: ['failed to parse JSON input: field description contains a NUL character (\\u0000), which cannot be stored'] });
    const list = await request(reg.app).get('/v1/admin/tokens').set(bearer(ADMIN_TOKEN));
    expect(list.status).toBe(200);
    expect(list.body.tokens.filter((t: { description: string }) => t.description.startsWith('ci'))).toEqual([]);
  });

  it('answers lone surrogates, deep nesting and inexact big integers with a 400', async () => {
    const sur = await post('/v1/admin/namespaces', '{"name":"surns","owner":"\\udc00"}');
    expect(sur.status).toBe(400);
    expect(sur.body).toEqual({ errors: ['failed to parse JSON input: field owner contains a lone UTF-16 surrogate, which is not valid Unicode'] });
    const deep = await post('/v1/admin/tokens', `{"description":${'{"a":'.repeat(200)}1${'}'.repeat(200)}}`);
    expect(deep.status).toBe(400);
    expect(deep.body.errors[0]).toMatch(/nesting deeper than 128 levels$/);
    const big = await post('/v1/admin/tokens', '{"ttl_seconds":9007199254740993}');
    expect(big.status).toBe(400);
    expect(big.body.errors[0]).toMatch(/^failed to parse JSON input: number 9007199254740993 cannot be represented exactly/);
  });
});
