import { compilePathTable, definePath, type PathTable } from '@selfstack/http-kit';
import { z } from 'zod';
import { API_INFO, wholeApiDocument, type ApiMount } from './openapi.service';

const table = (patterns: string[]): PathTable<unknown> =>
  compilePathTable(
    patterns.map((pattern) =>
      definePath({
        pattern,
        summary: `The ${pattern} route.`,
        fields: pattern.includes(':name') ? { name: { schema: z.string(), in: 'path' as const, description: 'A name.' } } : {},
        operations: { read: () => ({}) },
      }),
    ),
  );

const sys: ApiMount = { path: 'sys/', type: 'system', tag: 'system', table: table(['health', 'mounts']) };
const kvA: ApiMount = { path: 'team/a/', type: 'kv', tag: 'secrets', table: table(['config', 'data/:name']) };
const kvB: ApiMount = { path: 'secret/', type: 'kv', tag: 'secrets', table: table(['config', 'data/:name']) };
const users: ApiMount = { path: 'auth/users/', type: 'userpass', tag: 'auth', table: table(['login/:name']) };

type Doc = { info: typeof API_INFO; paths: Record<string, { parameters?: { name: string; schema: { default?: string } }[]; get: { operationId: string; tags: string[] } }> };

describe('wholeApiDocument', () => {
  it('every mount under its path, sorted, tagged by kind, operationIds from the full path', () => {
    const doc = wholeApiDocument([sys, kvA, kvB, users], { genericMountPaths: false }) as unknown as Doc;
    expect(doc.info).toMatchObject({ title: API_INFO.title, version: API_INFO.version });
    expect(Object.keys(doc.paths)).toEqual([
      '/auth/users/login/{name}',
      '/secret/config',
      '/secret/data/{name}',
      '/sys/health',
      '/sys/mounts',
      '/team/a/config',
      '/team/a/data/{name}',
    ]);
    expect(doc.paths['/team/a/data/{name}']?.get).toMatchObject({ operationId: 'read-team-a-data-name', tags: ['secrets'] });
    expect(doc.paths['/secret/data/{name}']?.get.operationId).toBe('read-secret-data-name');
    expect(doc.paths['/sys/health']?.get.tags).toEqual(['system']);
    expect(doc.paths['/auth/users/login/{name}']?.get.tags).toEqual(['auth']);
  });

  it('generic_mount_paths: a parameter per type, the first mount its default; sys/ keeps its name', () => {
    const doc = wholeApiDocument([sys, kvA, kvB, users], { genericMountPaths: true }) as unknown as Doc;
    expect(Object.keys(doc.paths)).toEqual(['/auth/{userpass_mount_path}/login/{name}', '/sys/health', '/sys/mounts', '/{kv_mount_path}/config', '/{kv_mount_path}/data/{name}']);
    const data = doc.paths['/{kv_mount_path}/data/{name}'];
    expect(data?.parameters?.map((p) => p.name)).toEqual(['kv_mount_path', 'name']);
    expect(data?.parameters?.[0]?.schema.default).toBe('team/a');
    expect(doc.paths['/auth/{userpass_mount_path}/login/{name}']?.parameters?.[0]?.schema.default).toBe('users');
    expect(doc.paths['/sys/health']?.parameters).toBeUndefined();
    expect(data?.get.operationId).toBe('read-kv-mount-path-data-name');
  });

  it('no mounts: an empty document that is still OpenAPI 3.0.2', () => {
    expect(wholeApiDocument([], { genericMountPaths: false })).toMatchObject({ openapi: '3.0.2', paths: {}, components: { schemas: {} } });
  });
});
