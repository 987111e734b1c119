// /v1/deployments and /v1/deployment/* (reference §4).
import { BadRequestError } from '@selfstack/errors';
import type { AnyPathSpec } from '@selfstack/http-kit';
import { LIST_QUERY, param, pathField, READ_QUERY, route, WRITE_QUERY } from '../../http/fields';
import { readReply, writeReply } from '../../http/reply';
import { readOptions, type RequestExtra } from '../../http/request-context';
import { checkDeploymentId, type DeploymentService } from './deployments.service';

function idList(v: unknown, name: string): string[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v) || !v.every((x) => typeof x === 'string')) throw new BadRequestError(`${name} must be a list of allocation IDs`);
  return v as string[];
}

export function deploymentPaths(deployments: DeploymentService): AnyPathSpec<RequestExtra>[] {
  const id = { id: pathField('deployment ID') };
  return [
    route({
      pattern: 'deployments',
      summary: 'List deployments',
      fields: { ...LIST_QUERY },
      operations: {
        async read(ctx) {
          const q = ctx.extra.query;
          return readReply(await deployments.list(q, ctx.extra.identity.acl, readOptions(q, ctx.signal)));
        },
      },
    }),
    route({
      pattern: 'deployment/:id',
      summary: 'Read a deployment',
      fields: { ...READ_QUERY, ...id },
      operations: {
        async read(ctx) {
          return readReply(await deployments.get(param(ctx, 'id'), ctx.extra.identity.acl, readOptions(ctx.extra.query, ctx.signal)));
        },
      },
    }),
    route({
      pattern: 'deployment/allocations/:id',
      summary: 'Allocations of a deployment',
      fields: { ...READ_QUERY, ...id },
      operations: {
        async read(ctx) {
          return readReply(await deployments.allocations(param(ctx, 'id'), ctx.extra.query.namespace, ctx.extra.identity.acl, readOptions(ctx.extra.query, ctx.signal)));
        },
      },
    }),
    route({
      pattern: 'deployment/fail/:id',
      summary: 'Mark a deployment as failed',
      fields: { ...WRITE_QUERY, ...id },
      operations: {
        async update(ctx) {
          const r = await deployments.fail(param(ctx, 'id'), ctx.extra.identity.acl);
          return writeReply(r, r.Index);
        },
      },
    }),
    route({
      pattern: 'deployment/pause/:id',
      summary: 'Pause or resume a deployment',
      fields: { ...WRITE_QUERY, ...id },
      operations: {
        async update(ctx) {
          checkDeploymentId(ctx.input, param(ctx, 'id'));
          const r = await deployments.pause(param(ctx, 'id'), ctx.input['Pause'] === true, ctx.extra.identity.acl);
          return writeReply(r, r.Index);
        },
      },
    }),
    route({
      pattern: 'deployment/promote/:id',
      summary: 'Promote canaries of all or some task groups',
      fields: { ...WRITE_QUERY, ...id },
      operations: {
        async update(ctx) {
          checkDeploymentId(ctx.input, param(ctx, 'id'));
          const groups = idList(ctx.input['Groups'], 'Groups');
          const r = await deployments.promote(param(ctx, 'id'), ctx.input['All'] === true, groups, ctx.extra.identity.acl);
          return writeReply(r, r.Index);
        },
      },
    }),
    route({
      pattern: 'deployment/allocation-health/:id',
      summary: 'Set the health of deployment allocations',
      fields: { ...WRITE_QUERY, ...id },
      operations: {
        async update(ctx) {
          checkDeploymentId(ctx.input, param(ctx, 'id'));
          const healthy = idList(ctx.input['HealthyAllocationIDs'], 'HealthyAllocationIDs');
          const unhealthy = idList(ctx.input['UnhealthyAllocationIDs'], 'UnhealthyAllocationIDs');
          const r = await deployments.allocationHealth(param(ctx, 'id'), healthy, unhealthy, ctx.extra.identity.acl);
          return writeReply(r, r.Index);
        },
      },
    }),
  ];
}
