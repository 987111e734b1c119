// Issue 29 "Found" (boxes): a NUL in a JSON string was a 500 from PostgreSQL (22021) on box
// create/update, version create/update and authenticate. The kit's body policy refuses it
// with a 400 in the boxes error shape naming the field, before anything is stored.
import request from 'supertest';
import { auth, createHarness, userWithToken, type Harness } from './harness';

let h: Harness;
let token = '';

beforeAll(async () => {
  h = await createHarness();
  token = await userWithToken(h, 'nora');
  await request(h.app).post('/api/v1/boxes').set(auth(token)).send({ box: { name: 'kept', is_private: false, short_description: 'before' } }).expect(201);
  await request(h.app).post('/api/v1/box/nora/kept/versions').set(auth(token)).send({ version: { version: '1.0.0', description: 'before' } }).expect(201);
});
afterAll(async () => {
  await h.close();
});

const NUL = 'contains a NUL character (\\u0000), which cannot be stored';

describe('NUL characters in boxes bodies', () => {
  const cases: [string, 'post' | 'put', string, string, string][] = [
    ['box create short_description', 'post', '/api/v1/boxes', '{"box":{"name":"nul1","short_description":"a\\u0000b"}}', 'box.short_description'],
    ['box create description', 'post', '/api/v1/boxes', '{"box":{"name":"nul2","description":"\\u0000"}}', 'box.description'],
    ['box update short_description', 'put', '/api/v1/box/nora/kept', '{"box":{"short_description":"x\\u0000"}}', 'box.short_description'],
    ['box update description (flat)', 'put', '/api/v1/box/nora/kept', '{"description":"x\\u0000"}', 'description'],
    ['version create description', 'post', '/api/v1/box/nora/kept/versions', '{"version":{"version":"2.0.0","description":"\\u0000"}}', 'version.description'],
    ['version update description', 'put', '/api/v1/box/nora/kept/version/1.0.0', '{"version":{"description":"d\\u0000"}}', 'version.description'],
    ['authenticate user.login', 'post', '/api/v1/authenticate', '{"user":{"login":"nora\\u0000","password":"nora-password"}}', 'user.login'],
    ['authenticate token.description', 'post', '/api/v1/authenticate', '{"user":{"login":"nora","password":"nora-password"},"token":{"description":"\\u0000"}}', 'token.description'],
  ];
  it.each(cases)('%s: 400 naming the field', async (_name, method, path, body, field) => {
    const res = await request(h.app)[method](path).set(auth(token)).set('Content-Type', 'application/json').send(body);
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body).toEqual({ errors: [`failed to parse JSON input: field ${field} ${NUL}`], success: false });
  });

  it('stored nothing', async () => {
    const box = await request(h.app).get('/api/v1/box/nora/kept').set(auth(token));
    expect(box.status).toBe(200);
    expect(box.body.short_description).toBe('before');
    expect(box.body.versions.map((v: { version: string; description_markdown: string }) => [v.version, v.description_markdown])).toEqual([['1.0.0', 'before']]);
    for (const name of ['nul1', 'nul2']) expect((await request(h.app).get(`/api/v1/box/nora/${name}`).set(auth(token))).status).toBe(404);
  });

  it('answers a lone surrogate and deep nesting in the boxes shape too', async () => {
    const sur = await request(h.app).post('/api/v1/boxes').set(auth(token)).set('Content-Type', 'application/json').send('{"box":{"name":"s","description":"\\ud83d"}}');
    expect(sur.status).toBe(400);
    expect(sur.body).toEqual({ errors: ['failed to parse JSON input: field box.description contains a lone UTF-16 surrogate, which is not valid Unicode'], success: false });
    const deep = await request(h.app).post('/api/v1/boxes').set(auth(token)).set('Content-Type', 'application/json').send(`{"box":${'['.repeat(3000)}${']'.repeat(3000)}}`);
    expect(deep.status).toBe(400);
    expect(deep.body.success).toBe(false);
    expect(deep.body.errors[0]).toMatch(/^failed to parse JSON input: field box\[0\]\[0\]\[0\]\.\.\.\(\d+ levels\)\.\.\.\[0\]\[0\]\[0\]\[0\]: nesting deeper than 128 levels$/);
  });
});
