import request from 'supertest';
import { initAndUnseal, startHarness, type Harness } from './harness';

describe('secrets smoke', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => {
    await h.close();
  });

  it('initialises, unseals, writes and reads KV v2', async () => {
    const { rootToken } = await initAndUnseal(h.app);
    const w = await request(h.app).post('/v1/secret/data/foo').set('X-Vault-Token', rootToken).send({ data: { b: 2, a: 1 } });
    expect(w.status).toBe(200);
    const r = await request(h.app).get('/v1/secret/data/foo').set('X-Vault-Token', rootToken);
    expect(r.status).toBe(200);
    expect(r.text.endsWith('\n')).toBe(true);
    expect(r.body.data.data).toEqual({ a: 1, b: 2 });
    expect(Object.keys(r.body)).toEqual(['request_id', 'lease_id', 'renewable', 'lease_duration', 'data', 'wrap_info', 'warnings', 'auth', 'mount_type']);
  });
});
