// The paced drain (the anchor's drainer per task group, docs/scheduler.md "Nodes and
// heartbeats"): which allocations on a draining node may be marked for migration now, and
// the `migrate` block that sets how many at a time.
import type { Allocation } from '../features/allocations/allocations.types';
import type { Job } from '../features/jobs/jobs.types';
import type { JsonObject } from '../shared/common.types';
import { allocsToMigrate, migrateMaxParallel } from './job-rules';
import { parseJobHcl } from './jobspec-hcl';

function job(group: JsonObject = {}, over: JsonObject = {}): Job {
  return { ID: 'web', Namespace: 'default', Type: 'service', Stop: false, TaskGroups: [{ Name: 'g', Count: 3, ...group }], ...over } as unknown as Job;
}

let seq = 0;
function alloc(nodeId: string, over: JsonObject = {}): Allocation {
  return { ID: `a${++seq}`, TaskGroup: 'g', NodeID: nodeId, DesiredStatus: 'run', ClientStatus: 'running', DeploymentStatus: null, DesiredTransition: {}, ...over } as unknown as Allocation;
}

const ids = (list: readonly Allocation[]) => list.map((a) => a.ID);

describe('migrateMaxParallel', () => {
  it("the group's block, else the job's, else 1", () => {
    expect(migrateMaxParallel(job(), {})).toBe(1);
    expect(migrateMaxParallel(job({}, { Migrate: { MaxParallel: 2 } }), {})).toBe(2);
    expect(migrateMaxParallel(job({}, { Migrate: { MaxParallel: 2 } }), { Migrate: { MaxParallel: 3 } })).toBe(3);
    expect(migrateMaxParallel(job(), { Migrate: { MaxParallel: 0 } })).toBe(0);
    // Not a whole, non-negative number: the default.
    expect(migrateMaxParallel(job(), { Migrate: { MaxParallel: -1 } })).toBe(1);
    expect(migrateMaxParallel(job(), { Migrate: { MaxParallel: '2' } })).toBe(1);
  });
});

describe('allocsToMigrate', () => {
  it('with max_parallel 1, one at a time: the next once the replacement runs', () => {
    const j = job();
    const [a, b, c] = [alloc('src'), alloc('src'), alloc('src')];
    expect(ids(allocsToMigrate(j, [a!, b!, c!], 'src'))).toEqual([a!.ID]);
    // a is marked and stopped; its replacement is placed but not running yet: nothing more.
    const aStopped = { ...a!, DesiredStatus: 'stop', DesiredTransition: { Migrate: true } } as Allocation;
    const aNew = alloc('dst', { ClientStatus: 'pending' });
    expect(allocsToMigrate(j, [aStopped, aNew, b!, c!], 'src')).toEqual([]);
    // Marked but not stopped yet (its evaluation has not run): it no longer counts.
    const aMarked = { ...a!, DesiredTransition: { Migrate: true } } as Allocation;
    expect(allocsToMigrate(j, [aMarked, b!, c!], 'src')).toEqual([]);
    // The replacement runs: the next one.
    expect(ids(allocsToMigrate(j, [aStopped, { ...aNew, ClientStatus: 'running' } as Allocation, b!, c!], 'src'))).toEqual([b!.ID]);
  });

  it('max_parallel from the migrate block; a reported unhealthy replacement does not count', () => {
    const allOnSrc = [alloc('src'), alloc('src'), alloc('src')];
    expect(allocsToMigrate(job({ Migrate: { MaxParallel: 2 } }), allOnSrc, 'src')).toHaveLength(2);
    expect(allocsToMigrate(job({ Migrate: { MaxParallel: 5 } }), allOnSrc, 'src')).toHaveLength(3);
    // max_parallel 0: the drain waits for its deadline.
    expect(allocsToMigrate(job({ Migrate: { MaxParallel: 0 } }), allOnSrc, 'src')).toEqual([]);
    const unhealthy = alloc('dst', { DeploymentStatus: { Healthy: false } });
    const [b, c] = [alloc('src'), alloc('src')];
    expect(allocsToMigrate(job(), [unhealthy, b!, c!], 'src')).toEqual([]);
    expect(ids(allocsToMigrate(job(), [{ ...unhealthy, DeploymentStatus: { Healthy: true } } as Allocation, b!, c!], 'src'))).toEqual([b!.ID]);
  });

  it('counts the group on every node, candidates only on this one, and groups apart', () => {
    const j = job({}, { TaskGroups: [{ Name: 'g', Count: 2 }, { Name: 'h', Count: 1 }] });
    const g1 = alloc('other');
    const g2 = alloc('src');
    const h1 = alloc('src', { TaskGroup: 'h' });
    expect(ids(allocsToMigrate(j, [g1, g2, h1], 'src'))).toEqual([g2.ID, h1.ID]);
    // A pending allocation on the draining node is a candidate, but not healthy.
    const pending = alloc('src', { ClientStatus: 'pending' });
    expect(allocsToMigrate(job({ Count: 1 }), [pending], 'src')).toEqual([]);
  });

  it('does not pace a stopped job, a group the job no longer has, or a job that is gone', () => {
    const list = [alloc('src'), alloc('src'), alloc('src', { TaskGroup: 'old' })];
    expect(allocsToMigrate(job({}, { Stop: true }), list, 'src')).toHaveLength(3);
    expect(ids(allocsToMigrate(job({ Count: 2 }), list, 'src'))).toEqual([list[0]!.ID, list[2]!.ID]);
    // A group below its count keeps what it has until the deadline.
    expect(ids(allocsToMigrate(job({ Count: 3 }), list, 'src'))).toEqual([list[2]!.ID]);
    expect(allocsToMigrate(null, list, 'src')).toHaveLength(3);
  });

  it('never marks what is terminal or already marked', () => {
    const done = alloc('src', { ClientStatus: 'complete' });
    const stopped = alloc('src', { DesiredStatus: 'stop' });
    const marked = alloc('src', { DesiredTransition: { Migrate: true } });
    expect(allocsToMigrate(job({ Count: 1 }), [done, stopped, marked], 'src')).toEqual([]);
  });
});

describe('the migrate block in HCL', () => {
  it('on the group and on the job, durations in nanoseconds', async () => {
    const job = await parseJobHcl(`job "web" {
      migrate { max_parallel = 2 }
      group "g" {
        migrate {
          max_parallel     = 3
          health_check     = "task_states"
          min_healthy_time = "15s"
          healthy_deadline = "5m"
        }
        task "t" { driver = "docker" }
      }
    }`);
    expect(job['Migrate']).toEqual({ MaxParallel: 2 });
    expect((job['TaskGroups'] as JsonObject[])[0]?.['Migrate']).toEqual({ MaxParallel: 3, HealthCheck: 'task_states', MinHealthyTime: 15_000_000_000, HealthyDeadline: 300_000_000_000 });
  });
});
