// /v1/namespaces and /v1/namespace[/:name] CRUD.
import type { AnyPathSpec } from '@selfstack/http-kit';
import { LIST_QUERY, param, pathField, READ_QUERY, route, WRITE_QUERY } from '../../http/fields';
import { emptyWriteReply, readReply } from '../../http/reply';
import { readOptions, type RequestExtra } from '../../http/request-context';
import type { NamespaceService } from './namespaces.service';

export function namespacePaths(namespaces: NamespaceService): AnyPathSpec<RequestExtra>[] {
  const name = { name: pathField('namespace name') };
  return [
    route({
      pattern: 'namespaces',
      summary: 'List namespaces',
      fields: { ...LIST_QUERY },
      operations: {
        async read(ctx) {
          const q = ctx.extra.query;
          return readReply(await namespaces.list(q.prefix, ctx.extra.identity.acl, readOptions(q, ctx.signal)));
        },
      },
    }),
    route({
      pattern: 'namespace',
      summary: 'Create or update a namespace (name in the body)',
      fields: { ...WRITE_QUERY },
      operations: {
        async update(ctx) {
          return emptyWriteReply(await namespaces.upsert(null, ctx.input, ctx.extra.identity.acl));
        },
      },
    }),
    route({
      pattern: 'namespace/:name',
      summary: 'Read, create/update or delete a namespace',
      fields: { ...READ_QUERY, ...name },
      operations: {
        async read(ctx) {
          return readReply(await namespaces.get(param(ctx, 'name'), ctx.extra.identity.acl, readOptions(ctx.extra.query, ctx.signal)));
        },
        async update(ctx) {
          return emptyWriteReply(await namespaces.upsert(param(ctx, 'name'), ctx.input, ctx.extra.identity.acl));
        },
        async delete(ctx) {
          return emptyWriteReply(await namespaces.delete(param(ctx, 'name'), ctx.extra.identity.acl));
        },
      },
    }),
  ];
}
