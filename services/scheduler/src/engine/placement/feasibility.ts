// Feasibility steps of the placement pipeline (the anchor's feasible.go), each a pure
// function of a node: the candidate set (ready, eligible, not draining, in the job's
// datacenters and node pool), job and group constraints, drivers, distinct_hosts and
// distinct_property. A step answers null (feasible) or the reason the anchor records in
// ConstraintFiltered.
import { asObject, type JsonObject } from '../../shared/common.types';
import type { Job } from '../../features/jobs/jobs.types';
import type { Node } from '../../features/nodes/nodes.types';
import {
  constraintsOf,
  constraintString,
  DISTINCT_HOSTS,
  DISTINCT_PROPERTY,
  distinctHostsEnabled,
  meetsConstraint,
  resolveTarget,
  type Constraint,
} from './constraints';

/** `*` and `?` globs, as the anchor matches datacenters. */
export function globMatch(pattern: string, value: string): boolean {
  if (!pattern.includes('*') && !pattern.includes('?')) return pattern === value;
  const re = new RegExp('^' + pattern.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.') + '$');
  return re.test(value);
}

export function inDatacenters(node: Node, datacenters: readonly string[]): boolean {
  return datacenters.some((dc) => globMatch(dc, node.Datacenter));
}

export function inPool(node: Node, pool: string): boolean {
  return pool === 'all' || (node.NodePool || 'default') === pool;
}

/** A node the scheduler may place on at all: ready, eligible, not draining. */
export function isSchedulable(node: Node): boolean {
  return node.Status === 'ready' && node.SchedulingEligibility === 'eligible' && (node.DrainStrategy === null || node.DrainStrategy === undefined);
}

export interface CandidateSet {
  nodes: Node[];
  /** Ready nodes per datacenter of the job (AllocMetric.NodesAvailable). */
  availableByDc: Record<string, number>;
  /** Nodes in the job's pool (AllocMetric.NodesInPool). */
  inPool: number;
}

/** readyNodesInDCsAndPool. */
export function candidateNodes(nodes: readonly Node[], job: Job): CandidateSet {
  const pool = typeof job['NodePool'] === 'string' && job['NodePool'] !== '' ? job['NodePool'] : 'default';
  const out: Node[] = [];
  const availableByDc: Record<string, number> = {};
  let poolCount = 0;
  for (const n of nodes) {
    if (!inPool(n, pool)) continue;
    poolCount++;
    if (!isSchedulable(n) || !inDatacenters(n, job.Datacenters)) continue;
    availableByDc[n.Datacenter] = (availableByDc[n.Datacenter] ?? 0) + 1;
    out.push(n);
  }
  return { nodes: out, availableByDc, inPool: poolCount };
}

function tasksOf(tg: JsonObject): JsonObject[] {
  return Array.isArray(tg['Tasks']) ? (tg['Tasks'] as unknown[]).map(asObject) : [];
}

/** Constraints that filter node by node (not the placement-wide distinct ones). */
function nodeConstraints(list: Constraint[]): Constraint[] {
  return list.filter((c) => c.Operand !== DISTINCT_HOSTS && c.Operand !== DISTINCT_PROPERTY);
}

/** DriverChecker: every task's driver detected and healthy (or the legacy attribute). */
export function hasDrivers(node: Node, drivers: ReadonlySet<string>): boolean {
  for (const d of drivers) {
    const info = asObject(asObject(node.Drivers)[d]);
    if (Object.keys(info).length > 0) {
      if (info['Detected'] !== true || info['Healthy'] !== true) return false;
      continue;
    }
    const attr = asObject(node.Attributes)[`driver.${d}`];
    if (attr !== '1' && attr !== 'true') return false;
  }
  return true;
}

/** The per-node checks of a task group, compiled once per evaluation. */
export interface StaticChecks {
  jobConstraints: Constraint[];
  groupConstraints: Constraint[];
  drivers: Set<string>;
}

export function staticChecksFor(job: Job, tg: JsonObject): StaticChecks {
  const groupConstraints = constraintsOf(tg['Constraints']);
  const drivers = new Set<string>();
  for (const t of tasksOf(tg)) {
    groupConstraints.push(...constraintsOf(t['Constraints']));
    if (typeof t['Driver'] === 'string' && t['Driver'] !== '') drivers.add(t['Driver']);
  }
  return { jobConstraints: nodeConstraints(constraintsOf(job['Constraints'])), groupConstraints: nodeConstraints(groupConstraints), drivers };
}

/** Job constraints, then drivers, then group and task constraints (the anchor's order). */
export function staticFilter(node: Node, checks: StaticChecks): string | null {
  for (const c of checks.jobConstraints) if (!meetsConstraint(c, node)) return constraintString(c);
  if (!hasDrivers(node, checks.drivers)) return 'missing drivers';
  for (const c of checks.groupConstraints) if (!meetsConstraint(c, node)) return constraintString(c);
  return null;
}

/** An allocation of the job counted by the distinct checks and spreads (live or planned). */
export interface ProposedAlloc {
  nodeId: string;
  taskGroup: string;
}

export interface DistinctChecks {
  /** Job-level distinct_hosts: no two allocations of the job on one node. */
  jobHosts: boolean;
  /** Group-level distinct_hosts: no two allocations of the group on one node. */
  groupHosts: boolean;
  /** distinct_property constraints: [scope, attribute target, allowed count]. */
  properties: Array<{ scope: 'job' | 'group'; target: string; limit: number }>;
}

export function distinctChecksFor(job: Job, tg: JsonObject): DistinctChecks {
  const jobCs = constraintsOf(job['Constraints']);
  const groupCs = constraintsOf(tg['Constraints']);
  const props: DistinctChecks['properties'] = [];
  for (const [scope, list] of [['job', jobCs], ['group', groupCs]] as const) {
    for (const c of list) {
      if (c.Operand !== DISTINCT_PROPERTY) continue;
      const limit = c.RTarget === '' ? 1 : Math.max(1, Number(c.RTarget) || 1);
      props.push({ scope, target: c.LTarget, limit });
    }
  }
  return {
    jobHosts: jobCs.some(distinctHostsEnabled),
    groupHosts: groupCs.some(distinctHostsEnabled),
    properties: props,
  };
}

/**
 * distinct_hosts then distinct_property over the proposed allocations of the job
 * (`byNode`: node ID -> task groups of proposed allocations there; `nodesById` resolves
 * the property of the nodes they sit on).
 */
export function distinctFilter(
  node: Node,
  taskGroup: string,
  checks: DistinctChecks,
  proposed: readonly ProposedAlloc[],
  nodesById: ReadonlyMap<string, Node>,
): string | null {
  if (checks.jobHosts || checks.groupHosts) {
    for (const p of proposed) {
      if (p.nodeId !== node.ID) continue;
      if (checks.jobHosts || p.taskGroup === taskGroup) return DISTINCT_HOSTS;
    }
  }
  for (const prop of checks.properties) {
    const [value, ok] = resolveTarget(prop.target, node);
    if (!ok) return `missing property ${JSON.stringify(prop.target)}`;
    let used = 0;
    for (const p of proposed) {
      if (prop.scope === 'group' && p.taskGroup !== taskGroup) continue;
      const other = nodesById.get(p.nodeId);
      if (!other) continue;
      const [v, found] = resolveTarget(prop.target, other);
      if (found && v === value) used++;
    }
    if (used >= prop.limit) return `distinct_property: ${prop.target}=${value} used by ${used} allocs`;
  }
  return null;
}
