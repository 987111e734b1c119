// Nodes (reference §2): the internal registration route client agents use, list/read,
// drain and eligibility. Node events carry Topic `Node`, Key = node ID, FilterKeys null.
import type { StateEventInput } from '@selfstack/state';
import { BadRequestError, NotFoundError } from '@selfstack/errors';
import type { Acl } from '../acl/acl-policy';
import { denied } from '../acl/acl.service';
import type { AllocationStore } from '../allocations/allocations.store';
import type { Allocation } from '../allocations/allocations.types';
import { asObject, sha256Hex, TABLES, type Clock, type Indexed, type JsonObject, type ReadOptions } from '../../shared/common.types';
import { blockingRead, shareKey, type SchedulerState } from '../../shared/blocking-read';
import { compileFilter, paginate } from '../../http/pagination';
import type { ListQuery } from '../../http/query';
import type { Paged } from '../jobs/jobs.service';
import type { NodeStore } from './nodes.store';
import { nodeStub, type Node, type NodeUpdateResponse } from './nodes.types';
import { secretsEqual } from '@selfstack/password';

/** Called inside a node write (scheduling engine, issue 25): creates the evaluations the
 * change calls for and returns their IDs. */
export type NodeChangeHook = (
  w: { tx: Parameters<NodeStore['put']>[0]; index: number; emit: (e: StateEventInput) => void },
  before: Node | null,
  after: Node,
) => Promise<string[]>;

export interface NodeServiceDeps extends SchedulerState {
  onNodeChange?: NodeChangeHook;
  nodeStore: NodeStore;
  allocStore: AllocationStore;
  clock: Clock;
  datacenter: string;
  aclEnabled: boolean;
  /** Shared secret client agents may present instead of a management token. */
  nodeSecret: string;
}

const NODE_STATUSES = ['initializing', 'ready', 'down', 'disconnected'];

function nodeEvent(type: string, node: Node) {
  // The spec gives drains their own topic (`NodeDrain`, payload Node); the anchor uses `Node`.
  // A `Node` subscription receives both (features/events/event-topics.ts).
  return { topic: type === 'NodeDrain' ? 'NodeDrain' : 'Node', type, key: node.ID, namespace: '', filterKeys: null, payload: { Node: node } };
}

function nodeEventEntry(message: string, index: number, clock: Clock, details: JsonObject | null = null): JsonObject {
  return { Message: message, Subsystem: 'Cluster', Details: details, Timestamp: new Date(clock.nowMs()).toISOString(), CreateIndex: index };
}

function updateResponse(index: number, evalIds: string[] = []): NodeUpdateResponse {
  return { NodeModifyIndex: index, EvalIDs: evalIds, EvalCreateIndex: evalIds.length > 0 ? index : 0, Index: index, LastContact: 0, KnownLeader: false, NextToken: '' };
}


