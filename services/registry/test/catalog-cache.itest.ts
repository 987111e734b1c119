// List and search answers are reused while PostgreSQL confirms that nothing in the catalog
// changed since the snapshot they were built in (issue 30, modules.service.ts listJson /
// searchJson, catalog_changes). Every change made through another replica (a second app
// over the same database, with answers of its own) is in the very next answer: a publish,
// a delete, the verified flag, and a download (the counter and the order by downloads).
import request from 'supertest';
import { createArchiveSigner } from '../src/features/downloads/signing';
import { CATALOG_HELD_MS, CATALOG_PRUNE_EVERY_MS, createModuleService } from '../src/features/modules/modules.service';
import { createModuleStore } from '../src/features/modules/modules.store';
import { sampleModuleTarGz } from './archive-fixtures';
import { ADMIN_TOKEN, SIGNING_KEY, bearer, createNamespace, createToken, publish, startRegistry, type Registry } from './registry-harness';

jest.setTimeout(60_000);

let reader: Registry;
let writer: Registry;
let token: string;

beforeAll(async () => {
  reader = await startRegistry();
  writer = await startRegistry({}, { db: reader.db, prisma: reader.prisma, readPool: reader.readPool, blobRoot: reader.blobRoot });
  await createNamespace(writer.app, 'acme', 'Acme Corp');
  token = (await createToken(writer.app, { namespace: 'acme' })).token;
});
afterAll(async () => {
  await reader.close();
});

async function published(address: string, description: string): Promise<void> {
  const res = await publish(writer.app, address, sampleModuleTarGz(), token, `?description=${encodeURIComponent(description)}`);
  expect([address, res.status]).toEqual([address, 201]);
}

type Summary = { id: string; downloads: number; verified: boolean };
async function read(path: string): Promise<Summary[]> {
  const res = await request(reader.app).get(path);
  expect([path, res.status]).toEqual([path, 200]);
  expect(Number(res.headers['content-length'])).toBe(Buffer.byteLength(res.text));
  return (res.body as { modules: Summary[] }).modules;
}
const ids = (modules: Summary[]) => modules.map((m) => m.id);

describe('list and search answers held by a replica', () => {
  it('reflect every change committed through another replica in the next answer', async () => {
    await published('acme/alpha/aws/1.0.0', 'Storage buckets');
    const LIST = '/v1/modules';
    const SEARCH = '/v1/modules/search?q=storage';
    expect(ids(await read(LIST))).toEqual(['acme/alpha/aws/1.0.0']);
    expect(ids(await read(SEARCH))).toEqual(['acme/alpha/aws/1.0.0']);
    // Held, confirmed, the same again.
    expect(ids(await read(LIST))).toEqual(['acme/alpha/aws/1.0.0']);

    // A new module, and a new latest version.
    await published('acme/beta/aws/1.0.0', 'Storage for backups');
    await published('acme/alpha/aws/1.1.0', 'Storage buckets');
    expect(ids(await read(LIST))).toEqual(['acme/alpha/aws/1.1.0', 'acme/beta/aws/1.0.0']);
    const before = await read(SEARCH);
    expect(ids(before).sort()).toEqual(['acme/alpha/aws/1.1.0', 'acme/beta/aws/1.0.0']);

    // Downloads: the counter, and the order among equally ranked hits.
    const last = before[1] as Summary;
    const [ns, name, provider, version] = last.id.split('/');
    for (let i = 0; i < 2; i++) expect((await request(writer.app).get(`/v1/modules/${ns}/${name}/${provider}/${version}/download`)).status).toBe(204);
    const after = await read(SEARCH);
    expect(after[0]).toMatchObject({ id: last.id, downloads: 2 });
    expect((await read(LIST)).find((m) => m.id === last.id)?.downloads).toBe(2);

    // The verified flag (and the verified filter).
    expect(await read('/v1/modules?verified=true')).toEqual([]);
    await request(writer.app).patch('/v1/admin/modules/acme/beta/aws').set(bearer(ADMIN_TOKEN)).send({ verified: true }).expect(200);
    expect(ids(await read('/v1/modules?verified=true'))).toEqual(['acme/beta/aws/1.0.0']);
    expect((await read(SEARCH)).find((m) => m.id === 'acme/beta/aws/1.0.0')?.verified).toBe(true);

    // A delete: the latest version falls back, then the module goes.
    expect((await request(writer.app).delete('/v1/modules/acme/alpha/aws/1.1.0').set(bearer(token))).status).toBe(204);
    expect(ids(await read(LIST))).toEqual(['acme/alpha/aws/1.0.0', 'acme/beta/aws/1.0.0']);
    expect((await request(writer.app).delete('/v1/modules/acme/alpha/aws/1.0.0').set(bearer(token))).status).toBe(204);
    expect(ids(await read(LIST))).toEqual(['acme/beta/aws/1.0.0']);
    expect(ids(await read(SEARCH))).toEqual(['acme/beta/aws/1.0.0']);
  });

  it('prunes catalog_changes only past what a held answer can still need', async () => {
    let now = 0;
    const store = createModuleStore(reader.prisma, reader.readPool);
    const modules = createModuleService({
      store,
      blobs: reader.blobs,
      signer: createArchiveSigner({ key: SIGNING_KEY, ttlSeconds: 300 }),
      publicArchives: false,
      now: () => now,
    });
    const url = { path: '/v1/modules', query: [] as [string, string][] };
    const changes = async () => Number((await reader.readPool.query<{ n: string }>('SELECT count(*) AS n FROM "registry"."catalog_changes"')).rows[0]?.n);
    await published('acme/gamma/aws/1.0.0', 'Gamma');
    await modules.listJson({}, url); // notes the current xmin at t=0
    const rows = await changes();
    expect(rows).toBeGreaterThan(0);
    // Within twice the holding time nothing is pruned, however often answers are read.
    for (now = CATALOG_PRUNE_EVERY_MS; now < 2 * CATALOG_HELD_MS; now += CATALOG_PRUNE_EVERY_MS) await modules.listJson({}, url);
    expect(await changes()).toBe(rows);
    // Past it, the rows older than the xmin noted at t=0 go (pruning is not awaited by the request).
    now = 2 * CATALOG_HELD_MS + CATALOG_PRUNE_EVERY_MS;
    await modules.listJson({}, url);
    for (let i = 0; i < 50 && (await changes()) >= rows; i++) await new Promise((r) => setTimeout(r, 20));
    expect(await changes()).toBeLessThan(rows);
    // And the answers are still right afterwards.
    await published('acme/delta/aws/1.0.0', 'Delta');
    expect(JSON.parse((await modules.listJson({}, url)).text).modules.map((m: { name: string }) => m.name)).toContain('delta');
  });
});
