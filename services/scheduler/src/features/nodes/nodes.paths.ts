// /v1/nodes, /v1/node/:id/* (reference §2) and the internal registration route for
// client agents (`PUT /v1/internal/node/register`, not part of Nomad's public API).
import type { AnyPathSpec } from '@selfstack/http-kit';
import { flag, LIST_QUERY, param, pathField, READ_QUERY, route, WRITE_QUERY } from '../../http/fields';
import { readReply, writeReply } from '../../http/reply';
import { readOptions, type RequestExtra } from '../../http/request-context';
import { denied } from '../acl/acl.service';
import { bool } from '../jobs/jobs.paths';
import type { NodeService } from './nodes.service';

export function nodePaths(nodes: NodeService): AnyPathSpec<RequestExtra>[] {
  const id = { id: pathField('node ID (or unique prefix)') };
  return [
    route({
      pattern: 'nodes',
      summary: 'List node stubs',
      fields: { ...LIST_QUERY, resources: flag('add NodeResources'), os: flag('add the os.name attribute') },
      operations: {
        async read(ctx) {
          const q = ctx.extra.query;
          const query = ctx.req.query as Record<string, unknown>;
          const flags = { resources: bool(query, 'resources'), os: bool(query, 'os') };
          return readReply(await nodes.list(q, ctx.extra.identity.acl, flags, readOptions(q, ctx.signal)));
        },
      },
    }),
    route({
      pattern: 'node/:id',
      summary: 'Read a node',
      fields: { ...READ_QUERY, ...id },
      operations: {
        async read(ctx) {
          return readReply(await nodes.get(param(ctx, 'id'), ctx.extra.identity.acl, readOptions(ctx.extra.query, ctx.signal)));
        },
      },
    }),
    route({
      pattern: 'node/:id/allocations',
      summary: 'Allocations placed on a node',
      fields: { ...READ_QUERY, ...id },
      operations: {
        async read(ctx) {
          return readReply(await nodes.allocations(param(ctx, 'id'), ctx.extra.identity.acl, readOptions(ctx.extra.query, ctx.signal)));
        },
      },
    }),
    route({
      pattern: 'node/:id/drain',
      summary: 'Set or cancel the drain strategy of a node',
      fields: { ...WRITE_QUERY, ...id },
      operations: {
        async update(ctx) {
          const r = await nodes.drain(param(ctx, 'id'), ctx.input, ctx.extra.identity.acl);
          return writeReply(r, r.Index);
        },
      },
    }),
    route({
      pattern: 'node/:id/eligibility',
      summary: 'Set the scheduling eligibility of a node',
      fields: { ...WRITE_QUERY, ...id },
      operations: {
        async update(ctx) {
          const r = await nodes.eligibility(param(ctx, 'id'), ctx.input, ctx.extra.identity.acl);
          return writeReply(r, r.Index);
        },
      },
    }),
    route({
      pattern: 'internal/node/register',
      summary: 'Register (or re-register) a client node; for client agents',
      description:
        'Body {"Node": {ID, SecretID, Name, Datacenter, HTTPAddr, Attributes, NodeResources, Drivers, ...}}. Needs a management token when ACLs are enabled, or the X-Scheduler-Node-Secret header matching SCHEDULER_NODE_SECRET. Emits NodeRegistration.',
      fields: { ...WRITE_QUERY },
      operations: {
        async update(ctx) {
          const presented = ctx.req.headers['x-scheduler-node-secret'];
          if (!nodes.mayRegister(ctx.extra.identity.acl, typeof presented === 'string' ? presented : '')) throw denied();
          const r = await nodes.register(ctx.input);
          return writeReply(r, r.Index);
        },
      },
    }),
  ];
}
