// /v1/deployments and /v1/deployment/* (reference §4).
import { z } from 'zod';
import type { AnyPathSpec } from '@selfstack/http-kit';
import { jsonMember, pathParam, stringList } from '../../http/fields';
import { LIST_QUERY, listQuery, namespaceScope, READ_QUERY, readOptions, WRITE_QUERY } from '../../http/query';
import { readReply, writeReply } from '../../http/reply';
import { schedulerPath, type RequestExtra } from '../../http/request-context';
import { checkDeploymentId, type DeploymentService } from './deployments.service';

/** The DeploymentID every deployment write repeats from its path (reference §4). */
const deploymentId = (request: string) => ({
  DeploymentID: jsonMember(z.string(), `${request}.DeploymentID`, 'string', 'must equal the deployment ID of the path'),
});

export function deploymentPaths(deployments: DeploymentService): AnyPathSpec<RequestExtra>[] {
  const id = { id: pathParam('deployment ID') };
  return [
    schedulerPath({
      pattern: 'deployments',
      summary: 'List deployments',
      fields: { ...LIST_QUERY },
      operations: {
        async read(ctx) {
          return readReply(await deployments.list(listQuery(ctx), ctx.extra.identity.acl, readOptions(ctx)));
        },
      },
    }),
    schedulerPath({
      pattern: 'deployment/:id',
      summary: 'Read a deployment',
      fields: { ...READ_QUERY, ...id },
      operations: {
        async read(ctx) {
          return readReply(await deployments.get(ctx.params.id, ctx.extra.identity.acl, readOptions(ctx)));
        },
      },
    }),
    schedulerPath({
      pattern: 'deployment/allocations/:id',
      summary: 'Allocations of a deployment',
      fields: { ...READ_QUERY, ...id },
      operations: {
        async read(ctx) {
          return readReply(await deployments.allocations(ctx.params.id, namespaceScope(ctx).namespace, ctx.extra.identity.acl, readOptions(ctx)));
        },
      },
    }),
    schedulerPath({
      pattern: 'deployment/fail/:id',
      summary: 'Mark a deployment as failed',
      fields: { ...WRITE_QUERY, ...id },
      operations: {
        async update(ctx) {
          const r = await deployments.fail(ctx.params.id, ctx.extra.identity.acl);
          return writeReply(r, r.Index);
        },
      },
    }),
    schedulerPath({
      pattern: 'deployment/pause/:id',
      summary: 'Pause or resume a deployment',
      fields: {
        ...WRITE_QUERY,
        ...id,
        ...deploymentId('DeploymentPauseRequest'),
        Pause: jsonMember(z.boolean(), 'DeploymentPauseRequest.Pause', 'bool', '`true` pauses, `false` resumes'),
      },
      operations: {
        async update(ctx) {
          checkDeploymentId(ctx.body.DeploymentID, ctx.params.id);
          const r = await deployments.pause(ctx.params.id, ctx.body.Pause === true, ctx.extra.identity.acl);
          return writeReply(r, r.Index);
        },
      },
    }),
    schedulerPath({
      pattern: 'deployment/promote/:id',
      summary: 'Promote canaries of all or some task groups',
      fields: {
        ...WRITE_QUERY,
        ...id,
        ...deploymentId('DeploymentPromoteRequest'),
        All: jsonMember(z.boolean(), 'DeploymentPromoteRequest.All', 'bool', 'promote every task group'),
        Groups: jsonMember(stringList, 'DeploymentPromoteRequest.Groups', '[]string', 'task groups to promote'),
      },
      operations: {
        async update(ctx) {
          checkDeploymentId(ctx.body.DeploymentID, ctx.params.id);
          const r = await deployments.promote(ctx.params.id, ctx.body.All === true, ctx.body.Groups ?? [], ctx.extra.identity.acl);
          return writeReply(r, r.Index);
        },
      },
    }),
    schedulerPath({
      pattern: 'deployment/allocation-health/:id',
      summary: 'Set the health of deployment allocations',
      fields: {
        ...WRITE_QUERY,
        ...id,
        ...deploymentId('DeploymentAllocHealthRequest'),
        HealthyAllocationIDs: jsonMember(stringList, 'DeploymentAllocHealthRequest.HealthyAllocationIDs', '[]string', 'allocations to mark healthy'),
        UnhealthyAllocationIDs: jsonMember(stringList, 'DeploymentAllocHealthRequest.UnhealthyAllocationIDs', '[]string', 'allocations to mark unhealthy'),
      },
      operations: {
        async update(ctx) {
          checkDeploymentId(ctx.body.DeploymentID, ctx.params.id);
          const healthy = ctx.body.HealthyAllocationIDs ?? [];
          const unhealthy = ctx.body.UnhealthyAllocationIDs ?? [];
          const r = await deployments.allocationHealth(ctx.params.id, healthy, unhealthy, ctx.extra.identity.acl);
          return writeReply(r, r.Index);
        },
      },
    }),
  ];
}
