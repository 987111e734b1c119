// /v1/nodes, /v1/node/:id/* (reference §2) and the internal routes of client agents
// (`PUT /v1/internal/node/register` and `/v1/internal/node/:id/heartbeat`, the anchor's
// Node.Register and Node.UpdateStatus RPCs over HTTP; docs/scheduler.md "Nodes and heartbeats").
import { z } from 'zod';
import { requestToken, type AnyPathSpec } from '@selfstack/http-kit';
import { goBool, jsonMember, jsonObject, pathParam } from '../../http/fields';
import { LIST_QUERY, listQuery, READ_QUERY, readOptions, WRITE_QUERY } from '../../http/query';
import { readReply, writeReply } from '../../http/reply';
import { schedulerPath, TOKEN_HEADERS, type RequestExtra } from '../../http/request-context';
import type { NodeCaller, NodeService } from './nodes.service';

/** The caller of a node route: its ACL, request token and cluster node secret header. */
function callerOf(ctx: { req: { headers: Record<string, string | string[] | undefined> }; extra: RequestExtra }): NodeCaller {
  const presented = ctx.req.headers['x-scheduler-node-secret'];
  return { acl: ctx.extra.identity.acl, token: requestToken(ctx.req.headers, TOKEN_HEADERS) ?? '', clusterSecret: typeof presented === 'string' ? presented : '' };
}

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
      pattern: 'node/:id/purge',
      summary: 'Purge (deregister) a node',
      description: 'Removes the node; the jobs with allocations on it are evaluated again (its allocations are lost and replaced). Emits NodeDeregistration.',
      fields: { ...WRITE_QUERY, id: pathParam('node ID') },
      operations: {
        async update(ctx) {
          const r = await nodes.purge(ctx.params.id, ctx.extra.identity.acl);
          return writeReply(r, r.Index);
        },
      },
    }),
    schedulerPath({
      pattern: 'internal/node/register',
      summary: 'Register (or re-register) a client node; for client agents',
      description:
        'Body {"Node": {ID, SecretID, Name, Datacenter, HTTPAddr, Attributes, NodeResources, Drivers, ...}}. A new node needs a management or node:write token when ACLs are enabled, or the X-Scheduler-Node-Secret header matching SCHEDULER_NODE_SECRET; an existing node is re-registered only with its own SecretID (else 403). Answers HeartbeatTTL (ns). Emits NodeRegistration.',
      fields: {
        ...WRITE_QUERY,
        Node: jsonMember(jsonObject, 'NodeRegisterRequest.Node', 'structs.Node', 'the node: ID (UUID), SecretID, Name, Datacenter, HTTPAddr, Attributes, NodeResources, Drivers, ...'),
      },
      operations: {
        async update(ctx) {
          const r = await nodes.register(ctx.body, callerOf(ctx));
          return writeReply(r, r.Index);
        },
      },
    }),
    schedulerPath({
      pattern: 'internal/node/:id/heartbeat',
      summary: 'Heartbeat of a client node; for client agents',
      description:
        "Authenticated by the node's SecretID as the request token (or a management token with ACLs enabled). Answers HeartbeatTTL (ns): the next heartbeat must come within it (plus the server's grace) or the node goes down. A node that was down comes back with the status sent (default ready). Emits NodeEvent when the status changes.",
      fields: {
        ...WRITE_QUERY,
        id: pathParam('node ID'),
        Status: jsonMember(z.string(), 'NodeUpdateStatusRequest.Status', 'string', '`ready` (default) or `initializing`'),
      },
      operations: {
        async update(ctx) {
          const r = await nodes.heartbeat(ctx.params.id, ctx.body, callerOf(ctx));
          return writeReply(r, r.Index);
        },
      },
    }),
  ];
}
