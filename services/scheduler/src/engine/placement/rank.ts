// Ranking steps of the placement pipeline (the anchor's rank.go and spread.go): each
// returns one score in [-1, 1] (or null when it has nothing to say); a node's final score
// is the mean of its scores (ScoreNormalizationIterator).
import { asObject, type JsonObject } from '../../shared/common.types';
import type { Job } from '../../features/jobs/jobs.types';
import type { Node } from '../../features/nodes/nodes.types';
import { affinitiesOf, meetsConstraint, resolveTarget, type Affinity } from './constraints';
import type { ProposedAlloc } from './feasibility';

/** JobAntiAffinityIterator: a penalty for co-locating allocations of the same group. */
export function antiAffinityScore(nodeId: string, taskGroup: string, desiredCount: number, proposed: readonly ProposedAlloc[]): number | null {
  let collisions = 0;
  for (const p of proposed) if (p.nodeId === nodeId && p.taskGroup === taskGroup) collisions++;
  if (collisions === 0 || desiredCount <= 0) return null;
  return (-1 * (collisions + 1)) / desiredCount;
}

/** NodeReschedulingPenaltyIterator: avoid the node a rescheduled allocation failed on. */
export function reschedulePenaltyScore(nodeId: string, penaltyNodes: ReadonlySet<string>): number | null {
  return penaltyNodes.has(nodeId) ? -1 : null;
}

/** Every affinity of the job, the group and its tasks. */
export function affinitiesFor(job: Job, tg: JsonObject): Affinity[] {
  const out = [...affinitiesOf(job['Affinities']), ...affinitiesOf(tg['Affinities'])];
  for (const t of Array.isArray(tg['Tasks']) ? (tg['Tasks'] as unknown[]) : []) out.push(...affinitiesOf(asObject(t)['Affinities']));
  return out;
}

/** NodeAffinityIterator: matched weights over the sum of absolute weights. */
export function affinityScore(node: Node, affinities: readonly Affinity[]): number | null {
  if (affinities.length === 0) return null;
  let total = 0;
  let sum = 0;
  for (const a of affinities) {
    total += Math.abs(a.Weight);
    if (meetsConstraint(a, node)) sum += a.Weight;
  }
  if (total === 0 || sum === 0) return null;
  return sum / total;
}

export interface SpreadSpec {
  attribute: string;
  weight: number;
  /** value -> desired count; '*' the implicit remainder (spread targets). Empty: even spread. */
  desired: Map<string, number>;
}

function spreadsOf(v: unknown): Array<{ Attribute: string; Weight: number; SpreadTarget: Array<{ Value: string; Percent: number }> }> {
  if (!Array.isArray(v)) return [];
  return v.map((raw) => {
    const o = asObject(raw);
    const targets = Array.isArray(o['SpreadTarget']) ? (o['SpreadTarget'] as unknown[]).map(asObject) : [];
    return {
      Attribute: typeof o['Attribute'] === 'string' ? o['Attribute'] : '',
      Weight: typeof o['Weight'] === 'number' ? o['Weight'] : 50,
      SpreadTarget: targets.map((t) => ({ Value: String(t['Value'] ?? ''), Percent: Number(t['Percent'] ?? 0) || 0 })),
    };
  });
}

/** computeSpreadInfo: desired counts per attribute value for the group's count. */
export function spreadSpecsFor(job: Job, tg: JsonObject): SpreadSpec[] {
  const count = typeof tg['Count'] === 'number' ? tg['Count'] : 1;
  return [...spreadsOf(tg['Spreads']), ...spreadsOf(job['Spreads'])].map((s) => {
    const desired = new Map<string, number>();
    let sum = 0;
    for (const t of s.SpreadTarget) {
      const d = (t.Percent / 100) * count;
      desired.set(t.Value, d);
      sum += d;
    }
    if (sum > 0 && sum < count) desired.set('*', count - sum);
    return { attribute: s.Attribute, weight: s.Weight, desired };
  });
}

/** SpreadIterator: boosts values used less than desired (or evenly, without targets). */
export function spreadScore(
  node: Node,
  taskGroup: string,
  specs: readonly SpreadSpec[],
  proposed: readonly ProposedAlloc[],
  nodesById: ReadonlyMap<string, Node>,
): number | null {
  if (specs.length === 0) return null;
  const sumWeights = specs.reduce((s, x) => s + x.weight, 0) || 1;
  let total = 0;
  for (const spec of specs) {
    const [value, ok] = resolveTarget(spec.attribute, node);
    if (!ok) {
      total -= 1;
      continue;
    }
    const use = new Map<string, number>();
    for (const p of proposed) {
      if (p.taskGroup !== taskGroup) continue;
      const other = nodesById.get(p.nodeId);
      if (!other) continue;
      const [v, found] = resolveTarget(spec.attribute, other);
      if (found) use.set(v, (use.get(v) ?? 0) + 1);
    }
    if (spec.desired.size === 0) {
      total += evenSpreadBoost(value, use);
      continue;
    }
    const desired = spec.desired.get(value) ?? spec.desired.get('*');
    if (desired === undefined) {
      total -= 1;
      continue;
    }
    if (desired === 0) {
      total -= 1;
      continue;
    }
    const used = (use.get(value) ?? 0) + 1;
    total += ((desired - used) / desired) * (spec.weight / sumWeights);
  }
  return total === 0 ? null : total;
}

/** evenSpreadScoreBoost. */
function evenSpreadBoost(value: string, use: ReadonlyMap<string, number>): number {
  if (use.size === 0) return 0;
  const current = use.get(value) ?? 0;
  let min = 0;
  let max = 0;
  for (const v of use.values()) {
    if (min === 0 || v < min) min = v;
    if (max === 0 || v > max) max = v;
  }
  const deltaBoost = min === 0 ? -1 : (min - current) / min;
  if (current !== min) return deltaBoost;
  if (min === max) return -1;
  if (min === 0) return 1;
  return (max - min) / min;
}
