// The placement stack (the anchor's GenericStack/SystemStack): candidates in a shuffled
// order, static feasibility (cached per group and node), distinct checks, bin packing
// against capacity minus what live and planned allocations hold, then scores, a limit on
// the nodes scored (log2 of the candidates for services, 2 for batch, all with affinities
// or spreads) and the best score. Every step records the anchor's AllocMetric.
import type { JsonObject } from '../../shared/common.types';
import type { Job } from '../../features/jobs/jobs.types';
import type { Node } from '../../features/nodes/nodes.types';
import { addResources, emptyMetric, NO_RESOURCES, type AllocMetric, type Resources } from '../engine.types';
import {
  candidateNodes,
  distinctChecksFor,
  distinctFilter,
  staticChecksFor,
  staticFilter,
  type CandidateSet,
  type DistinctChecks,
  type ProposedAlloc,
  type StaticChecks,
} from './feasibility';
import { affinitiesFor, affinityScore, antiAffinityScore, reschedulePenaltyScore, spreadScore, spreadSpecsFor, type SpreadSpec } from './rank';
import type { Affinity } from './constraints';
import { binPackScore, exhaustedDimension, nodeCapacity, taskGroupAsk } from './resources';

/** The anchor's LimitIterator: options scoring at or below this may be skipped ... */
const SKIP_SCORE_THRESHOLD = 0;
/** ... at most this many times, looking for better ones. */
const MAX_SKIP = 3;

export interface SelectOptions {
  /** Nodes a rescheduled allocation should avoid (NodeReschedulingPenaltyIterator). */
  penaltyNodes?: ReadonlySet<string>;
  /** Only this node (system jobs place per node). */
  onlyNode?: string;
}

export interface Selection {
  node: Node | null;
  score: number;
  metric: AllocMetric;
}

interface GroupChecks {
  tg: JsonObject;
  ask: Resources;
  statics: StaticChecks;
  distinct: DistinctChecks;
  affinities: Affinity[];
  spreads: SpreadSpec[];
  /** node ID -> reason (null: feasible), filled lazily. */
  staticCache: Map<string, string | null>;
  desiredCount: number;
}

/** Deterministic shuffle (seeded by the evaluation) so replicas agree on nothing but spread load. */
export function shuffled<T>(items: readonly T[], seed: number): T[] {
  const out = [...items];
  let s = seed >>> 0 || 1;
  const rand = (): number => {
    // xorshift32
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s / 0x100000000;
  };
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

export function seedOf(text: string): number {
  let h = 2166136261;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 16777619);
  }
  return h >>> 0;
}

export function scoreLimit(jobType: string, candidates: number, scoreAll: boolean): number {
  if (scoreAll) return Number.MAX_SAFE_INTEGER;
  if (jobType === 'batch' || jobType === 'sysbatch') return 2;
  return Math.max(2, Math.ceil(Math.log2(Math.max(1, candidates))));
}

export interface PlacementStackInput {
  job: Job;
  nodes: readonly Node[];
  /** Resources held per node by live allocations; the stack adds its own placements. */
  usage: ReadonlyMap<string, Resources>;
  /** Live allocations of the job (after the plan's stops), for distinct checks and spreads. */
  proposed: readonly ProposedAlloc[];
  seed: number;
}

export class PlacementStack {
  private readonly candidates: CandidateSet;
  private readonly order: Node[];
  private offset = 0;
  private readonly usage = new Map<string, Resources>();
  private readonly proposed: ProposedAlloc[];
  private readonly nodesById = new Map<string, Node>();
  private readonly capacity = new Map<string, Resources>();
  private readonly groups = new Map<string, GroupChecks>();

  constructor(private readonly input: PlacementStackInput) {
    this.candidates = candidateNodes(input.nodes, input.job);
    this.order = shuffled(this.candidates.nodes, input.seed);
    for (const n of input.nodes) this.nodesById.set(n.ID, n);
    for (const [k, v] of input.usage) this.usage.set(k, v);
    this.proposed = [...input.proposed];
  }

  get candidateCount(): number {
    return this.candidates.nodes.length;
  }

  candidateNodes(): readonly Node[] {
    return this.candidates.nodes;
  }

  private group(tg: JsonObject): GroupChecks {
    const name = String(tg['Name'] ?? '');
    let g = this.groups.get(name);
    if (!g) {
      g = {
        tg,
        ask: taskGroupAsk(tg),
        statics: staticChecksFor(this.input.job, tg),
        distinct: distinctChecksFor(this.input.job, tg),
        affinities: affinitiesFor(this.input.job, tg),
        spreads: spreadSpecsFor(this.input.job, tg),
        staticCache: new Map(),
        desiredCount: typeof tg['Count'] === 'number' ? tg['Count'] : 1,
      };
      this.groups.set(name, g);
    }
    return g;
  }

  private capacityOf(node: Node): Resources {
    let c = this.capacity.get(node.ID);
    if (!c) {
      c = nodeCapacity(node);
      this.capacity.set(node.ID, c);
    }
    return c;
  }

