import request from 'supertest';
import { compilePathTable, createDispatcher, createKitApp, definePath, helpFor, helpSelects, mountPaths, openApiFor } from '../src';
import { AppError } from '@selfstack/errors';
import { capturedLogger, sampleTable } from './sample-table';

const helpOptions = {
  title: 'HashiCorp Vault API',
  description: 'HTTP API that gives you full access to Vault. All API routes are prefixed with `/v1/`.',
  backendHelp: 'This backend provides a versioned key-value store.',
  tags: ['secrets'],
};

describe('help and OpenAPI', () => {
  it('root help lists every path; the OpenAPI document covers them (snapshot)', () => {
    const help = helpFor(sampleTable(), '', helpOptions);
    expect(help.see_also).toBeNull();
    expect(help.help).toMatchSnapshot('root help');
    expect(help.openapi).toMatchSnapshot('root openapi');
  });

  it('help for a matching path shows its parameters (snapshot)', () => {
    const help = helpFor(sampleTable(), 'data/foo', helpOptions);
    expect(help.help).toMatchSnapshot('data path help');
    expect(Object.keys(help.openapi.paths as object)).toEqual(['/data/{path}']);
    expect(help.openapi).toMatchSnapshot('data path openapi');
  });

  it('help for a prefix includes the paths under it', () => {
    const help = helpFor(compilePathTable(sampleTable()), 'policy', helpOptions);
    expect(Object.keys(help.openapi.paths as object)).toEqual(['/policy/{name}']);
    expect(help.help).toContain('## PATHS');
    expect(help.help).toContain('    ^policy/(?P<name>[^/]+)/?$\n        Read, Modify, or Delete an access control policy.');
    expect(help.help).not.toContain('^config');
  });

  it('x-vault-create-supported follows the existence check; list gets a list parameter', () => {
    const doc = openApiFor(sampleTable(), { ...helpOptions, prefix: '/secret' });
    const paths = doc.paths as Record<string, Record<string, unknown>>;
    expect(Object.keys(paths)).toEqual(['/secret/config', '/secret/data/{path}', '/secret/metadata/{path}', '/secret/policy/{name}', '/secret/roles']);
    expect(paths['/secret/config']?.['x-vault-create-supported']).toBe(true);
    expect(paths['/secret/policy/{name}']?.['x-vault-create-supported']).toBeUndefined();
    expect(paths['/secret/roles']?.get).toMatchObject({
      parameters: [{ name: 'list', in: 'query', required: true, schema: { type: 'string', enum: ['true'] } }],
    });
    expect(doc).toMatchSnapshot('service openapi');
  });

  it('?help=1 over HTTP answers the raw help object, not enveloped', async () => {
    const { logger } = capturedLogger();
    const app = createKitApp({ service: 'secrets', logger, errorFlavour: 'vault', metrics: false }, (a) => {
      mountPaths(a, sampleTable(), {
        prefix: '/v1/secret',
        help: helpOptions,
        respond: () => {
          throw new Error('respond must not be used for help');
        },
      });
    });
    const res = await request(app).get('/v1/secret?help=1');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/json');
    expect(res.text.endsWith('}\n')).toBe(true);
    expect(res.body).toEqual(helpFor(sampleTable(), '', helpOptions));
    const pathHelp = await request(app).get('/v1/secret/config?help=true');
    expect(pathHelp.body.help).toMatch(/^Request:        config\nMatching Route: \^config\/\?\$/);
    expect(Object.keys(pathHelp.body.openapi.paths)).toEqual(['/config']);
  });

  describe('paths relative to the queried path (pathsRelativeToQuery)', () => {
    const relative = { ...helpOptions, pathsRelativeToQuery: true };
    const keys = (path: string) => Object.keys(helpFor(sampleTable(), path, relative).openapi.paths as object);

    it('the table root keeps the table-relative paths', () => {
      expect(helpFor(sampleTable(), '', relative)).toEqual(helpFor(sampleTable(), '', helpOptions));
    });

    it('a matched glob path is the queried path itself, its parameter bound', () => {
      const help = helpFor(sampleTable(), 'data/team/a', relative);
      expect(Object.keys(help.openapi.paths as object)).toEqual(['/']);
      const item = (help.openapi.paths as Record<string, Record<string, unknown>>)['/'];
      expect(item?.parameters).toBeUndefined();
      expect(item?.get).toMatchObject({ operationId: 'read-data-path' });
      expect(help.help).toMatch(/^Request:        data\/team\/a\n/);
    });

    it('a prefix documents what lies under it, with the parameters it leaves open', () => {
      expect(keys('data')).toEqual(['/{path}']);
      expect(keys('data/')).toEqual(['/{path}']);
      expect(keys('policy')).toEqual(['/{name}']);
      const paths = helpFor(sampleTable(), 'policy', relative).openapi.paths as Record<string, { parameters: { name: string; in: string }[] }>;
      expect(paths['/{name}']?.parameters).toEqual([expect.objectContaining({ name: 'name', in: 'path', required: true })]);
    });

    it('a one-segment parameter fixed by the query: paths under it stay, relative', () => {
      const table = compilePathTable([
        definePath({ pattern: 'mounts/:path', summary: 'A mount.', operations: { read: () => ({}) } }),
        definePath({ pattern: 'mounts/:path/tune', summary: 'Tune a mount.', operations: { read: () => ({}) } }),
        definePath({ pattern: 'mounts', summary: 'Every mount.', operations: { read: () => ({}) } }),
      ]);
      expect(Object.keys(helpFor(table, 'mounts/secret', relative).openapi.paths as object)).toEqual(['/', '/tune']);
      expect(Object.keys(helpFor(table, 'mounts', relative).openapi.paths as object)).toEqual(['/{path}', '/{path}/tune', '/']);
      expect(helpSelects(table, 'mounts/secret/tune/x', relative)).toBe(false);
      // A root catch-all is documented where it serves the query, not under other paths.
      const withFallback = compilePathTable([...table.entries.map((e) => e.spec), definePath({ pattern: '*rest', summary: 'Anything else.', operations: { read: () => ({}) } })]);
      expect(Object.keys(helpFor(withFallback, 'mounts', relative).openapi.paths as object)).toEqual(['/{path}', '/{path}/tune', '/']);
      expect(helpFor(withFallback, 'mounts', relative).help).toMatch(/^Request:        mounts\nMatching Route: \^mounts\/\?\$/);
      expect(Object.keys(helpFor(withFallback, 'elsewhere/x', relative).openapi.paths as object)).toEqual(['/']);
      expect(Object.keys(helpFor(withFallback, '', relative).openapi.paths as object)).toEqual(['/mounts/{path}', '/mounts/{path}/tune', '/mounts', '/{rest}']);
      expect(helpSelects(table, 'other', relative)).toBe(false);
    });
  });

  it('prefixInOperationIds names the prefixed path (unique across merged tables)', () => {
    const doc = openApiFor(sampleTable(), { ...helpOptions, prefix: '/kv', prefixInOperationIds: true });
    const paths = doc.paths as Record<string, { get?: { operationId: string } }>;
    expect(paths['/kv/data/{path}']?.get?.operationId).toBe('read-kv-data-path');
    expect((openApiFor(sampleTable(), { ...helpOptions, prefix: '/kv' }).paths as typeof paths)['/kv/data/{path}']?.get?.operationId).toBe('read-data-path');
  });

  it('Dispatcher.help: any method, authorizeHelp first, unsupportedPath when nothing is there', async () => {
    const seen: string[] = [];
    const d = createDispatcher(sampleTable(), {
      help: helpOptions,
      authorizeHelp: (_req, path) => {
        seen.push(path);
        if (path.startsWith('forbidden')) throw new AppError(403, ['permission denied']);
      },
      unsupportedPath: (path) => new AppError(404, [`nothing at ${path}`]),
    });
    const { logger } = capturedLogger();
    const app = createKitApp({ service: 'secrets', logger, errorFlavour: 'vault', metrics: false }, (a) => {
      a.use('/h', (req, res, next) => void d.help(req, res, next, req.path.slice(1)));
    });
    const posted = await request(app).post('/h/data/x').send({ data: { a: 1 } });
    expect(posted.status).toBe(200);
    expect(posted.body).toEqual(helpFor(sampleTable(), 'data/x', helpOptions));
    const denied = await request(app).get('/h/forbidden/x');
    expect(denied.status).toBe(403);
    expect(denied.body).toEqual({ errors: ['permission denied'] });
    const missing = await request(app).get('/h/nothing/here');
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ errors: ['nothing at nothing/here'] });
    expect(seen).toEqual(['data/x', 'forbidden/x', 'nothing/here']);
  });
});
