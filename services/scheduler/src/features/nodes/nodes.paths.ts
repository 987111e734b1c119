// /v1/nodes, /v1/node/:id/* (reference §2) and the internal registration route for
// client agents (`PUT /v1/internal/node/register`, not part of Nomad's public API).
import { z } from 'zod';
import type { AnyPathSpec } from '@selfstack/http-kit';
import { goBool, jsonMember, jsonObject, pathParam } from '../../http/fields';
import { LIST_QUERY, listQuery, READ_QUERY, readOptions, WRITE_QUERY } from '../../http/query';
import { readReply, writeReply } from '../../http/reply';
import { schedulerPath, type RequestExtra } from '../../http/request-context';
import { denied } from '../acl/acl.service';
import type { NodeService } from './nodes.service';

export function nodePaths(nodes: NodeService): AnyPathSpec<RequestExtra>[] {
  const id = { id: pathParam('node ID (or unique prefix)') };
  return [
    schedulerPath({
      pattern: 'nodes',
      summary: 'List node stubs',
      fields: { ...LIST_QUERY, resources: goBool('add NodeResources'), os: goBool('add the os.name attribute') },
      operations: {
        async read(ctx) {
          const flags = { resources: ctx.query.resources, os: ctx.query.os };
          return readReply(await nodes.list(listQuery(ctx), ctx.extra.identity.acl, flags, readOptions(ctx)));
        },
      },
    }),
    schedulerPath({
      pattern: 'node/:id',
      summary: 'Read a node',
      fields: { ...READ_QUERY, ...id },
      operations: {
        async read(ctx) {
          return readReply(await nodes.get(ctx.params.id, ctx.extra.identity.acl, readOptions(ctx)));
        },
      },
    }),
    schedulerPath({
      pattern: 'node/:id/allocations',
      summary: 'Allocations placed on a node',
      fields: { ...READ_QUERY, ...id },
      operations: {
        async read(ctx) {
          return readReply(await nodes.allocations(ctx.params.id, ctx.extra.identity.acl, readOptions(ctx)));
        },
      },
    }),
    schedulerPath({
      pattern: 'node/:id/drain',
      summary: 'Set or cancel the drain strategy of a node',
      fields: {
        ...WRITE_QUERY,
        ...id,
        DrainSpec: jsonMember(jsonObject, 'NodeUpdateDrainRequest.DrainSpec', 'api.DrainSpec', '{Deadline (ns; -1 force), IgnoreSystemJobs}; null or absent cancels the drain'),
        MarkEligible: jsonMember(z.boolean(), 'NodeUpdateDrainRequest.MarkEligible', 'bool', 'when cancelling, make the node eligible again'),
        Meta: jsonMember(z.record(z.string(), z.string()), 'NodeUpdateDrainRequest.Meta', 'map[string]string', 'recorded with the drain'),
      },
      operations: {
        async update(ctx) {
          const r = await nodes.drain(ctx.params.id, ctx.body, ctx.extra.identity.acl);
          return writeReply(r, r.Index);
        },
      },
    }),
    schedulerPath({
      pattern: 'node/:id/eligibility',
      summary: 'Set the scheduling eligibility of a node',
      fields: {
        ...WRITE_QUERY,
        ...id,
        Eligibility: jsonMember(z.string(), 'NodeUpdateEligibilityRequest.Eligibility', 'string', '`eligible` or `ineligible`'),
      },
      operations: {
        async update(ctx) {
          const r = await nodes.eligibility(ctx.params.id, ctx.body, ctx.extra.identity.acl);
          return writeReply(r, r.Index);
        },
      },
    }),
    schedulerPath({
      pattern: 'internal/node/register',
      summary: 'Register (or re-register) a client node; for client agents',
      description:
        'Body {"Node": {ID, SecretID, Name, Datacenter, HTTPAddr, Attributes, NodeResources, Drivers, ...}}. Needs a management token when ACLs are enabled, or the X-Scheduler-Node-Secret header matching SCHEDULER_NODE_SECRET. Emits NodeRegistration.',
      fields: {
        ...WRITE_QUERY,
        Node: jsonMember(jsonObject, 'NodeRegisterRequest.Node', 'structs.Node', 'the node: ID (UUID), SecretID, Name, Datacenter, HTTPAddr, Attributes, NodeResources, Drivers, ...'),
      },
      operations: {
        async update(ctx) {
          const presented = ctx.req.headers['x-scheduler-node-secret'];
          if (!nodes.mayRegister(ctx.extra.identity.acl, typeof presented === 'string' ? presented : '')) throw denied();
          const r = await nodes.register(ctx.body);
          return writeReply(r, r.Index);
        },
      },
    }),
  ];
}