  /** Frees what a stopped allocation held (the plan's stops count as free for placements). */
  release(nodeId: string, res: Resources, taskGroup: string): void {
    const u = this.usage.get(nodeId) ?? NO_RESOURCES;
    this.usage.set(nodeId, { cpu: u.cpu - res.cpu, memoryMb: u.memoryMb - res.memoryMb, diskMb: u.diskMb - res.diskMb });
    const i = this.proposed.findIndex((p) => p.nodeId === nodeId && p.taskGroup === taskGroup);
    if (i >= 0) this.proposed.splice(i, 1);
  }

  /** Picks a node for one allocation of `tg` and records it as proposed. */
  select(tg: JsonObject, opts: SelectOptions = {}): Selection {
    const started = process.hrtime.bigint();
    const g = this.group(tg);
    const name = String(tg['Name'] ?? '');
    const metric = emptyMetric();
    metric.NodesAvailable = { ...this.candidates.availableByDc };
    metric.NodesInPool = this.candidates.inPool;
    const pool = opts.onlyNode !== undefined ? this.order.filter((n) => n.ID === opts.onlyNode) : this.order;
    const limit = opts.onlyNode !== undefined ? 1 : scoreLimit(this.input.job.Type, pool.length, g.affinities.length > 0 || g.spreads.length > 0);
    const options: Array<{ node: Node; score: number; scores: Record<string, number> }> = [];
    const skipped: typeof options = [];
    const filter = (reason: string, node: Node): void => {
      metric.NodesFiltered++;
      metric.ConstraintFiltered = metric.ConstraintFiltered ?? {};
      metric.ConstraintFiltered[reason] = (metric.ConstraintFiltered[reason] ?? 0) + 1;
      if (node.NodeClass) {
        metric.ClassFiltered = metric.ClassFiltered ?? {};
        metric.ClassFiltered[node.NodeClass] = (metric.ClassFiltered[node.NodeClass] ?? 0) + 1;
      }
    };
    for (let seen = 0; seen < pool.length && options.length < limit; seen++) {
      const node = pool[(opts.onlyNode !== undefined ? 0 : this.offset++) % pool.length] as Node;
      metric.NodesEvaluated++;
      let reason = g.staticCache.get(node.ID);
      if (reason === undefined) {
        reason = staticFilter(node, g.statics);
        g.staticCache.set(node.ID, reason);
      }
      if (reason === null) reason = distinctFilter(node, name, g.distinct, this.proposed, this.nodesById);
      if (reason !== null) {
        filter(reason, node);
        continue;
      }
      const cap = this.capacityOf(node);
      const used = this.usage.get(node.ID) ?? NO_RESOURCES;
      const dim = exhaustedDimension(cap, used, g.ask);
      if (dim !== null) {
        metric.NodesExhausted++;
        metric.DimensionExhausted = metric.DimensionExhausted ?? {};
        metric.DimensionExhausted[dim] = (metric.DimensionExhausted[dim] ?? 0) + 1;
        if (node.NodeClass) {
          metric.ClassExhausted = metric.ClassExhausted ?? {};
          metric.ClassExhausted[node.NodeClass] = (metric.ClassExhausted[node.NodeClass] ?? 0) + 1;
        }
        continue;
      }
      const scores: Record<string, number> = { binpack: binPackScore(cap, addResources(used, g.ask)) };
      const anti = antiAffinityScore(node.ID, name, g.desiredCount, this.proposed);
      if (anti !== null) scores['job-anti-affinity'] = anti;
      const penalty = reschedulePenaltyScore(node.ID, opts.penaltyNodes ?? new Set());
      if (penalty !== null) scores['node-reschedule-penalty'] = penalty;
      const aff = affinityScore(node, g.affinities);
      if (aff !== null) scores['node-affinity'] = aff;
      const spread = spreadScore(node, name, g.spreads, this.proposed, this.nodesById);
      if (spread !== null) scores['allocation-spread'] = spread;
      const values = Object.values(scores);
      const score = values.reduce((s, v) => s + v, 0) / values.length;
      const option = { node, score, scores };
      if (score <= SKIP_SCORE_THRESHOLD && skipped.length < MAX_SKIP && opts.onlyNode === undefined) skipped.push(option);
      else options.push(option);
    }
    while (options.length < limit && skipped.length > 0) options.push(skipped.shift() as (typeof options)[number]);
    let best: (typeof options)[number] | null = null;
    for (const o of options) if (best === null || o.score > best.score) best = o;
    metric.ScoreMetaData = options
      .slice()
      .sort((a, b) => b.score - a.score)
      .slice(0, 5)
      .map((o) => ({ NodeID: o.node.ID, Scores: o.scores, NormScore: o.score }));
    if (metric.ScoreMetaData.length === 0) metric.ScoreMetaData = null;
    metric.AllocationTime = Number(process.hrtime.bigint() - started);
    if (!best) return { node: null, score: 0, metric };
    this.usage.set(best.node.ID, addResources(this.usage.get(best.node.ID) ?? NO_RESOURCES, g.ask));
    this.proposed.push({ nodeId: best.node.ID, taskGroup: name });
    return { node: best.node, score: best.score, metric };
  }
}
