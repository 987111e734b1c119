// Nodes (reference §2; docs/scheduler.md "Nodes and heartbeats"): the internal routes
// client agents use (register, heartbeat), list/read, drain, eligibility and purge, and the
// transitions the heartbeat sweeper and the drainer (node-lifecycle.ts) write. Node events
// carry Topic `Node`, Key = node ID, FilterKeys null.
import type { StateEventInput } from '@selfstack/state';
import { BadRequestError, NotFoundError } from '@selfstack/errors';
import type { Acl } from '../acl/acl-policy';
import { denied } from '../acl/acl.service';
import type { AllocationStore } from '../allocations/allocations.store';
import type { Allocation } from '../allocations/allocations.types';
import { asObject, sha256Hex, TABLES, type Clock, type Db, type Indexed, type JsonObject, type ReadOptions } from '../../shared/common.types';
import { blockingRead, shareKey, type SchedulerState } from '../../shared/blocking-read';
import { compileFilter, paginate } from '../../http/pagination';
import type { ListQuery } from '../../http/query';
import type { Paged } from '../jobs/jobs.service';
import type { NodeStore } from './nodes.store';
import { nodeStub, type Node, type NodeUpdateResponse } from './nodes.types';
import { secretsEqual } from '@selfstack/password';

export interface NodeWriteScope {
  tx: Db;
  index: number;
  emit: (e: StateEventInput) => void;
}

/** Called inside a node write (scheduling engine, engine/node-evals.ts): settles what the
 * change means for allocations (a node gone down loses them, a drain marks them for
 * migration) and creates the evaluations it calls for; returns their IDs. `after` null: the
 * node was purged. */
/** `forceMigrate`: the drain's deadline passed, migrate everything; `pace`: the drainer's
 * next step of a paced drain (engine/node-evals.ts). */
export type NodeChangeHook = (w: NodeWriteScope, before: Node | null, after: Node | null, opts?: { forceMigrate?: boolean; pace?: boolean }) => Promise<string[]>;

/** Heartbeat TTLs (docs/scheduler.md "Nodes and heartbeats"; the anchor's
 * min_heartbeat_ttl, max_heartbeats_per_second and heartbeat_grace). */
export interface HeartbeatSettings {
  minTtlMs: number;
  maxPerSecond: number;
  graceMs: number;
}

export const DEFAULT_HEARTBEAT_SETTINGS: HeartbeatSettings = { minTtlMs: 10_000, maxPerSecond: 50, graceMs: 10_000 };

export interface NodeServiceDeps extends SchedulerState {
  onNodeChange?: NodeChangeHook;
  nodeStore: NodeStore;
  allocStore: AllocationStore;
  clock: Clock;
  datacenter: string;
  aclEnabled: boolean;
  /** Shared secret client agents may present instead of a management token. */
  nodeSecret: string;
  heartbeat?: HeartbeatSettings;
}

/** Who is asking (the route's view of the request). */
export interface NodeCaller {
  acl: Acl;
  /** The request token (X-Scheduler-Token / X-Nomad-Token / Bearer), '' when none. */
  token: string;
  /** The X-Scheduler-Node-Secret header, '' when none. */
  clusterSecret: string;
}

const NODE_STATUSES = ['initializing', 'ready', 'down', 'disconnected'];
/** What a client may report about itself in a heartbeat. */
const HEARTBEAT_STATUSES = ['initializing', 'ready'];
/** The anchor keeps the newest 10 node events (structs.MaxRetainedNodeEvents). */
export const MAX_NODE_EVENTS = 10;
const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

/** Node event messages as the anchor writes them (nomad/structs, nomad/node_endpoint.go, drainer). */
export const NODE_EVENT = {
  registered: 'Node registered',
  reregistered: 'Node re-registered',
  heartbeatMissed: 'Node heartbeat missed',
  reregisteredByHeartbeat: 'Node reregistered by heartbeat',
  drainSet: 'Node drain strategy set',
  drainUpdated: 'Node drain strategy updated',
  drainDisabled: 'Node drain disabled',
  drainComplete: 'Node drain complete',
  eligible: 'Node marked as eligible for scheduling',
  ineligible: 'Node marked as ineligible for scheduling',
} as const;

