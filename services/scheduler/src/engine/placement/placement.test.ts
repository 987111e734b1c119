// Table-driven tests of the placement pipeline's steps (issue 25 item 2): each step alone,
// then the stack choosing nodes and recording the anchor's AllocMetric.
import type { JsonObject } from '../../shared/common.types';
import type { Job } from '../../features/jobs/jobs.types';
import type { Node } from '../../features/nodes/nodes.types';
import { checkOperand, constraintString, resolveTarget, validateConstraint, type Constraint } from './constraints';
import { candidateNodes, distinctChecksFor, distinctFilter, globMatch, hasDrivers, staticChecksFor, staticFilter } from './feasibility';
import { affinityScore, antiAffinityScore, spreadScore, spreadSpecsFor } from './rank';
import { binPackScore, exhaustedDimension, nodeCapacity, taskGroupAsk } from './resources';
import { PlacementStack, scoreLimit } from './stack';
import { compareVersions, parseVersion, versionMatches } from './versions';

function node(id: string, over: Partial<Node> & JsonObject = {}): Node {
  return {
    ID: id,
    Name: `n-${id}`,
    Datacenter: 'dc1',
    HTTPAddr: '',
    NodeClass: '',
    NodePool: 'default',
    Attributes: { 'kernel.name': 'linux', 'os.version': '22.04', 'driver.raw_exec': '1', 'unique.network.ip-address': `10.0.0.${id.length}` },
    Meta: { rack: 'r1', zones: 'a,b,c' },
    Drain: false,
    DrainStrategy: null,
    SchedulingEligibility: 'eligible',
    Status: 'ready',
    StatusDescription: '',
    StatusUpdatedAt: 0,
    Events: [],
    Drivers: { docker: { Detected: true, Healthy: true } },
    NodeResources: { Cpu: { CpuShares: 1000 }, Memory: { MemoryMB: 1000 }, Disk: { DiskMB: 10_000 } },
    CreateIndex: 1,
    ModifyIndex: 1,
    ...over,
  } as Node;
}

function job(over: JsonObject = {}, group: JsonObject = {}): Job {
  return {
    ID: 'j',
    Name: 'j',
    Namespace: 'default',
    Region: 'global',
    Type: 'service',
    Priority: 50,
    Datacenters: ['dc1'],
    NodePool: 'default',
    TaskGroups: [{ Name: 'g', Count: 3, EphemeralDisk: { SizeMB: 100 }, Tasks: [{ Name: 't', Driver: 'docker', Resources: { CPU: 300, MemoryMB: 200 } }], ...group }],
    Status: 'pending',
    StatusDescription: '',
    Stop: false,
    Stable: false,
    Version: 0,
    SubmitTime: 0,
    CreateIndex: 1,
    ModifyIndex: 1,
    JobModifyIndex: 1,
    Periodic: null,
    ParameterizedJob: null,
    Meta: null,
    ...over,
  } as Job;
}

const tg = (j: Job) => j.TaskGroups[0] as JsonObject;

describe('resolveTarget', () => {
  const n = node('abc', { NodeClass: 'large', NodePool: 'prod' });
  it.each([
    ['literal', 'linux', ['linux', true]],
    ['${node.unique.id}', '${node.unique.id}', ['abc', true]],
    ['${node.datacenter}', '${node.datacenter}', ['dc1', true]],
    ['${node.unique.name}', '${node.unique.name}', ['n-abc', true]],
    ['${node.class}', '${node.class}', ['large', true]],
    ['${node.pool}', '${node.pool}', ['prod', true]],
    ['${attr.kernel.name}', '${attr.kernel.name}', ['linux', true]],
    ['missing attr', '${attr.nope}', ['', false]],
    ['${meta.rack}', '${meta.rack}', ['r1', true]],
    ['unknown interpolation', '${foo.bar}', ['', false]],
  ])('%s', (_name, target, expected) => {
    expect(resolveTarget(target, n)).toEqual(expected);
  });
});

