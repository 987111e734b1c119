import request from 'supertest';
import { compilePathTable, createKitApp, helpFor, mountPaths, openApiFor } from '../src';
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
});
