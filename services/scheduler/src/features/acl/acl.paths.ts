// /v1/acl/*: bootstrap, policies and tokens (spec "Authentication"; reference §5).
// Everything here needs a management token except reading one's own token.
import { z } from 'zod';
import type { AnyPathSpec } from '@selfstack/http-kit';
import { jsonMember, jsonObject, pathParam, stringList } from '../../http/fields';
import { LIST_QUERY, listQuery, READ_QUERY, readOptions, WRITE_QUERY } from '../../http/query';
import { emptyWriteReply, readReply, writeReply } from '../../http/reply';
import { schedulerPath, type RequestExtra } from '../../http/request-context';
import { denied, type AclService } from './acl.service';
import type { Acl } from './acl-policy';

function management(acl: Acl): void {
  if (!acl.management) throw denied();
}

/** structs.ACLPolicy as a write sends it. */
const POLICY_BODY = {
  Name: jsonMember(z.string(), 'ACLPolicy.Name', 'string', 'policy name (must equal the path name when given)'),
  Description: jsonMember(z.string(), 'ACLPolicy.Description', 'string', 'free text'),
  Rules: jsonMember(z.string(), 'ACLPolicy.Rules', 'string', 'the policy in HCL'),
  JobACL: jsonMember(jsonObject, 'ACLPolicy.JobACL', 'structs.JobACL', 'the job the policy is attached to (workload identity)'),
};

/** structs.ACLToken as a write sends it. */
const TOKEN_BODY = {
  Name: jsonMember(z.string(), 'ACLToken.Name', 'string', 'token name'),
  Type: jsonMember(z.string(), 'ACLToken.Type', 'string', '`client` (default) or `management`'),
  Policies: jsonMember(stringList, 'ACLToken.Policies', '[]string', 'policies of a client token'),
  Global: jsonMember(z.boolean(), 'ACLToken.Global', 'bool', 'replicated to every region'),
  ExpirationTTL: jsonMember(z.string(), 'ACLToken.ExpirationTTL', 'time.Duration', 'lifetime from creation (`10m`, `1h`)'),
};

export function aclPaths(acls: AclService): AnyPathSpec<RequestExtra>[] {
  return [
    schedulerPath({
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
    schedulerPath({
      pattern: 'acl/policies',
      summary: 'List ACL policies',
      fields: { ...LIST_QUERY },
      operations: {
        async read(ctx) {
          management(ctx.extra.identity.acl);
          return readReply(await acls.listPolicies(ctx.query.prefix, readOptions(ctx)));
        },
      },
    }),
    schedulerPath({
      pattern: 'acl/policy/:name',
      summary: 'Read, create/update or delete an ACL policy',
      fields: { ...READ_QUERY, name: pathParam('policy name'), ...POLICY_BODY },
      operations: {
        async read(ctx) {
          const identity = ctx.extra.identity;
          // A client token may read the policies attached to it.
          if (!identity.acl.management && !(identity.token?.Policies ?? []).includes(ctx.params.name)) throw denied();
          return readReply(await acls.getPolicy(ctx.params.name, readOptions(ctx)));
        },
        async update(ctx) {
          management(ctx.extra.identity.acl);
          return emptyWriteReply(await acls.upsertPolicy(ctx.params.name, ctx.body));
        },
        async delete(ctx) {
          management(ctx.extra.identity.acl);
          return emptyWriteReply(await acls.deletePolicy(ctx.params.name));
        },
      },
    }),
    schedulerPath({
      pattern: 'acl/tokens',
      summary: 'List ACL tokens (without secrets)',
      fields: { ...LIST_QUERY },
      operations: {
        async read(ctx) {
          management(ctx.extra.identity.acl);
          return readReply(await acls.listTokens(listQuery(ctx), readOptions(ctx)));
        },
      },
    }),
    schedulerPath({
      pattern: 'acl/token',
      summary: 'Create an ACL token; the response is the only time its SecretID is shown',
      fields: { ...WRITE_QUERY, ...TOKEN_BODY },
      operations: {
        async update(ctx) {
          management(ctx.extra.identity.acl);
          const r = await acls.createToken(ctx.body);
          return writeReply(r.token, r.index);
        },
      },
    }),
    schedulerPath({
      pattern: 'acl/token/self',
      summary: "Read the request's own token",
      fields: { ...READ_QUERY },
      operations: {
        async read(ctx) {
          return readReply({ index: 0, value: acls.tokenSelf(ctx.extra.identity) });
        },
      },
    }),
    schedulerPath({
      pattern: 'acl/token/:accessor',
      summary: 'Read, update or delete an ACL token',
      fields: {
        ...READ_QUERY,
        accessor: pathParam('token AccessorID'),
        AccessorID: jsonMember(z.string(), 'ACLToken.AccessorID', 'string', 'must equal the path accessor when given'),
        ...TOKEN_BODY,
      },
      operations: {
        async read(ctx) {
          const identity = ctx.extra.identity;
          if (!identity.acl.management && identity.token?.AccessorID !== ctx.params.accessor) throw denied();
          return readReply(await acls.getToken(ctx.params.accessor, readOptions(ctx)));
        },
        async update(ctx) {
          management(ctx.extra.identity.acl);
          const r = await acls.updateToken(ctx.params.accessor, ctx.body);
          return writeReply(r.token, r.index);
        },
        async delete(ctx) {
          management(ctx.extra.identity.acl);
          return emptyWriteReply(await acls.deleteToken(ctx.params.accessor));
        },
      },
    }),
  ];
}