describe('checkOperand', () => {
  it.each<[string, string, string, boolean, boolean, boolean]>([
    ['=', 'a', 'a', true, true, true],
    ['==', 'a', 'b', true, true, false],
    ['is', 'a', 'a', true, false, false],
    ['!=', 'a', 'b', true, true, true],
    ['not', 'a', 'a', true, true, false],
    ['!=', '', 'a', false, true, true],
    ['<', '9', '10', true, true, true],
    ['<', 'b', 'a', true, true, false],
    ['<=', '1.5', '1.50', true, true, true],
    ['>', '10', '9', true, true, true],
    ['>=', 'b', 'a', true, true, true],
    ['regexp', 'linux-5', '^linux-\\d$', true, true, true],
    ['regexp', 'darwin', '^linux', true, true, false],
    ['version', '1.2.3', '>= 1.2, < 2.0', true, true, true],
    ['version', '2.0.0', '>= 1.2, < 2.0', true, true, false],
    ['version', '1.2.7', '~> 1.2.3', true, true, true],
    ['version', '1.3.0', '~> 1.2.3', true, true, false],
    ['version', '1.0.0-beta', '>= 0.9', true, true, false],
    ['semver', '1.2.3', '>= 1.2.0', true, true, true],
    ['semver', '1.2', '>= 1.0.0', true, true, false],
    ['set_contains', 'a,b,c', 'a,c', true, true, true],
    ['set_contains', 'a,b', 'a,c', true, true, false],
    ['set_contains_all', 'a, b', 'b', true, true, true],
    ['set_contains_any', 'a,b', 'c,b', true, true, true],
    ['set_contains_any', 'a,b', 'c,d', true, true, false],
    ['is_set', 'x', '', true, true, true],
    ['is_set', '', '', false, true, false],
    ['is_not_set', '', '', false, true, true],
    ['distinct_hosts', '', '', false, false, true],
    ['bogus', 'a', 'a', true, true, false],
  ])('%s %s %s', (op, l, r, lOk, rOk, want) => {
    expect(checkOperand(op, l, r, lOk, rOk)).toBe(want);
  });
});

describe('versions', () => {
  it('orders go-version style versions with prereleases', () => {
    const v = (s: string) => parseVersion(s) as NonNullable<ReturnType<typeof parseVersion>>;
    expect(compareVersions(v('1.2'), v('1.2.0'))).toBe(0);
    expect(compareVersions(v('1.10.0'), v('1.9.9'))).toBe(1);
    expect(compareVersions(v('1.0.0-alpha'), v('1.0.0'))).toBe(-1);
    expect(compareVersions(v('1.0.0-alpha.2'), v('1.0.0-alpha.10'))).toBe(-1);
    expect(versionMatches('1.0.0-beta1', '= 1.0.0-beta1')).toBe(true);
    expect(versionMatches('abc', '>= 1')).toBe(false);
  });
});

describe('validateConstraint', () => {
  it.each<[Constraint, string[]]>([
    [{ LTarget: '${attr.a}', RTarget: 'x', Operand: '=' }, []],
    [{ LTarget: '${attr.a}', RTarget: '', Operand: '=' }, ['Operator "=" requires an RTarget']],
    [{ LTarget: '', RTarget: 'x', Operand: '=' }, ['no attribute provided but is required by operator']],
    [{ LTarget: '${attr.a}', RTarget: 'x', Operand: 'nope' }, ['Unknown constraint type "nope"']],
    [{ LTarget: '${attr.a}', RTarget: '(', Operand: 'regexp' }, [expect.stringMatching(/^Regular expression failed to compile: /) as unknown as string]],
    [{ LTarget: '${attr.a}', RTarget: '>= x.y', Operand: 'version' }, ['Version constraint is invalid: Malformed constraint: >= x.y']],
    [{ LTarget: '${attr.a}', RTarget: '', Operand: 'set_contains' }, ['Set contains constraint requires an RTarget']],
    [{ LTarget: '${attr.a}', RTarget: 'x', Operand: 'is_set' }, ['Operator "is_set" does not support an RTarget']],
    [{ LTarget: '${meta.rack}', RTarget: '0', Operand: 'distinct_property' }, ['Distinct Property must have an allowed count of 1 or greater: 0 < 1']],
    [{ LTarget: '', RTarget: 'true', Operand: 'distinct_hosts' }, []],
  ])('%j', (c, want) => {
    expect(validateConstraint(c)).toEqual(want);
  });
});