export function nodeEvent(type: string, node: Node) {
  // The spec gives drains their own topic (`NodeDrain`, payload Node); the anchor uses `Node`.
  // A `Node` subscription receives both (features/events/event-topics.ts).
  return { topic: type === 'NodeDrain' ? 'NodeDrain' : 'Node', type, key: node.ID, namespace: '', filterKeys: null, payload: { Node: node } };
}

export function nodeEventEntry(message: string, index: number, clock: Clock, subsystem = 'Cluster', details: JsonObject | null = null): JsonObject {
  return { Message: message, Subsystem: subsystem, Details: details, Timestamp: new Date(clock.nowMs()).toISOString(), CreateIndex: index };
}

/** The node's events with `entry` appended, the oldest dropped past MAX_NODE_EVENTS. */
export function withNodeEvent(node: Node, entry: JsonObject): JsonObject[] {
  const all = [...(Array.isArray(node.Events) ? node.Events : []), entry];
  return all.slice(Math.max(0, all.length - MAX_NODE_EVENTS));
}

function updateResponse(index: number, evalIds: string[] = []): NodeUpdateResponse {
  return { NodeModifyIndex: index, EvalIDs: evalIds, EvalCreateIndex: evalIds.length > 0 ? index : 0, Index: index, LastContact: 0, KnownLeader: false, NextToken: '' };
}


/**
 * DrainSpec.Deadline is a Go time.Duration: integer nanoseconds. A string ("1h"), a
 * fraction or anything else is the anchor's unmarshal error, a 400, never a silent 0.
 * Negative (the CLI's -force sends -1) forces the drain; 0 drains without a deadline.
 */
export function parseDrainDeadline(spec: JsonObject): number {
  const d = spec['Deadline'];
  if (d === undefined || d === null) return 0;
  if (typeof d !== 'number' || !Number.isSafeInteger(d)) {
    throw new BadRequestError(
      `invalid DrainSpec.Deadline ${JSON.stringify(d)}: expected a duration in integer nanoseconds (-1 forces the drain, 0 sets no deadline)`,
    );
  }
  return d;
}

