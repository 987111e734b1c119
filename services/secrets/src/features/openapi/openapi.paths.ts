// sys/internal/specs/openapi (issue 28, item 3; reference §7): the OpenAPI document of every
// path the caller can reach. Unauthenticated like the anchor's: without a token it shows
// the auth methods tuned `listing_visibility=unauth` (their logins); with one, the mounts
// its policies reach (any capability on or under the mount, as sys/internal/ui/mounts).
import { z } from 'zod';
import { respondWith } from '../../http/logical-response';
import { secretsPath, type SecretsPathSpec } from '../../http/request-context';
import type { Acl } from '../policies/acl';
import type { AuthMountService } from '../auth/auth-mounts.service';
import type { MountService } from '../mounts/mounts.service';
import type { MountEntry } from '../mounts/mounts.types';
import type { AuthMountEntry } from '../auth/auth-mounts.types';
import { wholeApiDocument, type ApiMount } from './openapi.service';
import type { PathTable } from '@selfstack/http-kit';

/** The tables behind each kind of mount (the /v1 handler's, read when a request comes). */
export interface ApiTables {
  sys: PathTable<unknown>;
  token: PathTable<unknown>;
  kv(mount: MountEntry): PathTable<unknown>;
  auth(mount: AuthMountEntry): PathTable<unknown>;
}

/** The mounts `acl` reaches (null: no token, only auth methods listed as unauthenticated). */
export async function visibleMounts(deps: { mounts: MountService; auth: AuthMountService; tables: ApiTables }, acl: Acl | null): Promise<ApiMount[]> {
  const { mounts, auth, tables } = deps;
  const reaches = (path: string): boolean => acl !== null && acl.hasMountAccess(path);
  await Promise.all([mounts.refresh(), auth.refresh()]);
  const out: ApiMount[] = [];
  if (reaches('sys/')) out.push({ path: 'sys/', type: 'system', tag: 'system', table: tables.sys });
  for (const m of [...mounts.list()].sort((a, b) => (a.path < b.path ? -1 : 1))) {
    if (reaches(m.path)) out.push({ path: m.path, type: m.type, tag: 'secrets', table: tables.kv(m) });
  }
  if (reaches('auth/token/')) out.push({ path: 'auth/token/', type: 'token', tag: 'auth', table: tables.token });
  for (const m of [...auth.list()].sort((a, b) => (a.path < b.path ? -1 : 1))) {
    if (m.config.listing_visibility === 'unauth' || reaches(`auth/${m.path}`)) out.push({ path: `auth/${m.path}`, type: m.type, tag: 'auth', table: tables.auth(m) });
  }
  return out;
}

export function createOpenApiPaths(deps: { mounts: MountService; auth: AuthMountService; tables: () => ApiTables }): SecretsPathSpec[] {
  return [
    secretsPath({
      pattern: 'internal/specs/openapi',
      summary: 'An OpenAPI 3 document of every path the caller can reach.',
      description:
        'Without a token: the auth methods listed as unauthenticated (`listing_visibility=unauth`). With a token: sys/, auth/token/ and every mount its policies reach (some capability on or under the mount).',
      unauthenticated: true,
      fields: {
        generic_mount_paths: { schema: z.boolean(), in: 'query', description: 'Name each mount by a `{<type>_mount_path}` parameter instead of its path.' },
      },
      operations: {
        async read(ctx) {
          const apis = await visibleMounts({ mounts: deps.mounts, auth: deps.auth, tables: deps.tables() }, ctx.extra.acl);
          return respondWith({ rawBody: wholeApiDocument(apis, { genericMountPaths: ctx.data.generic_mount_paths ?? false }) });
        },
      },
    }),
  ];
}