describe('feasibility steps', () => {
  it('matches datacenter globs', () => {
    expect(globMatch('dc*', 'dc2')).toBe(true);
    expect(globMatch('*', 'anything')).toBe(true);
    expect(globMatch('dc1', 'dc12')).toBe(false);
  });

  it('keeps ready, eligible, undrained nodes of the job datacenters and pool', () => {
    const nodes = [
      node('a'),
      node('b', { Status: 'initializing' }),
      node('c', { SchedulingEligibility: 'ineligible' }),
      node('d', { DrainStrategy: { Deadline: 0 } }),
      node('e', { Datacenter: 'dc2' }),
      node('f', { NodePool: 'gpu' }),
    ];
    const c = candidateNodes(nodes, job());
    expect(c.nodes.map((n) => n.ID)).toEqual(['a']);
    expect(c.availableByDc).toEqual({ dc1: 1 });
    expect(c.inPool).toBe(5);
    expect(candidateNodes(nodes, job({ NodePool: 'all', Datacenters: ['*'] })).nodes.map((n) => n.ID)).toEqual(['a', 'e', 'f']);
  });

  it('checks drivers by Drivers health or the legacy attribute', () => {
    expect(hasDrivers(node('a'), new Set(['docker']))).toBe(true);
    expect(hasDrivers(node('a'), new Set(['raw_exec']))).toBe(true);
    expect(hasDrivers(node('a', { Drivers: { docker: { Detected: true, Healthy: false } } }), new Set(['docker']))).toBe(false);
    expect(hasDrivers(node('a'), new Set(['java']))).toBe(false);
  });

  it.each<[string, JsonObject, JsonObject, string | null]>([
    ['no constraints', {}, {}, null],
    ['job constraint fails', { Constraints: [{ LTarget: '${attr.kernel.name}', RTarget: 'windows', Operand: '=' }] }, {}, '${attr.kernel.name} = windows'],
    ['driver missing', {}, { Tasks: [{ Name: 't', Driver: 'java', Resources: { CPU: 1, MemoryMB: 10 } }] }, 'missing drivers'],
    ['group constraint fails', {}, { Constraints: [{ LTarget: '${meta.rack}', RTarget: 'r2', Operand: '=' }] }, '${meta.rack} = r2'],
    [
      'task constraint fails',
      {},
      { Tasks: [{ Name: 't', Driver: 'docker', Constraints: [{ LTarget: '${attr.os.version}', RTarget: '>= 24.04', Operand: 'version' }] }] },
      '${attr.os.version} version >= 24.04',
    ],
    ['set_contains on meta', {}, { Constraints: [{ LTarget: '${meta.zones}', RTarget: 'a,c', Operand: 'set_contains' }] }, null],
  ])('static filter: %s', (_name, jobOver, groupOver, want) => {
    const j = job(jobOver, groupOver);
    expect(staticFilter(node('a'), staticChecksFor(j, tg(j)))).toBe(want);
  });

  it('applies distinct_hosts and distinct_property against proposed allocations', () => {
    const nodes = new Map([['a', node('a')], ['b', node('b', { Meta: { rack: 'r2' } })], ['c', node('c')]]);
    const hosts = job({}, { Constraints: [{ Operand: 'distinct_hosts', RTarget: 'true' }] });
    const checks = distinctChecksFor(hosts, tg(hosts));
    expect(distinctFilter(nodes.get('a') as Node, 'g', checks, [{ nodeId: 'a', taskGroup: 'g' }], nodes)).toBe('distinct_hosts');
    expect(distinctFilter(nodes.get('b') as Node, 'g', checks, [{ nodeId: 'a', taskGroup: 'g' }], nodes)).toBeNull();
    expect(distinctFilter(nodes.get('a') as Node, 'g', checks, [{ nodeId: 'a', taskGroup: 'other' }], nodes)).toBeNull();
    const prop = job({ Constraints: [{ LTarget: '${meta.rack}', Operand: 'distinct_property', RTarget: '2' }] });
    const pchecks = distinctChecksFor(prop, tg(prop));
    const used = [{ nodeId: 'a', taskGroup: 'g' }, { nodeId: 'c', taskGroup: 'x' }];
    expect(distinctFilter(nodes.get('c') as Node, 'g', pchecks, used, nodes)).toBe('distinct_property: ${meta.rack}=r1 used by 2 allocs');
    expect(distinctFilter(nodes.get('b') as Node, 'g', pchecks, used, nodes)).toBeNull();
    expect(distinctFilter(node('z', { Meta: {} }), 'g', pchecks, used, nodes)).toBe('missing property "${meta.rack}"');
  });
});

