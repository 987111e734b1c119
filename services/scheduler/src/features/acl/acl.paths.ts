// /v1/acl/*: bootstrap, policies and tokens (spec "Authentication"; reference §5).
// Everything here needs a management token except reading one's own token.
import type { AnyPathSpec } from '@selfstack/http-kit';
import { LIST_QUERY, param, pathField, READ_QUERY, route, WRITE_QUERY } from '../../http/fields';
import { emptyWriteReply, readReply, writeReply } from '../../http/reply';
import { readOptions, type RequestExtra } from '../../http/request-context';
import { denied, type AclService } from './acl.service';
import type { Acl } from './acl-policy';

function management(acl: Acl): void {
  if (!acl.management) throw denied();
}

export function aclPaths(acls: AclService): AnyPathSpec<RequestExtra>[] {
  return [
    route({
      pattern: 'acl/bootstrap',
      summary: 'Bootstrap the ACL system (once); returns the initial management token',
      fields: { ...WRITE_QUERY },
      operations: {
        async update() {
          const r = await acls.bootstrap();
          return writeReply(r.token, r.index);
        },
      },
    }),
    route({
      pattern: 'acl/policies',
      summary: 'List ACL policies',
      fields: { ...LIST_QUERY },
      operations: {
        async read(ctx) {
          management(ctx.extra.identity.acl);
          return readReply(await acls.listPolicies(ctx.extra.query.prefix, readOptions(ctx.extra.query, ctx.signal)));
        },
      },
    }),
    route({
      pattern: 'acl/policy/:name',
      summary: 'Read, create/update or delete an ACL policy',
      fields: { ...READ_QUERY, name: pathField('policy name') },
      operations: {
        async read(ctx) {
          const identity = ctx.extra.identity;
          // A client token may read the policies attached to it.
          if (!identity.acl.management && !(identity.token?.Policies ?? []).includes(param(ctx, 'name'))) throw denied();
          return readReply(await acls.getPolicy(param(ctx, 'name'), readOptions(ctx.extra.query, ctx.signal)));
        },
        async update(ctx) {
          management(ctx.extra.identity.acl);
          return emptyWriteReply(await acls.upsertPolicy(param(ctx, 'name'), ctx.input));
        },
        async delete(ctx) {
          management(ctx.extra.identity.acl);
          return emptyWriteReply(await acls.deletePolicy(param(ctx, 'name')));
        },
      },
    }),
    route({
      pattern: 'acl/tokens',
      summary: 'List ACL tokens (without secrets)',
      fields: { ...LIST_QUERY },
      operations: {
        async read(ctx) {
          management(ctx.extra.identity.acl);
          return readReply(await acls.listTokens(ctx.extra.query, readOptions(ctx.extra.query, ctx.signal)));
        },
      },
    }),
    route({
      pattern: 'acl/token',
      summary: 'Create an ACL token; the response is the only time its SecretID is shown',
      fields: { ...WRITE_QUERY },
      operations: {
        async update(ctx) {
          management(ctx.extra.identity.acl);
          const r = await acls.createToken(ctx.input);
          return writeReply(r.token, r.index);
        },
      },
    }),
    route({
      pattern: 'acl/token/self',
      summary: "Read the request's own token",
      fields: { ...READ_QUERY },
      operations: {
        async read(ctx) {
          return readReply({ index: 0, value: acls.tokenSelf(ctx.extra.identity) });
        },
      },
    }),
    route({
      pattern: 'acl/token/:accessor',
      summary: 'Read, update or delete an ACL token',
      fields: { ...READ_QUERY, accessor: pathField('token AccessorID') },
      operations: {
        async read(ctx) {
          const identity = ctx.extra.identity;
          if (!identity.acl.management && identity.token?.AccessorID !== param(ctx, 'accessor')) throw denied();
          return readReply(await acls.getToken(param(ctx, 'accessor'), readOptions(ctx.extra.query, ctx.signal)));
        },
        async update(ctx) {
          management(ctx.extra.identity.acl);
          const r = await acls.updateToken(param(ctx, 'accessor'), ctx.input);
          return writeReply(r.token, r.index);
        },
        async delete(ctx) {
          management(ctx.extra.identity.acl);
          return emptyWriteReply(await acls.deleteToken(param(ctx, 'accessor')));
        },
      },
    }),
  ];
}
