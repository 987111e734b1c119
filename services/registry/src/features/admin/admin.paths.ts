// Administration API under /v1/admin (docs/registry.md "Tokens and namespaces"). Every
// route needs the admin token (REGISTRY_ADMIN_TOKEN); unknown body fields are refused so
// a typo (`namepsace`) never silently creates a read-only token.
import { z } from 'zod';
import { BadRequestError } from '@selfstack/errors';
import { Reply, type AnyPathSpec, type OperationContext, type FieldMap } from '@selfstack/http-kit';
import type { AuthService, RegistryExtra } from '../auth/auth.service';
import { def } from '../modules/modules.paths';
import type { AdminService } from './admin.service';
import { createNamespaceBody, createTokenBody } from './admin.types';

export interface AdminPathsDeps {
  admin: AdminService;
  auth: AuthService;
}

function refuseUnknown(ctx: OperationContext<FieldMap, RegistryExtra>): void {
  if (ctx.unknownParams.length > 0) throw new BadRequestError(ctx.unknownParams.map((p) => `unknown field ${JSON.stringify(p)}`));
}

const body = <S extends z.ZodType>(schema: S, description: string) => ({ in: 'body' as const, schema, description });

export function adminPaths(deps: AdminPathsDeps): AnyPathSpec<RegistryExtra>[] {
  const { admin } = deps;
  return [
    def({
      pattern: 'namespaces',
      summary: 'Namespaces',
      fields: {
        name: { in: 'body', schema: createNamespaceBody.name, description: 'Namespace name (module address grammar)', required: true },
        owner: body(createNamespaceBody.owner, 'Shown as `owner` in module summaries'),
      },
      operationSummaries: { read: 'List namespaces', create: 'Create a namespace' },
      operations: {
        read() {
          return admin.listNamespaces();
        },
        async create(ctx) {
          refuseUnknown(ctx);
          return new Reply(201, await admin.createNamespace({ name: ctx.body.name, ...(ctx.body.owner === undefined ? {} : { owner: ctx.body.owner }) }));
        },
      },
    }),
    def({
      pattern: 'namespaces/:name',
      summary: 'Delete an empty namespace (its tokens go with it)',
      fields: { name: { in: 'path', schema: z.string().min(1).max(256), description: 'Namespace', required: true } },
      operations: {
        async delete(ctx) {
          await admin.deleteNamespace(ctx.params.name);
          return new Reply(204);
        },
      },
    }),
    def({
      pattern: 'tokens',
      summary: 'API tokens',
      description: 'POST returns the token secret once; only its SHA-256 hash is stored. A token with `namespace` may publish and delete versions there; without, it is read-only.',
      fields: {
        description: body(createTokenBody.description, 'Free text'),
        namespace: body(createTokenBody.namespace, 'Namespace the token may publish to (omit for a read-only token)'),
        ttl_seconds: body(createTokenBody.ttl_seconds, 'Lifetime in seconds (default: no expiry)'),
      },
      operationSummaries: { read: 'List tokens (without secrets)', create: 'Create a token' },
      operations: {
        read() {
          return admin.listTokens();
        },
        async create(ctx) {
          refuseUnknown(ctx);
          const b = ctx.body;
          return new Reply(
            201,
            await admin.createToken({
              ...(b.description === undefined ? {} : { description: b.description }),
              ...(b.namespace === undefined ? {} : { namespace: b.namespace }),
              ...(b.ttl_seconds === undefined ? {} : { ttl_seconds: b.ttl_seconds }),
            }),
          );
        },
      },
    }),
    def({
      pattern: 'tokens/:id',
      summary: 'Revoke a token',
      fields: { id: { in: 'path', schema: z.string().min(1).max(64), description: 'Token id', required: true } },
      operations: {
        async delete(ctx) {
          await admin.deleteToken(ctx.params.id);
          return new Reply(204);
        },
      },
    }),
    def({
      pattern: 'maintenance',
      summary: 'Maintenance mode',
      description:
        'While on, every route except /v1/admin answers 503 with Retry-After and `message` as its error (spec "Errors": 503). Replicas notice a switch within REGISTRY_MAINTENANCE_CHECK_INTERVAL.',
      fields: {
        enabled: { in: 'body', schema: z.boolean(), description: 'true: answer 503 to every non-admin request', required: true },
        message: body(z.string().max(1000), 'The error message clients see (default: a generic one)'),
      },
      operationSummaries: { read: 'Show maintenance mode', update: 'Switch maintenance mode on or off' },
      operations: {
        read() {
          return admin.maintenance();
        },
        async update(ctx) {
          refuseUnknown(ctx);
          return admin.setMaintenance(ctx.body.enabled, ctx.body.message);
        },
      },
    }),
    def({
      pattern: 'modules/:namespace/:name/:provider',
      summary: 'Mark a module verified (partner) or not',
      fields: {
        namespace: { in: 'path', schema: z.string().min(1).max(256), description: 'Namespace', required: true },
        name: { in: 'path', schema: z.string().min(1).max(256), description: 'Name', required: true },
        provider: { in: 'path', schema: z.string().min(1).max(256), description: 'Provider', required: true },
        verified: { in: 'body', schema: z.boolean(), description: 'true: listed by ?verified=true', required: true },
      },
      operations: {
        async patch(ctx) {
          refuseUnknown(ctx);
          return admin.setVerified(ctx.params.namespace, ctx.params.name, ctx.params.provider, ctx.body.verified);
        },
      },
    }),
  ];
}

/** Every admin route needs the admin token. */
export function authorizeAdmin(auth: AuthService) {
  return (ctx: { extra: RegistryExtra }) => auth.assertAdmin(ctx.extra.principal);
}
