// The whole-API OpenAPI document (issue 28, item 3; reference §7: `GET
// /v1/sys/internal/specs/openapi[?generic_mount_paths=true]`, "full OpenAPI 3.0.2 doc for
// paths visible to the token"). Built from the same path tables that serve the requests
// (the kit's openApiFor), one table per mount, merged as the anchor's pathInternalOpenAPI
// merges its backends' documents: each path under its mount, tagged by kind.
import { openApiFor, type HelpOptions, type JsonObject, type PathTable } from '@selfstack/http-kit';

/** info of every help and OpenAPI document of the service. */
export const API_INFO: HelpOptions = {
  title: 'Secrets Service API',
  description: 'HTTP API that gives you full access to the secrets service. All API routes are prefixed with `/v1/`.',
  version: '1.0.0',
};

/** Operation tags by kind of mount, as the anchor tags its builtins. */
export type ApiTag = 'system' | 'secrets' | 'auth';

/** One mounted table: `path` as the mount table names it (`secret/`, `auth/userpass/`, `sys/`). */
export interface ApiMount {
  path: string;
  /** Engine or method type (`kv`, `userpass`, `approle`, `token`, `system`). */
  type: string;
  tag: ApiTag;
  table: PathTable<unknown>;
}

type PathItem = { parameters?: unknown[] } & JsonObject;

/**
 * An OpenAPI 3.0.2 document of `mounts`, paths relative to `/v1` and sorted. With
 * `genericMountPaths`, a mount's path is the parameter `{<type>_mount_path}` (its default
 * the mount's own path), as the anchor does for clients generated from the document;
 * `sys/` keeps its name (it cannot be mounted elsewhere). The first mount of a type gives
 * the default.
 */
export function wholeApiDocument(mounts: readonly ApiMount[], options: { genericMountPaths: boolean }): JsonObject {
  const paths: Record<string, PathItem> = {};
  for (const m of mounts) {
    const name = m.path.replace(/\/+$/, '');
    const generic = options.genericMountPaths && m.tag !== 'system';
    const param = `${m.type}_mount_path`;
    const isAuth = name.startsWith('auth/');
    const prefix = !generic ? `/${name}` : isAuth ? `/auth/{${param}}` : `/{${param}}`;
    const doc = openApiFor(m.table, { ...API_INFO, tags: [m.tag], prefix, prefixInOperationIds: true });
    for (const [key, value] of Object.entries(doc.paths as Record<string, PathItem>)) {
      if (key in paths) continue;
      if (!generic) {
        paths[key] = value;
        continue;
      }
      const mountParameter = {
        name: param,
        description: 'Path that the backend was mounted at',
        in: 'path',
        required: true,
        schema: { type: 'string', default: isAuth ? name.slice('auth/'.length) : name },
      };
      paths[key] = { ...value, parameters: [mountParameter, ...(value.parameters ?? [])] };
    }
  }
  const skeleton = openApiFor([], API_INFO);
  const sorted: Record<string, PathItem> = {};
  for (const key of Object.keys(paths).sort()) sorted[key] = paths[key] as PathItem;
  return { ...skeleton, paths: sorted };
}
