// Client endpoints through the server (issue 26 item 5; the anchor's /v1/client/*): the
// server authorises the caller against the allocation's namespace (read-logs for logs,
// read-fs for ls/cat/stat, read-job for stats, alloc-lifecycle for restart; node:read for
// host stats) and forwards the request to the agent at the node's HTTPAddr, signed with
// the node's secret hash (agent/agent-auth.ts) so the agent serves only the servers.
import { AppError, BadRequestError, NotFoundError } from '@selfstack/errors';
import type { Acl, Capability } from '../acl/acl-policy';
import { denied } from '../acl/acl.service';
import type { AllocationStore } from '../allocations/allocations.store';
import type { NodeStore } from '../nodes/nodes.store';
import type { SchedulerState } from '../../shared/blocking-read';
import { AGENT_AUTH_HEADER, signAgentRequest } from '../../agent/agent-auth';

export interface ClientServiceDeps extends Pick<SchedulerState, 'prisma'> {
  allocStore: AllocationStore;
  nodeStore: NodeStore;
}

/** The agent could not be reached (the anchor answers "No path to node"). */
export class NoPathToNodeError extends AppError {
  constructor(message: string) {
    super(502, message);
  }
}

export interface AgentTarget {
  baseUrl: string;
  secretHash: string;
}

export interface ForwardRequest {
  method: string;
  /** path and query as the agent serves them (/v1/client/...) */
  url: string;
  body?: unknown;
  signal?: AbortSignal;
}

export function createClientService(deps: ClientServiceDeps) {
  async function nodeTarget(nodeId: string): Promise<AgentTarget> {
    const row = await deps.nodeStore.get(deps.prisma, nodeId);
    if (!row) throw new NotFoundError(`Unknown node ${JSON.stringify(nodeId)}`);
    const addr = row.node.HTTPAddr;
    if (typeof addr !== 'string' || addr === '') throw new NoPathToNodeError('No path to node');
    if (row.node.Status === 'down') throw new NoPathToNodeError(`No path to node: node ${nodeId} is down`);
    return { baseUrl: /^https?:\/\//.test(addr) ? addr : `${row.node.TLSEnabled ? 'https' : 'http'}://${addr}`, secretHash: row.secretHash };
  }

  return {
    /** The agent running allocation `allocId`, once the caller holds `cap` in its namespace. */
    async forAllocation(allocId: string, acl: Acl, cap: Capability): Promise<AgentTarget> {
      if (allocId === '') throw new BadRequestError('missing allocation ID');
      const alloc = await deps.allocStore.get(deps.prisma, allocId);
      if (!alloc) throw new NotFoundError(`Unknown allocation ${JSON.stringify(allocId)}`);
      if (!acl.allowNamespaceOperation(alloc.Namespace, cap)) throw denied();
      return nodeTarget(alloc.NodeID);
    },

    /** GET /v1/client/stats?node_id=: node:read. */
    async forNode(nodeId: string, acl: Acl): Promise<AgentTarget> {
      if (!acl.allowNodeRead()) throw denied();
      if (nodeId === '') throw new BadRequestError('missing node_id');
      return nodeTarget(nodeId);
    },

    /** Sends the request to the agent, signed; the response is the agent's. */
    async forward(target: AgentTarget, req: ForwardRequest): Promise<Response> {
      try {
        return await fetch(`${target.baseUrl}${req.url}`, {
          method: req.method,
          headers: { [AGENT_AUTH_HEADER]: signAgentRequest(target.secretHash, req.method, req.url), ...(req.body !== undefined ? { 'Content-Type': 'application/json' } : {}) },
          ...(req.body !== undefined ? { body: JSON.stringify(req.body) } : {}),
          ...(req.signal ? { signal: req.signal } : {}),
        });
      } catch (err) {
        throw new NoPathToNodeError(`No path to node: ${err instanceof Error ? (err.cause instanceof Error ? err.cause.message : err.message) : String(err)}`);
      }
    },
  };
}

export type ClientService = ReturnType<typeof createClientService>;
