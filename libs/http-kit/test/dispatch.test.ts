import request from 'supertest';
import { z } from 'zod';
import { BadRequestError, ForbiddenError, NotFoundError } from '@selfstack/errors';
import { createLogger } from '@selfstack/logger';
import { compilePathTable, createDispatcher, createKitApp, decodePath, definePath, definePathFor, methodOperation, mountPaths, type MountOptions, type RequestContext } from '../src';
import { capturedLogger, sampleTable } from './sample-table';

function buildApp(mount: MountOptions = {}, flavour: 'vault' | 'nomad' | 'boxes' | 'registry' = 'vault') {
  const { logger } = capturedLogger();
  return createKitApp({ service: 'secrets', logger, errorFlavour: flavour, jsonWithoutContentType: true, metrics: false }, (app) => {
    mountPaths(app, sampleTable(), { prefix: '/v1/secret', ...mount });
  });
}

describe('method table', () => {
  const app = buildApp();

  it('GET -> read with coerced query', async () => {
    const res = await request(app).get('/v1/secret/data/foo/bar?version=3');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/json');
    expect(res.body).toEqual({ op: 'read', path: 'foo/bar', version: 3 });
  });

  it('GET ?list=true and ?list=1 -> list; the glob may be empty', async () => {
    for (const q of ['list=true', 'list=1', 'list=t']) {
      const res = await request(app).get(`/v1/secret/metadata/app/?${q}`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ op: 'list', path: 'app/', keys: ['a', 'b/'] });
    }
    const root = await request(app).get('/v1/secret/metadata?list=true');
    expect(root.body).toEqual({ op: 'list', path: '', keys: ['a', 'b/'] });
    const notList = await request(app).get('/v1/secret/metadata/x?list=false');
    expect(notList.body).toEqual({ op: 'read', path: 'x' });
  });

  it('PUT and POST -> create or update by existence check', async () => {
    const created = await request(app).post('/v1/secret/data/new').send({ data: { a: 1 } });
    expect(created.status).toBe(200);
    expect(created.body).toEqual({ op: 'create', path: 'new', data: { a: 1 }, unknown: [] });
    const updated = await request(app).put('/v1/secret/data/exists').send({ data: { a: 2 } });
    expect(updated.body).toEqual({ op: 'update', path: 'exists', data: { a: 2 }, unknown: [] });
  });

  it('PUT without an existence check -> update', async () => {
    const res = await request(app).put('/v1/secret/policy/dev').send({ policy: 'path "*" {}' });
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
  });

  it('PATCH -> patch, DELETE -> delete (204)', async () => {
    const patched = await request(app).patch('/v1/secret/data/exists').set('Content-Type', 'application/merge-patch+json').send('{"data":{"b":2}}');
    expect(patched.body).toEqual({ op: 'patch', path: 'exists', data: { b: 2 } });
    const deleted = await request(app).delete('/v1/secret/data/exists');
    expect(deleted.status).toBe(204);
  });

  it('HEAD -> read without a body', async () => {
    const res = await request(app).head('/v1/secret/data/foo');
    expect(res.status).toBe(200);
    expect(res.text).toBeUndefined();
  });

  it('405 for an operation the spec lacks, with Allow', async () => {
    const res = await request(app).delete('/v1/secret/config');
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('GET, HEAD, PUT, POST');
    expect(res.text).toBe('{"errors":["unsupported operation"]}\n');
    const listOnRead = await request(app).get('/v1/secret/config?list=true');
    expect(listOnRead.status).toBe(405);
    const readOnList = await request(app).get('/v1/secret/roles');
    expect(readOnList.status).toBe(405);
    expect(readOnList.headers.allow).toBe('GET, LIST');
    const listOnly = await request(app).get('/v1/secret/roles?list=true');
    expect(listOnly.body).toEqual({ keys: ['r1'] });
  });

  it('405 for an unknown method', async () => {
    const res = await request(app).options('/v1/secret/data/x');
    expect(res.status).toBe(405);
    expect(res.body).toEqual({ errors: ['unsupported operation'] });
  });

  it('create resolved by the existence check but missing -> 405', async () => {
    const { logger } = capturedLogger();
    const spec = definePath({
      pattern: 'thing/:id',
      summary: 'update only',
      existenceCheck: () => false,
      operations: { update: () => ({ ok: true }) },
    });
    const a = createKitApp({ service: 's', logger, errorFlavour: 'registry', metrics: false }, (app) => mountPaths(app, [spec], { prefix: '/t' }));
    const res = await request(a).post('/t/thing/1').send({});
    expect(res.status).toBe(405);
    expect(res.body).toEqual({ errors: ['unsupported operation'] });
  });
});

