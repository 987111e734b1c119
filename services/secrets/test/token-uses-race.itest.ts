// Issue 33, item 1: a use-limited token is consumed, and at zero revoked, inside the
// transaction that admits the request. Dozens of parallel requests over real sockets,
// spread over two replicas of one database, must see exactly `num_uses` successes in
// every round; everything after is the invalid-token 403, and the token is gone.
import request from 'supertest';
import { startTestListener, type TestListener } from '@selfstack/testing';
import { INVALID_TOKEN, startUnsealedReplicas, type Harness } from './harness';

const PARALLEL = 36;

describe('use-limited tokens under concurrency', () => {
  let h: Harness;
  let root = '';
  let servers: TestListener[] = [];

  beforeAll(async () => {
    const started = await startUnsealedReplicas();
    h = started.h;
    root = started.root;
    servers = [await startTestListener(h.app), await startTestListener(started.other)];
    await request(h.app).post('/v1/sys/mounts/race').set('X-Vault-Token', root).send({ type: 'kv' }).expect(204);
    await request(h.app).post('/v1/race/race').set('X-Vault-Token', root).send({ v: 1 }).expect(204);
  });
  afterAll(async () => {
    for (const s of servers) await s.close();
    await h.close();
  });

  const limitedToken = async (numUses: number, extra: Record<string, unknown> = {}): Promise<string> => {
    const r = await request(h.app).post('/v1/auth/token/create').set('X-Vault-Token', root).send({ num_uses: numUses, ...extra });
    expect(r.status).toBe(200);
    expect(r.body.auth.num_uses).toBe(numUses);
    return r.body.auth.client_token as string;
  };

  /** Fires PARALLEL reads at once, alternating between the replicas; returns the answers. */
  const race = async (token: string, path = '/v1/race/race'): Promise<{ status: number; body: unknown }[]> =>
    Promise.all(
      Array.from({ length: PARALLEL }, async (_, i) => {
        const res = await fetch(`${(servers[i % servers.length] as TestListener).url}${path}`, { headers: { 'X-Vault-Token': token } });
        return { status: res.status, body: (await res.json()) as unknown };
      }),
    );

  it.each([1, 2, 3, 5, 7])('num_uses %i: exactly that many of 36 parallel requests succeed, three rounds', async (numUses) => {
    for (let round = 0; round < 3; round++) {
      const token = await limitedToken(numUses);
      const answers = await race(token);
      const ok = answers.filter((a) => a.status === 200);
      const denied = answers.filter((a) => a.status === 403);
      expect(ok).toHaveLength(numUses);
      expect(denied).toHaveLength(PARALLEL - numUses);
      for (const a of ok) expect(a.body).toMatchObject({ data: { v: 1 } });
      for (const a of denied) expect(a.body).toEqual({ errors: [INVALID_TOKEN] });
      // Used up: gone everywhere, also for a lookup by the root token.
      const after = await request(h.app).post('/v1/auth/token/lookup').set('X-Vault-Token', root).send({ token });
      expect(after.status).toBe(403);
      expect(after.body).toEqual({ errors: [INVALID_TOKEN] });
    }
  });

  it('lookup-self reports the uses left, and the last use revokes the children too', async () => {
    const parent = await limitedToken(2);
    const child = await request(h.app).post('/v1/auth/token/create').set('X-Vault-Token', parent).send({ policies: ['default'] });
    expect(child.status).toBe(200);
    const childToken = child.body.auth.client_token as string;
    // The create above was the first use: one left.
    const look = await request(h.app).get('/v1/auth/token/lookup-self').set('X-Vault-Token', parent);
    expect(look.status).toBe(200);
    expect(look.body.data.num_uses).toBe(0);
    const again = await request(h.app).get('/v1/auth/token/lookup-self').set('X-Vault-Token', parent);
    expect(again.status).toBe(403);
    const childLook = await request(h.app).get('/v1/auth/token/lookup-self').set('X-Vault-Token', childToken);
    expect(childLook.status).toBe(403);
    expect(childLook.body).toEqual({ errors: [INVALID_TOKEN] });
  });
});