describe('resources and bin packing', () => {
  it('asks the group total and offers capacity minus reserved', () => {
    const j = job({}, { Tasks: [{ Name: 'a', Driver: 'docker', Resources: { CPU: 100, MemoryMB: 64 } }, { Name: 'b', Driver: 'docker', Resources: { CPU: 50, MemoryMB: 32 } }] });
    expect(taskGroupAsk(tg(j))).toEqual({ cpu: 150, memoryMb: 96, diskMb: 100 });
    expect(nodeCapacity(node('a', { ReservedResources: { Cpu: { CpuShares: 100 }, Memory: { MemoryMB: 200 }, Disk: { DiskMB: 0 } } }))).toEqual({ cpu: 900, memoryMb: 800, diskMb: 10_000 });
    expect(nodeCapacity(node('a', { NodeResources: null, Resources: { CPU: 500, MemoryMB: 256, DiskMB: 1000 } }))).toEqual({ cpu: 500, memoryMb: 256, diskMb: 1000 });
  });

  it.each<[string, [number, number, number], string | null]>([
    ['fits', [0, 0, 0], null],
    ['cpu', [800, 0, 0], 'cpu'],
    ['memory', [0, 900, 0], 'memory'],
    ['disk', [0, 0, 9950], 'disk'],
  ])('exhausted dimension: %s', (_n, [c, m, d], want) => {
    expect(exhaustedDimension({ cpu: 1000, memoryMb: 1000, diskMb: 10_000 }, { cpu: c, memoryMb: m, diskMb: d }, { cpu: 300, memoryMb: 200, diskMb: 100 })).toBe(want);
  });

  it('scores fuller nodes higher, in [0, 1]', () => {
    const cap = { cpu: 1000, memoryMb: 1000, diskMb: 0 };
    const empty = binPackScore(cap, { cpu: 100, memoryMb: 100, diskMb: 0 });
    const full = binPackScore(cap, { cpu: 900, memoryMb: 900, diskMb: 0 });
    expect(full).toBeGreaterThan(empty);
    expect(binPackScore(cap, { cpu: 1000, memoryMb: 1000, diskMb: 0 })).toBe(1);
    expect(empty).toBeGreaterThanOrEqual(0);
  });
});

describe('ranking steps', () => {
  it('penalises co-location of a group (job anti-affinity)', () => {
    expect(antiAffinityScore('a', 'g', 4, [])).toBeNull();
    expect(antiAffinityScore('a', 'g', 4, [{ nodeId: 'a', taskGroup: 'g' }])).toBe(-0.5);
    expect(antiAffinityScore('a', 'g', 4, [{ nodeId: 'b', taskGroup: 'g' }])).toBeNull();
  });

  it('weights affinities by matched weight over total weight', () => {
    const affs = [
      { LTarget: '${meta.rack}', RTarget: 'r1', Operand: '=', Weight: 50 },
      { LTarget: '${attr.kernel.name}', RTarget: 'windows', Operand: '=', Weight: -50 },
    ];
    expect(affinityScore(node('a'), affs)).toBe(0.5);
    expect(affinityScore(node('a', { Attributes: { 'kernel.name': 'windows' }, Meta: { rack: 'r1' } }), affs)).toBeNull();
    expect(affinityScore(node('a', { Attributes: { 'kernel.name': 'windows' }, Meta: {} }), affs)).toBe(-0.5);
  });

  it('boosts spread values below their target and evens out without targets', () => {
    const nodes = new Map([['a', node('a', { Datacenter: 'dc1' })], ['b', node('b', { Datacenter: 'dc2' })]]);
    const targeted = job({}, { Count: 4, Spreads: [{ Attribute: '${node.datacenter}', Weight: 100, SpreadTarget: [{ Value: 'dc1', Percent: 75 }, { Value: 'dc2', Percent: 25 }] }] });
    const specs = spreadSpecsFor(targeted, tg(targeted));
    const used = [{ nodeId: 'b', taskGroup: 'g' }];
    // dc1 wants 3 and has 0: boost (3-1)/3; dc2 wants 1 and has 1: (1-2)/1.
    expect(spreadScore(nodes.get('a') as Node, 'g', specs, used, nodes)).toBeCloseTo(2 / 3);
    expect(spreadScore(nodes.get('b') as Node, 'g', specs, used, nodes)).toBeCloseTo(-1);
    const even = job({}, { Spreads: [{ Attribute: '${node.datacenter}', Weight: 50 }] });
    const evenSpecs = spreadSpecsFor(even, tg(even));
    expect(spreadScore(nodes.get('a') as Node, 'g', evenSpecs, used, nodes)).toBe(1);
    expect(spreadScore(nodes.get('b') as Node, 'g', evenSpecs, used, nodes)).toBe(-1);
  });
});