export function createNodeService(deps: NodeServiceDeps) {
  const { nodeStore, allocStore, state } = deps;
  const hb = deps.heartbeat ?? DEFAULT_HEARTBEAT_SETTINGS;

  async function findNode(db: Db, id: string): Promise<Node | null> {
    const exact = await nodeStore.get(db, id);
    if (exact) return exact.node;
    // Reference §2: the ID may be given as a unique prefix.
    const matches = id.length >= 2 ? await nodeStore.list(db, id) : [];
    return matches.length === 1 ? (matches[0] as Node) : null;
  }

  // A node write that may lose or migrate allocations (the engine's hook: a node gone down
  // or purged, a drain started or enforced) refreshes their jobs too: blocking readers of
  // those tables wake. Other node writes only create evaluations.
  const nodeTables = deps.onNodeChange ? [TABLES.nodes, TABLES.evals, TABLES.allocs, TABLES.jobs, TABLES.jobSummary] : [TABLES.nodes];
  const statusTables = deps.onNodeChange ? [TABLES.nodes, TABLES.evals] : [TABLES.nodes];

  const hook = (w: NodeWriteScope, before: Node | null, after: Node | null, opts?: Parameters<NodeChangeHook>[3]): Promise<string[]> =>
    deps.onNodeChange ? deps.onNodeChange(w, before, after, opts) : Promise.resolve([]);

  // A drainer's step on a draining node: the node itself does not change; returns the
  // evaluations created (none when the node is gone or no longer draining).
  const drainStep = async (id: string, opts: Parameters<NodeChangeHook>[3]): Promise<string[]> => {
    const { result } = await state.withWrite(nodeTables, async ({ tx, index, emit }) => {
      const cur = await nodeStore.get(tx, id);
      if (!cur || cur.node.DrainStrategy === null || cur.node.DrainStrategy === undefined) return [];
      return hook({ tx, index, emit }, cur.node, cur.node, opts);
    });
    return result;
  };

  /** The TTL the next heartbeat must come within: the minimum, or longer with many nodes so
   * the servers see at most maxPerSecond heartbeats a second (the anchor's RateScaledInterval). */
  async function ttlFor(db: Db): Promise<number> {
    const live = await nodeStore.countLive(db);
    return Math.max(hb.minTtlMs, Math.ceil((live / hb.maxPerSecond) * 1000));
  }

  function heartbeatResponse(r: NodeUpdateResponse, ttlMs: number, numNodes: number): NodeUpdateResponse & JsonObject {
    // HeartbeatTTL is a Go time.Duration in the anchor's JSON: nanoseconds.
    return { ...r, HeartbeatTTL: ttlMs * 1_000_000, NumNodes: numNodes, LeaderRPCAddr: '', Servers: [] };
  }

  async function mutate(id: string, type: string, tables: string[], change: (node: Node, index: number) => Node): Promise<NodeUpdateResponse> {
    const { index, result } = await state.withWrite(tables, async ({ tx, index, emit }) => {
      const row = await nodeStore.get(tx, id);
      if (!row) throw new NotFoundError('node not found');
      const next = { ...change(row.node, index), ModifyIndex: index };
      await nodeStore.put(tx, next, row.secretHash);
      emit(nodeEvent(type, next));
      return hook({ tx, index, emit }, row.node, next);
    });
    return updateResponse(index, result);
  }

  /** Is the caller the node itself (its SecretID as the token), or a management token? */
  function ownsNode(secretHash: string, caller: NodeCaller): boolean {
    if (caller.token !== '' && secretsEqual(secretHash, sha256Hex(caller.token))) return true;
    return deps.aclEnabled && caller.acl.management;
  }

  /**
   * May this request register a node that does not exist yet? A management or node:write
   * token (ACLs on), or the configured cluster node secret; with ACLs off and no cluster
   * secret configured, anyone (as with every other route then).
   */
  function mayRegister(acl: Acl, presentedSecret: string): boolean {
    if (deps.nodeSecret !== '' && presentedSecret !== '' && secretsEqual(deps.nodeSecret, presentedSecret)) return true;
    if (deps.aclEnabled) return acl.allowNodeWrite();
    return deps.nodeSecret === '';
  }

  return {
    heartbeatSettings: hb,
    mayRegister,

    /**
     * PUT /v1/internal/node/register (client agents; the anchor's Node.Register RPC). A node
     * that exists may be re-registered only with its own SecretID (whoever sends it); a new
     * node needs mayRegister.
     */
    async register(body: JsonObject, caller: NodeCaller): Promise<NodeUpdateResponse & JsonObject> {
      // Someone who may not register new nodes learns nothing from the body checks: 403.
      const may = mayRegister(caller.acl, caller.clusterSecret);
      const bad = (message: string) => (may ? new BadRequestError(message) : denied());
      const raw = asObject(body['Node']);
      if (Object.keys(raw).length === 0) throw bad('missing node for client registration');
      const id = typeof raw['ID'] === 'string' ? raw['ID'] : '';
      if (!UUID.test(id)) throw bad('missing node ID for client registration');
      const secret = typeof raw['SecretID'] === 'string' ? raw['SecretID'] : '';
      if (secret === '') throw bad('missing node secret ID for client registration');
      const secretHash = sha256Hex(secret);
      // The node itself (its own SecretID) hears what is wrong with the rest of its body.
      const owner = may || (await nodeStore.get(deps.prisma, id).then((n) => n !== null && secretsEqual(n.secretHash, secretHash)));
      const status = typeof raw['Status'] === 'string' && raw['Status'] !== '' ? raw['Status'] : 'initializing';
      if (!NODE_STATUSES.includes(status)) throw owner ? new BadRequestError(`invalid status for node: ${JSON.stringify(status)}`) : denied();
      let ttlMs = 0;
      let numNodes = 0;
      const mayTouchAllocs = status === 'down' || (raw['DrainStrategy'] !== undefined && raw['DrainStrategy'] !== null);
      const { index, result } = await state.withWrite(mayTouchAllocs ? nodeTables : statusTables, async ({ tx, index, emit }) => {
        const prev = await nodeStore.get(tx, id);
        if (prev ? !secretsEqual(prev.secretHash, secretHash) : !may) throw denied();
        const fields = { ...raw };
        delete fields['SecretID'];
        const now = deps.clock.nowMs();
        const base: Node = {
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
          Events: [],
          Status: status,
          StatusUpdatedAt: 0,
          CreateIndex: index,
          ModifyIndex: index,
        };
        const merged = { ...base, ...prev?.node, ...fields } as Node;
        // Server-owned state a registration does not overwrite: drain and eligibility
        // (set through the drain/eligibility routes), events, indexes.
        const node: Node = {
          ...merged,
          ...(prev ? { Drain: prev.node.Drain, DrainStrategy: prev.node.DrainStrategy, SchedulingEligibility: prev.node.SchedulingEligibility, LastDrain: prev.node['LastDrain'] ?? null } : {}),
          Status: status,
          StatusUpdatedAt: prev && prev.node.Status === status ? prev.node.StatusUpdatedAt : Math.floor(now / 1000),
          Events: withNodeEvent(prev?.node ?? base, nodeEventEntry(prev ? NODE_EVENT.reregistered : NODE_EVENT.registered, index, deps.clock)),
          CreateIndex: prev?.node.CreateIndex ?? index,
          ModifyIndex: index,
        };
        await nodeStore.put(tx, node, secretHash);
        ttlMs = await ttlFor(tx);
        numNodes = await nodeStore.countLive(tx);
        await nodeStore.touch(tx, id, now, ttlMs);
        emit(nodeEvent('NodeRegistration', node));
        return hook({ tx, index, emit }, prev?.node ?? null, node);
      });
      return heartbeatResponse(updateResponse(index, result), ttlMs, numNodes);
    },

    /**
     * PUT /v1/internal/node/:id/heartbeat (the anchor's Node.UpdateStatus from a client):
     * the node (its SecretID as the token) or a management token. A heartbeat that changes
     * nothing only records the contact; one that changes the status (down -> ready,
     * initializing -> ready) is a node write with its event and evaluations.
     */
    async heartbeat(id: string, body: JsonObject, caller: NodeCaller): Promise<NodeUpdateResponse & JsonObject> {
      const requested = body['Status'];
      if (requested !== undefined && (typeof requested !== 'string' || !HEARTBEAT_STATUSES.includes(requested))) {
        throw new BadRequestError(`invalid status for node heartbeat: ${JSON.stringify(requested)} (expected "ready" or "initializing")`);
      }
      const row = await nodeStore.get(deps.prisma, id);
      if (!row) throw new NotFoundError('node not found');
      if (!ownsNode(row.secretHash, caller)) throw denied();
      const target = (s: string): string => (typeof requested === 'string' ? requested : s === 'initializing' ? 'initializing' : 'ready');
      const now = deps.clock.nowMs();
      const ttlMs = await ttlFor(deps.prisma);
      const numNodes = await nodeStore.countLive(deps.prisma);
      if (row.node.Status === target(row.node.Status) && (await nodeStore.touch(deps.prisma, id, now, ttlMs, row.node.Status))) {
        return heartbeatResponse(updateResponse(row.node.ModifyIndex), ttlMs, numNodes);
      }
      const { index, result } = await state.withWrite(statusTables, async ({ tx, index, emit }) => {
        const cur = await nodeStore.get(tx, id);
        if (!cur) throw new NotFoundError('node not found');
        const want = target(cur.node.Status);
        let evalIds: string[] = [];
        let modifyIndex = cur.node.ModifyIndex;
        if (cur.node.Status !== want) {
          const events = cur.node.Status === 'down' ? withNodeEvent(cur.node, nodeEventEntry(NODE_EVENT.reregisteredByHeartbeat, index, deps.clock)) : cur.node.Events;
          const next: Node = { ...cur.node, Status: want, StatusUpdatedAt: Math.floor(now / 1000), Events: events, ModifyIndex: index };
          await nodeStore.put(tx, next, cur.secretHash);
          emit(nodeEvent('NodeEvent', next));
          evalIds = await hook({ tx, index, emit }, cur.node, next);
          modifyIndex = index;
        }
        await nodeStore.touch(tx, id, now, ttlMs);
        return { evalIds, modifyIndex };
      });
      return heartbeatResponse({ ...updateResponse(index, result.evalIds), NodeModifyIndex: result.modifyIndex }, ttlMs, numNodes);
    },

    /**
     * The sweeper's transition (node-lifecycle.ts): a node whose last heartbeat + TTL +
     * grace has passed goes down, with the anchor's node event; the engine's hook loses its
     * allocations and creates the evaluations that replace them. Re-checked under a row
     * lock, so of several sweepers (replicas) one writes it and a heartbeat that arrived
     * meanwhile wins. Returns the evaluations created, or null when nothing was due.
     */
    async markMissed(id: string, nowMs: number): Promise<string[] | null> {
      const { result } = await state.withWrite(nodeTables, async ({ tx, index, emit }) => {
        if (!(await nodeStore.expiredLocked(tx, id, nowMs, hb.graceMs))) return null;
        const cur = await nodeStore.get(tx, id);
        if (!cur) return null;
        const next: Node = {
          ...cur.node,
          Status: 'down',
          StatusUpdatedAt: Math.floor(nowMs / 1000),
          Events: withNodeEvent(cur.node, nodeEventEntry(NODE_EVENT.heartbeatMissed, index, deps.clock)),
          ModifyIndex: index,
        };
        await nodeStore.put(tx, next, cur.secretHash);
        emit(nodeEvent('NodeEvent', next));
        return hook({ tx, index, emit }, cur.node, next);
      });
      return result;
    },

    /**
     * The drainer's deadline (node-lifecycle.ts): the drain's deadline has passed (or it is
     * forced), so what is still running there (batch work included) is migrated now.
     */
    enforceDrainDeadline: (id: string): Promise<string[]> => drainStep(id, { forceMigrate: true }),

    /**
     * The drainer's next step of a paced drain (node-lifecycle.ts): marks the service
     * allocations the groups' max_parallel now allows (their earlier replacements run) and
     * evaluates their jobs.
     */
    advanceDrain: (id: string): Promise<string[]> => drainStep(id, { pace: true }),

    /** The drainer's completion (node-lifecycle.ts): no strategy left, the node stays ineligible. */
    async completeDrain(id: string, details: JsonObject | null): Promise<NodeUpdateResponse | null> {
      const { index, result } = await state.withWrite(statusTables, async ({ tx, index, emit }) => {
        const cur = await nodeStore.get(tx, id);
        if (!cur || cur.node.DrainStrategy === null || cur.node.DrainStrategy === undefined) return null;
        const now = new Date(deps.clock.nowMs()).toISOString();
        const next: Node = {
          ...cur.node,
          Drain: false,
          DrainStrategy: null,
          LastDrain: { ...asObject(cur.node['LastDrain']), Status: 'complete', UpdatedAt: now },
          Events: withNodeEvent(cur.node, nodeEventEntry(NODE_EVENT.drainComplete, index, deps.clock, 'Drain', details)),
          ModifyIndex: index,
        };
        await nodeStore.put(tx, next, cur.secretHash);
        emit(nodeEvent('NodeDrain', next));
        return hook({ tx, index, emit }, cur.node, next);
      });
      return result === null ? null : updateResponse(index, result);
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

    /**
     * PUT /v1/node/:id/drain (reference §2): DrainSpec null cancels the drain. Starting one
     * makes the node ineligible; the engine's hook marks its allocations for migration and
     * creates `node-drain` evaluations; the drainer (node-lifecycle.ts) enforces the
     * deadline and completes the drain.
     */
    async drain(id: string, body: JsonObject, acl: Acl): Promise<NodeUpdateResponse> {
      if (!acl.allowNodeWrite()) throw denied();
      const spec = body['DrainSpec'];
      if (spec !== undefined && spec !== null && (typeof spec !== 'object' || Array.isArray(spec))) {
        throw new BadRequestError('json: cannot unmarshal DrainSpec');
      }
      const deadline = spec ? parseDrainDeadline(asObject(spec)) : 0;
      const markEligible = body['MarkEligible'] === true;
      const meta = body['Meta'] ?? null;
      return mutate(id, 'NodeDrain', nodeTables, (node, index) => {
        if (spec) {
          const s = asObject(spec);
          const now = deps.clock.nowMs();
          const updating = node.DrainStrategy !== null && node.DrainStrategy !== undefined;
          const startedAt = updating ? String(asObject(node.DrainStrategy)['StartedAt'] ?? new Date(now).toISOString()) : new Date(now).toISOString();
          const strategy = {
            DrainSpec: { Deadline: deadline, IgnoreSystemJobs: s['IgnoreSystemJobs'] === true },
            ForceDeadline: deadline > 0 ? new Date(now + Math.floor(deadline / 1e6)).toISOString() : '0001-01-01T00:00:00Z',
            StartedAt: startedAt,
          };
          const updatedAt = new Date(now).toISOString();
          return {
            ...node,
            Drain: true,
            DrainStrategy: strategy,
            SchedulingEligibility: 'ineligible',
            LastDrain: { StartedAt: startedAt, UpdatedAt: updatedAt, Status: 'draining', AccessorID: '', Meta: meta },
            Events: withNodeEvent(node, nodeEventEntry(updating ? NODE_EVENT.drainUpdated : NODE_EVENT.drainSet, index, deps.clock, 'Drain')),
          };
        }
        const wasDraining = node.DrainStrategy !== null && node.DrainStrategy !== undefined;
        return {
          ...node,
          Drain: false,
          DrainStrategy: null,
          SchedulingEligibility: markEligible ? 'eligible' : node.SchedulingEligibility,
          LastDrain: wasDraining ? { ...asObject(node['LastDrain']), Status: 'canceled', UpdatedAt: new Date(deps.clock.nowMs()).toISOString() } : node['LastDrain'] ?? null,
          Events: withNodeEvent(node, nodeEventEntry(NODE_EVENT.drainDisabled, index, deps.clock, 'Drain')),
        };
      });
    },

    /** PUT /v1/node/:id/eligibility (reference §2). */
    async eligibility(id: string, body: JsonObject, acl: Acl): Promise<NodeUpdateResponse> {
      if (!acl.allowNodeWrite()) throw denied();
      const elig = body['Eligibility'];
      if (elig !== 'eligible' && elig !== 'ineligible') throw new BadRequestError(`invalid scheduling eligibility ${JSON.stringify(elig ?? '')}`);
      return mutate(id, 'NodeEligibility', statusTables, (node, index) => {
        if (elig === 'eligible' && node.DrainStrategy !== null) {
          throw new BadRequestError("can not set node's scheduling eligibility to eligible while it is draining");
        }
        const message = elig === 'eligible' ? NODE_EVENT.eligible : NODE_EVENT.ineligible;
        return { ...node, SchedulingEligibility: elig, Events: withNodeEvent(node, nodeEventEntry(message, index, deps.clock)) };
      });
    },

    /**
     * PUT /v1/node/:id/purge (the anchor's Node.Deregister): the node is removed; the jobs
     * with allocations on it are evaluated again (the allocations are lost and replaced).
     * Emits NodeDeregistration.
     */
    async purge(id: string, acl: Acl): Promise<NodeUpdateResponse> {
      if (!acl.allowNodeWrite()) throw denied();
      const { index, result } = await state.withWrite(nodeTables, async ({ tx, index, emit }) => {
        const row = await nodeStore.get(tx, id);
        if (!row) throw new NotFoundError('node not found');
        const evalIds = await hook({ tx, index, emit }, row.node, null);
        await nodeStore.delete(tx, id);
        emit(nodeEvent('NodeDeregistration', { ...row.node, ModifyIndex: index }));
        return evalIds;
      });
      return updateResponse(index, result);
    },
  };
}

export type NodeService = ReturnType<typeof createNodeService>;
