// The versions response is serialised once per set of versions and reused (issue 30,
// modules.service.ts versionsJson). Every read still asks PostgreSQL, so a publish or a
// delete made through another replica (here: a second app over the same database, with a
// cache of its own) is seen by the very next read, and a download (which updates the same
// module row) changes nothing in the answer.
import request from 'supertest';
import { sampleModuleTarGz } from './archive-fixtures';
import { bearer, createNamespace, createToken, publish, startRegistry, type Registry } from './registry-harness';

jest.setTimeout(60_000);

let reader: Registry;
let writer: Registry;
let token: string;

beforeAll(async () => {
  reader = await startRegistry();
  writer = await startRegistry({}, { db: reader.db, prisma: reader.prisma, readPool: reader.readPool, blobRoot: reader.blobRoot });
  await createNamespace(writer.app, 'acme');
  token = (await createToken(writer.app, { namespace: 'acme' })).token;
});
afterAll(async () => {
  await reader.close();
});

const RANDOM_PROVIDER = `
terraform {
  required_providers {
    random = {
      source  = "hashicorp/random"
      version = ">= 3.0"
    }
  }
}
`;

async function published(address: string, archive: Buffer): Promise<void> {
  const res = await publish(writer.app, address, archive, token);
  expect([address, res.status]).toEqual([address, 201]);
}

async function versions(): Promise<{ status: number; body: { modules: { versions: { version: string; root: { providers: { name: string }[] } }[] }[] } }> {
  const res = await request(reader.app).get('/v1/modules/acme/cached/aws/versions');
  return { status: res.status, body: res.body };
}

const listed = (body: Awaited<ReturnType<typeof versions>>['body']) => body.modules[0]?.versions.map((v) => v.version);
const rootProviders = (body: Awaited<ReturnType<typeof versions>>['body'], version: string) =>
  body.modules[0]?.versions.find((v) => v.version === version)?.root.providers.map((p) => p.name);

describe('versions response reuse', () => {
  it('answers what the database holds after every publish and delete made elsewhere', async () => {
    expect((await versions()).status).toBe(404);

    await published('acme/cached/aws/1.0.0', sampleModuleTarGz());
    const first = await versions();
    expect(first.status).toBe(200);
    expect(listed(first.body)).toEqual(['1.0.0']);
    // Read again: the same answer, byte for byte (the held response).
    const again = await request(reader.app).get('/v1/modules/acme/cached/aws/versions');
    expect(again.status).toBe(200);
    expect(again.headers['content-type']).toMatch(/^application\/json/);
    expect(Number(again.headers['content-length'])).toBe(Buffer.byteLength(again.text));
    expect(again.body).toEqual(first.body);

    // A download updates the module row (its counter): the answer stays the same.
    const download = await request(reader.app).get('/v1/modules/acme/cached/aws/1.0.0/download');
    expect(download.status).toBe(204);
    expect((await versions()).body).toEqual(first.body);

    await published('acme/cached/aws/1.1.0', sampleModuleTarGz());
    expect(listed((await versions()).body)).toEqual(['1.1.0', '1.0.0']);

    // Deleted and published again with other requirements: the new ones are served.
    expect(rootProviders((await versions()).body, '1.0.0')).toEqual(['aws']);
    expect((await request(writer.app).delete('/v1/modules/acme/cached/aws/1.0.0').set(bearer(token))).status).toBe(204);
    expect(listed((await versions()).body)).toEqual(['1.1.0']);
    await published('acme/cached/aws/1.0.0', sampleModuleTarGz({ 'random.tf': RANDOM_PROVIDER }));
    expect(rootProviders((await versions()).body, '1.0.0')).toEqual(['aws', 'random']);

    // Every version deleted: the module is gone; published again: only the new version.
    for (const v of ['1.0.0', '1.1.0']) expect((await request(writer.app).delete(`/v1/modules/acme/cached/aws/${v}`).set(bearer(token))).status).toBe(204);
    expect((await versions()).status).toBe(404);
    await published('acme/cached/aws/2.0.0', sampleModuleTarGz());
    expect(listed((await versions()).body)).toEqual(['2.0.0']);
  });
});
