// sys/namespaces (issue 28, item 1; docs/secrets.md "Namespaces"): Vault Enterprise's
// namespace API, relative to the request's namespace. `sys/namespaces/ns2` with
// `X-Secrets-Namespace: ns1/` is the namespace `ns1/ns2/`; `sys/namespaces/ns1/ns2`
// without the header is the same one.
import { z } from 'zod';
import { badRequest, notFound } from '../../core/errors';
import { respondWith } from '../../http/logical-response';
import { secretsPath, type SecretsPathSpec, type SecretsRequestContext } from '../../http/request-context';
import type { NamespaceService } from './namespaces.service';
import type { NamespaceEntry } from './namespaces.types';

/** Vault's rendering: the path is relative to the namespace the request was made in. */
function render(entry: NamespaceEntry, from: NamespaceEntry): Record<string, unknown> {
  return { custom_metadata: entry.custom_metadata, id: entry.id, path: entry.path.slice(from.path.length) };
}

const metadataField = z.record(z.string(), z.string().nullable());

/** Create and update take strings only; null is PATCH's way of removing a key. */
function strings(metadata: Record<string, string | null> | undefined): Record<string, string> | undefined {
  if (metadata === undefined) return undefined;
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(metadata)) {
    if (v === null) throw badRequest(`custom_metadata: the value of ${JSON.stringify(k)} must be a string`);
    out[k] = v;
  }
  return out;
}

export function createNamespacePaths(deps: { namespaces: NamespaceService }): SecretsPathSpec[] {
  const { namespaces } = deps;
  const target = (ctx: { extra: SecretsRequestContext['extra'] }, name: string): NamespaceEntry | undefined =>
    namespaces.get(`${ctx.extra.namespace.path}${name.split('/').filter((s) => s !== '').join('/')}/`);

  /** The children of the request namespace, or of `sub` below it (`LIST sys/namespaces/ns2/`). */
  const list = (sub?: (ctx: SecretsRequestContext) => string) => (ctx: SecretsRequestContext) => {
    const here = ctx.extra.namespace;
    const name = sub?.(ctx) ?? '';
    const parent = name.split('/').some((p) => p !== '') ? target(ctx, name) : here;
    if (!parent) throw notFound();
    const children = namespaces.children(parent);
    if (children.length === 0) throw notFound();
    const keyInfo: Record<string, unknown> = {};
    for (const c of children) keyInfo[c.path.slice(parent.path.length)] = render(c, here);
    return respondWith({ data: { key_info: keyInfo, keys: Object.keys(keyInfo) } });
  };

  return [
    secretsPath({
      pattern: 'namespaces',
      summary: 'List the child namespaces of the request namespace.',
      operations: { list: list(), read: list() },
    }),
    secretsPath({
      pattern: 'namespaces/*path',
      summary: 'Create, read, update (custom metadata) or delete a namespace.',
      fields: {
        path: { schema: z.string(), in: 'path', description: 'Path of the namespace, relative to the request namespace.' },
        custom_metadata: {
          schema: metadataField,
          in: 'body',
          description: 'Free-form string key/value pairs kept with the namespace (PATCH: a JSON merge patch, null removes a key).',
        },
      },
      existenceCheck: (ctx) => target(ctx, ctx.rawParams.path ?? '') !== undefined,
      operations: {
        list: list((ctx) => ctx.rawParams.path ?? ''),
        read(ctx) {
          const ns = target(ctx, ctx.data.path);
          if (!ns) throw notFound();
          return respondWith({ data: render(ns, ctx.extra.namespace) });
        },
        async create(ctx) {
          return respondWith({ data: render(await put(ctx.extra.namespace, ctx.data.path, strings(ctx.data.custom_metadata)), ctx.extra.namespace) });
        },
        async update(ctx) {
          return respondWith({ data: render(await put(ctx.extra.namespace, ctx.data.path, strings(ctx.data.custom_metadata)), ctx.extra.namespace) });
        },
        async patch(ctx) {
          const ns = await namespaces.patch(ctx.extra.namespace, ctx.data.path, ctx.data.custom_metadata ?? {});
          return respondWith({ data: render(ns, ctx.extra.namespace) });
        },
        async delete(ctx) {
          await namespaces.delete(ctx.extra.namespace, ctx.data.path);
        },
      },
    }),
  ];

  async function put(parent: NamespaceEntry, name: string, metadata: Record<string, string> | undefined): Promise<NamespaceEntry> {
    // A child namespace and a mount of the parent may not share a path (the path-prefix
    // form could not tell them apart).
    const first = name.split('/').find((s) => s !== '') ?? '';
    const scope = await namespaces.scope(parent);
    const mount = first === '' ? undefined : await scope.mounts.lookup(first);
    if (mount) throw badRequest(`path is already in use at ${mount.path}`);
    return namespaces.put(parent, name, metadata);
  }
}
