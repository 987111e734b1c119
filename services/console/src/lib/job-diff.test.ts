import { diffJobs } from './job-diff';

describe('diffJobs', () => {
  const base = {
    ID: 'web',
    Version: 0,
    ModifyIndex: 10,
    Priority: 50,
    Meta: { team: 'a' },
    TaskGroups: [
      { Name: 'api', Count: 1, Tasks: [{ Name: 'server', Driver: 'docker', Config: { image: 'nginx:1' } }] },
      { Name: 'db', Count: 1 },
    ],
  };

  it('reports nothing for a resubmission (only bookkeeping changed)', () => {
    expect(diffJobs(base, { ...base, Version: 1, ModifyIndex: 20 })).toEqual([]);
  });

  it('matches task groups and tasks by name and names the changed fields', () => {
    const next = {
      ...base,
      Version: 1,
      Priority: 70,
      Meta: { team: 'a', owner: 'b' },
      TaskGroups: [
        { Name: 'db', Count: 1 },
        { Name: 'api', Count: 3, Tasks: [{ Name: 'server', Driver: 'docker', Config: { image: 'nginx:2' } }] },
        { Name: 'cache', Count: 1 },
      ],
    };
    expect(diffJobs(base, next)).toEqual([
      { path: 'Meta.owner', kind: 'added', after: 'b' },
      { path: 'Priority', kind: 'edited', before: '50', after: '70' },
      { path: 'TaskGroups[api].Count', kind: 'edited', before: '1', after: '3' },
      { path: 'TaskGroups[api].Tasks[server].Config.image', kind: 'edited', before: 'nginx:1', after: 'nginx:2' },
      { path: 'TaskGroups[cache]', kind: 'added', after: '{"Name":"cache","Count":1}' },
    ]);
  });

  it('reports removed groups and whole-array edits of unnamed lists', () => {
    const next = { ...base, TaskGroups: [base.TaskGroups[0]], Datacenters: ['dc2'] };
    expect(diffJobs({ ...base, Datacenters: ['dc1'] }, next)).toEqual([
      { path: 'Datacenters', kind: 'edited', before: '["dc1"]', after: '["dc2"]' },
      { path: 'TaskGroups[db]', kind: 'deleted', before: '{"Name":"db","Count":1}' },
    ]);
  });
});