describe('PlacementStack', () => {
  it('limits the nodes scored: log2 for services, 2 for batch, all with affinities or spreads', () => {
    expect(scoreLimit('service', 100, false)).toBe(7);
    expect(scoreLimit('service', 3, false)).toBe(2);
    expect(scoreLimit('batch', 100, false)).toBe(2);
    expect(scoreLimit('service', 100, true)).toBe(Number.MAX_SAFE_INTEGER);
  });

  it('bin-packs against what live and planned allocations hold, then reports exhaustion', () => {
    const j = job({}, { Count: 5 });
    const stack = new PlacementStack({ job: j, nodes: [node('a'), node('b')], usage: new Map([['a', { cpu: 700, memoryMb: 0, diskMb: 0 }]]), proposed: [], seed: 1 });
    const picks = [stack.select(tg(j)), stack.select(tg(j)), stack.select(tg(j))].map((s) => s.node?.ID);
    // a has room for one (700 + 300), b for three (3 x 300): four in all.
    expect(picks.filter((p) => p === 'a')).toHaveLength(1);
    expect(picks.filter((p) => p === 'b')).toHaveLength(2);
    expect(stack.select(tg(j)).node?.ID).toBe('b');
    const fail = stack.select(tg(j));
    expect(fail.node).toBeNull();
    expect(fail.metric).toMatchObject({ NodesEvaluated: 2, NodesFiltered: 0, NodesExhausted: 2, DimensionExhausted: { cpu: 2 }, NodesAvailable: { dc1: 2 }, NodesInPool: 2 });
  });

  it('records filtered nodes by constraint and prefers affinities', () => {
    const j = job(
      { Constraints: [{ LTarget: '${attr.kernel.name}', RTarget: 'linux', Operand: '=' }] },
      { Affinities: [{ LTarget: '${meta.rack}', RTarget: 'r2', Operand: '=', Weight: 100 }] },
    );
    const nodes = [node('a'), node('b', { Meta: { rack: 'r2' } }), node('w', { Attributes: { 'kernel.name': 'windows' } })];
    const stack = new PlacementStack({ job: j, nodes, usage: new Map(), proposed: [], seed: 7 });
    const sel = stack.select(tg(j));
    expect(sel.node?.ID).toBe('b');
    expect(sel.metric.ConstraintFiltered).toEqual({ '${attr.kernel.name} = linux': 1 });
    expect(sel.metric.NodesFiltered).toBe(1);
    expect(sel.metric.ScoreMetaData?.[0]?.Scores['node-affinity']).toBe(1);
    expect(constraintString({ LTarget: 'a', Operand: '=', RTarget: 'b' })).toBe('a = b');
  });

  it('spreads a group over nodes by anti-affinity and honours distinct_hosts', () => {
    const j = job({}, { Count: 3, Constraints: [{ Operand: 'distinct_hosts' }] });
    const stack = new PlacementStack({ job: j, nodes: [node('a'), node('b'), node('c')], usage: new Map(), proposed: [], seed: 3 });
    const ids = [stack.select(tg(j)), stack.select(tg(j)), stack.select(tg(j))].map((s) => s.node?.ID);
    expect(new Set(ids).size).toBe(3);
    const fourth = stack.select(tg(j));
    expect(fourth.node).toBeNull();
    expect(fourth.metric.ConstraintFiltered).toEqual({ distinct_hosts: 3 });
  });
});