describe('validation', () => {
  const app = buildApp();

  it('400 names the field for a bad body value', async () => {
    const res = await request(app).post('/v1/secret/config').send({ max_versions: 'many' });
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toBe('application/json');
    expect(res.body.errors).toHaveLength(1);
    expect(res.body.errors[0]).toMatch(/^invalid value for field "max_versions": /);
  });

  it('weakly decodes strings in bodies and queries like Go', async () => {
    const res = await request(app).post('/v1/secret/config').send({ max_versions: '5', cas_required: 'true' });
    expect(res.body).toEqual({ op: 'update', max_versions: 5, cas_required: true });
    const q = await request(app).get('/v1/secret/policy/dev?verbose=1&flags=true&flags=0');
    expect(q.body).toEqual({ name: 'dev', verbose: true, flags: [true, false] });
  });

  it('applies defaults', async () => {
    const res = await request(app).post('/v1/secret/config').send({});
    expect(res.body).toEqual({ op: 'update', max_versions: 0 });
  });

  it('reports a missing required field and an invalid path parameter', async () => {
    const missing = await request(app).post('/v1/secret/data/x').send({ options: {} });
    expect(missing.status).toBe(400);
    expect(missing.body).toEqual({ errors: ['missing required field "data"'] });
    const badName = await request(app).get('/v1/secret/policy/UPPER');
    expect(badName.status).toBe(400);
    expect(badName.body).toEqual({ errors: ['invalid value for field "name": must be lowercase'] });
  });

  it('collects unknown body parameters instead of failing', async () => {
    const res = await request(app).post('/v1/secret/data/new').send({ data: {}, zeta: 1, alpha: 2 });
    expect(res.status).toBe(200);
    expect(res.body.unknown).toEqual(['alpha', 'zeta']);
  });

  it('rejects a non-object body', async () => {
    const res = await request(app).post('/v1/secret/data/new').send([1, 2]);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ errors: ['invalid request body: expected a JSON object'] });
  });
});

describe('bodies', () => {
  it('parses JSON without Content-Type when enabled, and answers malformed JSON with 400', async () => {
    const app = buildApp();
    const res = await request(app).post('/v1/secret/data/new').set('Content-Type', '').send(Buffer.from('{"data":{"k":"v"}}'));
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ k: 'v' });
    const plain = await request(app).post('/v1/secret/data/new').set('Content-Type', 'text/plain').send('{"data":{"k":1}}');
    expect(plain.body.data).toEqual({ k: 1 });
    const bad = await request(app).post('/v1/secret/data/new').set('Content-Type', 'application/json').send('{"data":');
    expect(bad.status).toBe(400);
    expect(bad.text).toMatch(/^\{"errors":\["failed to parse JSON input: .+"\]\}\n$/);
  });

  it('ignores bodies without Content-Type when the option is off', async () => {
    const { logger } = capturedLogger();
    const app = createKitApp({ service: 'b', logger, errorFlavour: 'boxes', metrics: false }, (a) => mountPaths(a, sampleTable(), { prefix: '/api' }));
    const res = await request(app).post('/api/data/new').set('Content-Type', '').send(Buffer.from('{"data":{}}'));
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ errors: ['missing required field "data"'], success: false });
  });

  it('accepts form bodies', async () => {
    const app = buildApp();
    const res = await request(app).put('/v1/secret/policy/dev').type('form').send('policy=abc');
    expect(res.status).toBe(204);
  });
});

