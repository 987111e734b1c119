// /v1/namespaces and /v1/namespace[/:name] CRUD.
import { z } from 'zod';
import type { AnyPathSpec } from '@selfstack/http-kit';
import { jsonMember, jsonObject, pathParam } from '../../http/fields';
import { LIST_QUERY, READ_QUERY, readOptions, WRITE_QUERY } from '../../http/query';
import { emptyWriteReply, readReply } from '../../http/reply';
import { schedulerPath, type RequestExtra } from '../../http/request-context';
import type { NamespaceService } from './namespaces.service';

/** structs.Namespace as a write sends it. */
const NAMESPACE_BODY = {
  Name: jsonMember(z.string(), 'Namespace.Name', 'string', 'namespace name (must equal the path name when both are given)'),
  Description: jsonMember(z.string(), 'Namespace.Description', 'string', 'at most 256 characters'),
  Quota: jsonMember(z.string(), 'Namespace.Quota', 'string', 'quota specification name'),
  Capabilities: jsonMember(jsonObject, 'Namespace.Capabilities', 'structs.NamespaceCapabilities', 'enabled/disabled task drivers and network modes'),
  NodePoolConfiguration: jsonMember(jsonObject, 'Namespace.NodePoolConfiguration', 'structs.NamespaceNodePoolConfiguration', 'default and allowed node pools'),
  Meta: jsonMember(z.record(z.string(), z.string()), 'Namespace.Meta', 'map[string]string', 'user metadata'),
};

export function namespacePaths(namespaces: NamespaceService): AnyPathSpec<RequestExtra>[] {
  const name = { name: pathParam('namespace name') };
  return [
    schedulerPath({
      pattern: 'namespaces',
      summary: 'List namespaces',
      fields: { ...LIST_QUERY },
      operations: {
        async read(ctx) {
          return readReply(await namespaces.list(ctx.query.prefix, ctx.extra.identity.acl, readOptions(ctx)));
        },
      },
    }),
    schedulerPath({
      pattern: 'namespace',
      summary: 'Create or update a namespace (name in the body)',
      fields: { ...WRITE_QUERY, ...NAMESPACE_BODY },
      operations: {
        async update(ctx) {
          return emptyWriteReply(await namespaces.upsert(null, ctx.body, ctx.extra.identity.acl));
        },
      },
    }),
    schedulerPath({
      pattern: 'namespace/:name',
      summary: 'Read, create/update or delete a namespace',
      fields: { ...READ_QUERY, ...name, ...NAMESPACE_BODY },
      operations: {
        async read(ctx) {
          return readReply(await namespaces.get(ctx.params.name, ctx.extra.identity.acl, readOptions(ctx)));
        },
        async update(ctx) {
          return emptyWriteReply(await namespaces.upsert(ctx.params.name, ctx.body, ctx.extra.identity.acl));
        },
        async delete(ctx) {
          return emptyWriteReply(await namespaces.delete(ctx.params.name, ctx.extra.identity.acl));
        },
      },
    }),
  ];
}
