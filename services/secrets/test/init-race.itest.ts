// Two replicas initialising the same database at once: exactly one wins, the other gets
// Vault's "already initialized"; both then unseal with the winner's key.
import request from 'supertest';
import { startHarness, type Harness } from './harness';

describe('concurrent initialisation', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => {
    await h.close();
  });

  it('lets exactly one replica initialise', async () => {
    const other = await h.replica();
    const [a, b] = await Promise.all([
      request(h.app).put('/v1/sys/init').send({ secret_shares: 1, secret_threshold: 1 }),
      request(other.app).put('/v1/sys/init').send({ secret_shares: 1, secret_threshold: 1 }),
    ]);
    const statuses = [a.status, b.status].sort();
    expect(statuses).toEqual([200, 400]);
    const loser = a.status === 400 ? a : b;
    const winner = a.status === 200 ? a : b;
    expect(loser.body).toEqual({ errors: ['Vault is already initialized'] });
    const key = winner.body.keys[0] as string;
    for (const app of [h.app, other.app]) {
      const r = await request(app).put('/v1/sys/unseal').send({ key });
      expect(r.body).toMatchObject({ sealed: false });
      const mounts = await request(app).get('/v1/sys/mounts').set('X-Vault-Token', winner.body.root_token);
      expect(mounts.status).toBe(200);
    }
    const rows = await h.prisma.$queryRawUnsafe<{ n: bigint }[]>("SELECT count(*) AS n FROM secrets.entries WHERE path = 'core/mounts'");
    expect(Number(rows[0]?.n)).toBe(1);
    // Both replicas report the same cluster id (derived from the install's salt).
    const s1 = await request(h.app).get('/v1/sys/seal-status');
    const s2 = await request(other.app).get('/v1/sys/seal-status');
    expect(s1.body.cluster_id).toBe(s2.body.cluster_id);
  });
});