describe('streaming and dynamic dispatch', () => {
  it('body: stream opts a route out of body reading and its limit', async () => {
    const { logger } = capturedLogger();
    const upload = definePath({
      pattern: 'upload/:token',
      summary: 'upload',
      body: 'stream',
      fields: { token: { in: 'path', schema: z.string(), description: 'signed token' } },
      operations: {
        update: async (ctx) => {
          let n = 0;
          for await (const chunk of ctx.req) n += (chunk as Buffer).length;
          return { token: ctx.params.token, bytes: n };
        },
      },
    });
    const parsed = definePath({ ...upload, pattern: 'parsed/:token', body: 'json' });
    // jsonWithoutContentType: an octet-stream body would be read as JSON by other routes.
    const app = createKitApp({ service: 'boxes', logger, errorFlavour: 'boxes', metrics: false, maxRequestBytes: 16, jsonWithoutContentType: true }, (a) =>
      mountPaths(a, [upload, parsed], { prefix: '/' }),
    );
    const res = await request(app).put('/upload/t1').set('Content-Type', 'application/octet-stream').send(Buffer.alloc(5000, 0x61));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ token: 't1', bytes: 5000 });
    const limited = await request(app).put('/parsed/t1').set('Content-Type', 'application/octet-stream').send(Buffer.alloc(5000, 0x61));
    expect(limited.status).toBe(413);
    expect(limited.body).toEqual({ errors: ['request body too large'], success: false });
  });

  it('createDispatcher serves a relative path chosen by the caller (mount routing)', async () => {
    const { logger } = capturedLogger();
    const table = compilePathTable(sampleTable());
    const mounts = new Map([
      ['secret/', createDispatcher(table, { prefix: '/v1/secret' })],
      ['kv/', createDispatcher(table, { prefix: '/v1/kv' })],
    ]);
    const app = createKitApp({ service: 'secrets', logger, errorFlavour: 'vault' }, (a) => {
      a.use('/v1', (req, res, next) => {
        const rel = req.path.slice(1);
        for (const [mount, dispatch] of mounts) {
          if (rel.startsWith(mount)) return void dispatch(req, res, next, rel.slice(mount.length));
        }
        next();
      });
    });
    const res = await request(app).get('/v1/kv/data/x/y');
    expect(res.body).toEqual({ op: 'read', path: 'x/y', version: null });
    const metrics = await request(app).get('/metrics');
    expect(metrics.text).toContain('route="/v1/kv/data/*path"');
    expect((await request(app).get('/v1/other/data/x')).status).toBe(404);
  });
});