export function createNodeService(deps: NodeServiceDeps) {
  const { nodeStore, allocStore, state } = deps;

  async function findNode(db: Parameters<NodeStore['get']>[0], id: string): Promise<Node | null> {
    const exact = await nodeStore.get(db, id);
    if (exact) return exact.node;
    // Reference §2: the ID may be given as a unique prefix.
    const matches = id.length >= 2 ? await nodeStore.list(db, id) : [];
    return matches.length === 1 ? (matches[0] as Node) : null;
  }

  const nodeTables = deps.onNodeChange ? [TABLES.nodes, TABLES.evals] : [TABLES.nodes];

  async function mutate(id: string, type: string, change: (node: Node, index: number) => Node): Promise<NodeUpdateResponse> {
    const { index, result } = await state.withWrite(nodeTables, async ({ tx, index, emit }) => {
      const row = await nodeStore.get(tx, id);
      if (!row) throw new NotFoundError('node not found');
      const next = { ...change(row.node, index), ModifyIndex: index };
      await nodeStore.put(tx, next, row.secretHash);
      emit(nodeEvent(type, next));
      return deps.onNodeChange ? deps.onNodeChange({ tx, index, emit }, row.node, next) : [];
    });
    return updateResponse(index, result);
  }

  return {
    /** May this request register nodes? (management token, or the configured node secret) */
    mayRegister(acl: Acl, presentedSecret: string): boolean {
      if (deps.nodeSecret !== '' && presentedSecret !== '' && secretsEqual(deps.nodeSecret, presentedSecret)) return true;
      if (deps.aclEnabled) return acl.management;
      return deps.nodeSecret === '';
    },

    /** PUT /v1/internal/node/register (client agents; not part of Nomad's public API). */
    async register(body: JsonObject): Promise<NodeUpdateResponse> {
      const raw = asObject(body['Node']);
      if (Object.keys(raw).length === 0) throw new BadRequestError('missing node for client registration');
      const id = typeof raw['ID'] === 'string' ? raw['ID'] : '';
      if (!/^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/.test(id)) {
        throw new BadRequestError('missing node ID for client registration');
      }
      const secret = typeof raw['SecretID'] === 'string' ? raw['SecretID'] : '';
      if (secret === '') throw new BadRequestError('missing node secret ID for client registration');
      const status = typeof raw['Status'] === 'string' && raw['Status'] !== '' ? raw['Status'] : 'initializing';
      if (!NODE_STATUSES.includes(status)) throw new BadRequestError(`invalid status for node: ${JSON.stringify(status)}`);
      const { index, result } = await state.withWrite(nodeTables, async ({ tx, index, emit }) => {
        const prev = await nodeStore.get(tx, id);
        if (prev && !secretsEqual(prev.secretHash, sha256Hex(secret))) {
          throw new BadRequestError('node secret ID does not match. Not registering node.');
        }
        const fields = { ...raw };
        delete fields['SecretID'];
        const node: Node = {
          ID: id,
          Datacenter: deps.datacenter,
          Name: id,
          HTTPAddr: '',
          TLSEnabled: false,
          Attributes: {},
          NodeResources: null,
          ReservedResources: null,
          Resources: null,
          Reserved: null,
          Links: {},
          Meta: {},
          NodeClass: '',
          NodePool: 'default',
          ComputedClass: '',
          Drain: false,
          DrainStrategy: null,
          SchedulingEligibility: 'eligible',
          StatusDescription: '',
          Drivers: {},
          CSIControllerPlugins: null,
          CSINodePlugins: null,
          HostVolumes: null,
          LastDrain: null,
          ...prev?.node,
          ...fields,
          Status: status,
          StatusUpdatedAt: Math.floor(deps.clock.nowMs() / 1000),
          Events: [...(prev?.node.Events ?? []), nodeEventEntry(prev ? 'Node re-registered' : 'Node registered', index, deps.clock)],
          CreateIndex: prev?.node.CreateIndex ?? index,
          ModifyIndex: index,
        } as Node;
        await nodeStore.put(tx, node, sha256Hex(secret));
        emit(nodeEvent('NodeRegistration', node));
        return deps.onNodeChange ? deps.onNodeChange({ tx, index, emit }, prev?.node ?? null, node) : [];
      });
      return updateResponse(index, result);
    },

    async list(q: ListQuery, acl: Acl, flags: { resources: boolean; os: boolean }, opts: ReadOptions): Promise<Paged<JsonObject[]>> {
      if (!acl.allowNodeRead()) throw denied();
      const filter = compileFilter(q.filter);
      const r = await blockingRead(deps, [TABLES.nodes], opts, (db) => nodeStore.list(db, q.prefix), shareKey('nodes', q.prefix));
      const page = paginate({
        items: r.value,
        keyOf: (n) => [n.ID],
        tokenKind: 'id',
        perPage: q.perPage,
        nextToken: q.nextToken,
        reverse: q.reverse,
        filter,
        datumOf: (n) => n,
      });
      return { index: r.index, value: page.items.map((n) => nodeStub(n, flags)), nextToken: page.nextToken };
    },

    async get(id: string, acl: Acl, opts: ReadOptions): Promise<Indexed<Node>> {
      if (!acl.allowNodeRead()) throw denied();
      const r = await blockingRead(deps, [TABLES.nodes], opts, (db) => findNode(db, id), shareKey('node', id));
      if (!r.value) throw new NotFoundError('node not found');
      return { index: r.index, value: r.value };
    },

    async allocations(id: string, acl: Acl, opts: ReadOptions): Promise<Indexed<Allocation[]>> {
      if (!acl.allowNodeRead()) throw denied();
      const r = await blockingRead(deps, [TABLES.allocs], opts, (db) => allocStore.where(db, { nodeId: id }), shareKey('node-allocs', id));
      return { index: r.index, value: r.value.filter((a) => acl.allowNamespaceOperation(a.Namespace, 'read-job')) };
    },

    /** PUT /v1/node/:id/drain (reference §2): DrainSpec null cancels the drain. */
    async drain(id: string, body: JsonObject, acl: Acl): Promise<NodeUpdateResponse> {
      if (!acl.allowNodeWrite()) throw denied();
      const spec = body['DrainSpec'];
      if (spec !== undefined && spec !== null && (typeof spec !== 'object' || Array.isArray(spec))) {
        throw new BadRequestError('json: cannot unmarshal DrainSpec');
      }
      const markEligible = body['MarkEligible'] === true;
      const meta = body['Meta'] ?? null;
      return mutate(id, 'NodeDrain', (node, index) => {
        if (spec) {
          const s = asObject(spec);
          const deadline = typeof s['Deadline'] === 'number' ? s['Deadline'] : 0;
          const now = deps.clock.nowMs();
          const strategy = {
            DrainSpec: { Deadline: deadline, IgnoreSystemJobs: s['IgnoreSystemJobs'] === true },
            ForceDeadline: deadline > 0 ? new Date(now + deadline / 1e6).toISOString() : '0001-01-01T00:00:00Z',
            StartedAt: new Date(now).toISOString(),
          };
          return {
            ...node,
            Drain: true,
            DrainStrategy: strategy,
            SchedulingEligibility: 'ineligible',
            LastDrain: { StartedAt: strategy.StartedAt, UpdatedAt: strategy.StartedAt, Status: 'draining', AccessorID: '', Meta: meta },
            Events: [...node.Events, nodeEventEntry('Node drain strategy set', index, deps.clock)],
          };
        }
        const wasDraining = node.DrainStrategy !== null;
        return {
          ...node,
          Drain: false,
          DrainStrategy: null,
          SchedulingEligibility: markEligible ? 'eligible' : node.SchedulingEligibility,
          LastDrain: wasDraining ? { ...asObject(node['LastDrain']), Status: 'canceled', UpdatedAt: new Date(deps.clock.nowMs()).toISOString() } : node['LastDrain'] ?? null,
          Events: [...node.Events, nodeEventEntry('Node drain disabled', index, deps.clock)],
        };
      });
    },

    /** PUT /v1/node/:id/eligibility (reference §2). */
    async eligibility(id: string, body: JsonObject, acl: Acl): Promise<NodeUpdateResponse> {
      if (!acl.allowNodeWrite()) throw denied();
      const elig = body['Eligibility'];
      if (elig !== 'eligible' && elig !== 'ineligible') throw new BadRequestError(`invalid scheduling eligibility ${JSON.stringify(elig ?? '')}`);
      return mutate(id, 'NodeEligibility', (node, index) => {
        if (elig === 'eligible' && node.DrainStrategy !== null) {
          throw new BadRequestError("can not set node's scheduling eligibility to eligible while it is draining");
        }
        const message = elig === 'eligible' ? 'Node marked as eligible for scheduling' : 'Node marked as ineligible for scheduling';
        return { ...node, SchedulingEligibility: elig, Events: [...node.Events, nodeEventEntry(message, index, deps.clock)] };
      });
    },

  };
}

export type NodeService = ReturnType<typeof createNodeService>;