describe('hooks', () => {
  it('authorize sees the resolved operation and can deny before validation', async () => {
    const seen: Array<[string, string]> = [];
    const app = buildApp({
      authorize: (ctx: RequestContext) => {
        seen.push([ctx.operation, ctx.path]);
        if (ctx.path.startsWith('data/locked')) throw new ForbiddenError('1 error occurred:\n\t* permission denied\n\n');
      },
    });
    await request(app).post('/v1/secret/data/exists').send({ data: {} });
    await request(app).post('/v1/secret/data/fresh').send({ data: {} });
    const denied = await request(app).post('/v1/secret/data/locked').send({ nothing: true });
    expect(denied.status).toBe(403);
    expect(denied.text).toBe('{"errors":["1 error occurred:\\n\\t* permission denied\\n\\n"]}\n');
    expect(seen).toEqual([
      ['update', 'data/exists'],
      ['create', 'data/fresh'],
      ['create', 'data/locked'],
    ]);
  });

  it('respond hook writes the result; extra is computed per request', async () => {
    const app = buildApp({
      extra: (req) => ({ mount: 'secret/', token: req.headers['x-vault-token'] }),
      respond: (ctx, result, res) => {
        if (result === undefined) throw new NotFoundError();
        res.status(200).json({ request_id: ctx.requestId, data: result, warnings: ctx.unknownParams.length ? [`Endpoint ignored these unrecognized parameters: [${ctx.unknownParams.join(' ')}]`] : null, extra: ctx.extra });
      },
    });
    const res = await request(app).post('/v1/secret/data/new').set('X-Request-Id', 'abc-123').set('X-Vault-Token', 't').send({ data: {}, b: 1, a: 2 });
    expect(res.body).toEqual({
      request_id: 'abc-123',
      data: { op: 'create', path: 'new', data: {}, unknown: ['a', 'b'] },
      warnings: ['Endpoint ignored these unrecognized parameters: [a b]'],
      extra: { mount: 'secret/', token: 't' },
    });
    const missing = await request(app).get('/v1/secret/data/missing');
    expect(missing.status).toBe(404);
    expect(missing.text).toBe('{"errors":[]}\n');
  });

  it('unsupportedPath turns an unmatched mount path into an error; default falls through to 404', async () => {
    const strict = buildApp({ unsupportedPath: () => new NotFoundError('1 error occurred:\n\t* unsupported path\n\n') });
    const res = await request(strict).get('/v1/secret/nope');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ errors: ['1 error occurred:\n\t* unsupported path\n\n'] });
    const loose = await request(buildApp()).get('/v1/secret/nope');
    expect(loose.status).toBe(404);
    expect(loose.text).toBe('{"errors":[]}\n');
  });

  it('decodes %2F in paths and rejects bad escapes', async () => {
    const app = buildApp();
    const res = await request(app).get('/v1/secret/data/a%2Fb%20c');
    expect(res.body).toEqual({ op: 'read', path: 'a/b c', version: null });
    const bad = await request(app).get('/v1/secret/data/%E0%A4%A');
    expect(bad.status).toBe(400);
  });

  it('handler errors reach the flavour error handler, unknown ones masked', async () => {
    const { logger, lines, flush } = capturedLogger();
    const spec = definePath({
      pattern: 'jobs/:id',
      summary: 'jobs',
      fields: { id: { in: 'path', schema: z.string(), description: 'id' } },
      operations: {
        read: (ctx) => {
          if (ctx.params.id === 'boom') throw new Error('pq: password authentication failed');
          throw new NotFoundError('job not found');
        },
      },
    });
    const app = createKitApp({ service: 'scheduler', logger, errorFlavour: 'nomad', metrics: false }, (a) => mountPaths(a, [spec], { prefix: '/v1' }));
    const nf = await request(app).get('/v1/jobs/x');
    expect(nf.status).toBe(404);
    expect(nf.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(nf.text).toBe('job not found');
    const boom = await request(app).get('/v1/jobs/boom').set('X-Request-Id', 'req-9');
    expect(boom.status).toBe(500);
    expect(boom.text).toBe('internal error (request id req-9)');
    await flush();
    expect(lines).toContainEqual(expect.objectContaining({ level: 'error', request_id: 'req-9', error: 'pq: password authentication failed' }));
  });
});

describe('NUL in path or query (PostgreSQL text cannot hold it)', () => {
  const { logger } = capturedLogger();
  let reached = 0;
  const spec = definePath({
    pattern: 'thing/:id',
    summary: 'read',
    fields: { id: { in: 'path', schema: z.string(), description: 'id' }, prefix: { in: 'query', schema: z.string().optional(), description: 'prefix' } },
    operations: {
      read: () => {
        reached++;
        return { ok: true };
      },
    },
  });
  const app = createKitApp({ service: 's', logger, errorFlavour: 'registry', metrics: false }, (a) => mountPaths(a, [spec], { prefix: '/t' }));

  it('refuses it with 400 in the flavour shape before any handler runs', async () => {
    const path = await request(app).get('/t/thing/a%00b');
    expect(path.status).toBe(400);
    expect(path.body).toEqual({ errors: ['invalid path: contains a NUL character'] });
    for (const q of ['prefix=%00', 'prefix=a&prefix=b%00', 'x%00=1', 'o[k]=%00']) {
      const res = await request(app).get(`/t/thing/a?${q}`);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ errors: ['invalid query: contains a NUL character'] });
    }
    expect(reached).toBe(0);
    const ok = await request(app).get('/t/thing/a?prefix=b');
    expect(ok.status).toBe(200);
    expect(reached).toBe(1);
  });
});

describe("an anchor's own parameter rules (FieldSpec decode/invalid, validateFirst, bodyFieldsInQuery)", () => {
  type Extra = { who: string };
  const path = definePathFor<Extra>();
  const order: string[] = [];
  const spec = path({
    pattern: 'thing/:id',
    summary: 'a route with Nomad-like fields',
    fields: {
      id: { in: 'path', schema: z.string().min(1), description: 'id' },
      // Present and empty means true; anything but true/false is the anchor's own 400.
      stale: {
        in: 'query',
        schema: z.boolean(),
        description: 'stale',
        default: false,
        decode: (raw: unknown) => (raw === '' || raw === 'true' ? true : raw === 'false' ? false : raw),
        invalid: () => new BadRequestError('Expect `true` or `false` for `stale`'),
      },
      index: {
        in: 'query',
        schema: z.number().int().min(0),
        description: 'index',
        decode: (raw: unknown) => (typeof raw === 'string' && /^\d+$/.test(raw) ? Number(raw) : raw),
        invalid: () => new BadRequestError('Invalid index'),
      },
      // No weak conversion; null is "absent"; a bad value names the raw input.
      Pause: {
        in: 'body',
        schema: z.boolean(),
        description: 'pause',
        decode: (raw: unknown) => (raw === null ? undefined : raw),
        invalid: (raw: unknown, name: string) => new BadRequestError(`cannot unmarshal ${typeof raw} into ${name}`),
      },
    },
    operations: {
      read: (ctx) => ({ id: ctx.params.id, stale: ctx.query.stale, index: ctx.query.index ?? null, data: ctx.data, who: ctx.extra.who }),
      update: (ctx) => ({ pause: ctx.body.Pause ?? null, who: ctx.extra.who }),
    },
  });
  const mount = (options: MountOptions<Extra>) =>
    createKitApp({ service: 'nomadish', logger: createLogger({ service: 't', silent: true }), errorFlavour: 'nomad', metrics: false, jsonWithoutContentType: true }, (a) =>
      mountPaths<Extra>(a, [spec], {
        prefix: '/v1',
        extra: (req) => {
          order.push('extra');
          if (req.headers['x-token'] === 'bad') throw new ForbiddenError('Permission denied');
          return { who: String(req.headers['x-token'] ?? 'anonymous') };
        },
        ...options,
      }),
    );

  it('decode replaces the weak conversion, and a field that fails with `invalid` answers with that error at once', async () => {
    const app = mount({ validateFirst: true, bodyFieldsInQuery: false });
    expect((await request(app).get('/v1/thing/a?stale')).body).toMatchObject({ stale: true, index: null });
    expect((await request(app).get('/v1/thing/a?stale=false&index=7')).body).toMatchObject({ stale: false, index: 7 });
    const bad = await request(app).get('/v1/thing/a?stale=1&index=x');
    expect(bad.status).toBe(400);
    expect(bad.text).toBe('Expect `true` or `false` for `stale`');
    expect((await request(app).get('/v1/thing/a?index=-1')).text).toBe('Invalid index');
    expect((await request(app).put('/v1/thing/a').send({ Pause: null })).body).toEqual({ pause: null, who: 'anonymous' });
    const typed = await request(app).put('/v1/thing/a').send({ Pause: 'true' });
    expect(typed.status).toBe(400);
    expect(typed.text).toBe('cannot unmarshal string into Pause');
  });

  it('validateFirst: a bad parameter answers before `extra` runs; by default `extra` runs first', async () => {
    order.length = 0;
    const first = mount({ validateFirst: true });
    expect((await request(first).get('/v1/thing/a?index=x').set('X-Token', 'bad')).text).toBe('Invalid index');
    expect(order).toEqual([]);
    expect((await request(first).get('/v1/thing/a').set('X-Token', 'bad')).status).toBe(403);
    expect((await request(first).get('/v1/thing/a').set('X-Token', 'me')).body.who).toBe('me');
    const byDefault = mount({});
    expect((await request(byDefault).get('/v1/thing/a?index=x').set('X-Token', 'bad')).status).toBe(403);
  });

  it('bodyFieldsInQuery false: a read never takes body fields from its query, and help says so', async () => {
    const nomadish = mount({ bodyFieldsInQuery: false });
    const read = await request(nomadish).get('/v1/thing/a?Pause=maybe');
    expect(read.status).toBe(200);
    expect(read.body.data).toEqual({ id: 'a', stale: false });
    const vaultish = mount({});
    expect((await request(vaultish).get('/v1/thing/a?Pause=maybe')).text).toBe('cannot unmarshal string into Pause');
    const help = await request(nomadish).get('/v1/thing/a?help=1');
    const names = (help.body.openapi.paths['/thing/{id}'].get.parameters as { name: string }[]).map((p) => p.name);
    expect(names).toEqual(['stale', 'index']);
    const vaultHelp = await request(vaultish).get('/v1/thing/a?help=1');
    expect((vaultHelp.body.openapi.paths['/thing/{id}'].get.parameters as { name: string }[]).map((p) => p.name)).toEqual(['stale', 'index', 'Pause']);
  });
});

describe('the method table and path decoding, for callers that route before the dispatcher (issue 31, item 3)', () => {
  it('methodOperation is the table the dispatcher applies', () => {
    expect(methodOperation('GET')).toBe('read');
    expect(methodOperation('GET', 'true')).toBe('list');
    expect(methodOperation('GET', ['1', 'false'])).toBe('list');
    expect(methodOperation('GET', 'false')).toBe('read');
    expect(methodOperation('GET', 'maybe')).toBe('read');
    expect(methodOperation('HEAD', 'true')).toBe('read');
    expect(methodOperation('LIST')).toBe('list');
    expect(methodOperation('PUT')).toBe('write');
    expect(methodOperation('POST')).toBe('write');
    expect(methodOperation('PATCH')).toBe('patch');
    expect(methodOperation('DELETE')).toBe('delete');
    for (const m of ['OPTIONS', 'TRACE', 'CONNECT', 'PROPFIND', 'get']) expect(methodOperation(m)).toBeUndefined();
  });

  it('decodePath decodes once and refuses bad escapes and NUL with 400', () => {
    expect(decodePath('a/b c')).toBe('a/b c');
    expect(decodePath('a%2Fb%20c%25')).toBe('a/b c%');
    expect(() => decodePath('%E0%A4%A')).toThrow(expect.objectContaining({ status: 400, messages: ['invalid URL escape in path'] }));
    expect(() => decodePath('a%00b')).toThrow(expect.objectContaining({ status: 400, messages: ['invalid path: contains a NUL character'] }));
  });

  it('dispatcher.decoded serves a path the caller decoded, as it is (no second decode)', async () => {
    const { logger } = capturedLogger();
    const dispatch = createDispatcher(compilePathTable(sampleTable()), { prefix: '/v1/secret' });
    const app = createKitApp({ service: 'secrets', logger, errorFlavour: 'vault' }, (a) => {
      a.use('/v1/secret', (req, res, next) => void dispatch.decoded(req, res, next, decodePath(req.path.slice(1))));
    });
    // `%2541` decodes to `%41` once; decoding it again would give `A`.
    const res = await request(app).get('/v1/secret/data/x%2541');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ op: 'read', path: 'x%41', version: null });
  });

  it('authorizeHelp sees the decoded path and the response (its locals), and can deny help', async () => {
    const { logger } = capturedLogger();
    const seen: { path: string; who: unknown }[] = [];
    const dispatch = createDispatcher(compilePathTable(sampleTable()), {
      prefix: '/v1/secret',
      authorizeHelp: (_req, path, res) => {
        seen.push({ path, who: res.locals.who });
        if (res.locals.who !== 'root' && path.startsWith('data/secret')) throw new ForbiddenError(['permission denied']);
      },
    });
    const app = createKitApp({ service: 'secrets', logger, errorFlavour: 'vault' }, (a) => {
      a.use('/v1/secret', (req, res, next) => {
        res.locals.who = req.headers['x-who'];
        void dispatch(req, res, next, req.path.slice(1));
      });
    });
    const open = await request(app).get('/v1/secret/data/x%20y?help=1').set('X-Who', 'alice');
    expect(open.status).toBe(200);
    expect(typeof open.body.help).toBe('string');
    const denied = await request(app).get('/v1/secret/data/secret?help=1').set('X-Who', 'alice');
    expect(denied.status).toBe(403);
    expect(denied.body).toEqual({ errors: ['permission denied'] });
    expect((await request(app).get('/v1/secret/data/secret?help=1').set('X-Who', 'root')).status).toBe(200);
    // Not a help request: the hook is not asked.
    expect((await request(app).get('/v1/secret/data/secret?help=0').set('X-Who', 'alice')).status).toBe(200);
    expect(seen).toEqual([
      { path: 'data/x y', who: 'alice' },
      { path: 'data/secret', who: 'alice' },
      { path: 'data/secret', who: 'root' },
    ]);
  });
});
