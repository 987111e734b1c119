import { canonicalizeJob, checkRegisterRequest, jobSpecChanged, jobStatus, multiError, validateJob } from './job-spec';

const ctx = { namespace: 'default', region: 'global' };
const minimal = { ID: 'web', TaskGroups: [{ Name: 'g', Tasks: [{ Name: 't', Driver: 'docker' }] }] };

describe('canonicalizeJob', () => {
  it('applies Nomad defaults', () => {
    const job = canonicalizeJob(minimal, ctx);
    expect(job).toMatchObject({ Name: 'web', Namespace: 'default', Region: 'global', Type: 'service', Priority: 50, Datacenters: ['*'], NodePool: 'default' });
    expect(job.TaskGroups[0]).toMatchObject({ Count: 1 });
    expect((job.TaskGroups[0] as { Tasks: Array<{ Resources: unknown }> }).Tasks[0]?.Resources).toMatchObject({ CPU: 100, MemoryMB: 300 });
    expect(validateJob(job)).toBeNull();
  });

  it('uses Scaling.Min as the default count and the request namespace', () => {
    const job = canonicalizeJob({ ...minimal, TaskGroups: [{ ...minimal.TaskGroups[0], Scaling: { Min: 3 } }] }, { namespace: 'prod', region: 'eu' });
    expect(job.TaskGroups[0]?.['Count']).toBe(3);
    expect(job.Namespace).toBe('prod');
    expect(job.Region).toBe('eu');
  });
});

describe('validateJob', () => {
  it('reports problems in go-multierror format', () => {
    expect(multiError(['a'])).toBe('1 error occurred:\n\t* a\n\n');
    const job = canonicalizeJob({ ID: 'x y', Priority: 101, TaskGroups: [{ Name: 'g', Tasks: [] }, { Name: 'g', Tasks: [{ Name: 't', Driver: 'docker' }] }] }, ctx);
    expect(validateJob(job)).toBe(
      multiError([
        'Job ID contains a space',
        'Job priority must be between [1, 100]',
        `Task group g validation failed: ${multiError(['Missing tasks for task group'])}`,
        "Job task group 2 redefines 'g' from group 1",
      ]),
    );
  });
});

describe('register request checks', () => {
  it('checks Job, ID, path and system scaling in order', () => {
    expect(() => checkRegisterRequest({}, null)).toThrow('Job must be specified');
    expect(() => checkRegisterRequest({ Job: {} }, null)).toThrow("Job ID hasn't been provided");
    expect(() => checkRegisterRequest({ Job: { ID: 'a' } }, 'b')).toThrow('Job ID does not match name');
    expect(() => checkRegisterRequest({ Job: { ID: 'a', Type: 'system', TaskGroups: [{ Scaling: { Min: 1 } }] } }, null)).toThrow(
      'Task groups with job type system do not support scaling blocks',
    );
  });
});

describe('spec changes and status', () => {
  it('ignores server-owned fields when comparing', () => {
    const a = canonicalizeJob(minimal, ctx);
    const b = { ...a, Version: 4, ModifyIndex: 99, Status: 'running' };
    expect(jobSpecChanged(a, b)).toBe(false);
    expect(jobSpecChanged(a, { ...a, Priority: 60 })).toBe(true);
  });

  it('follows getJobStatus', () => {
    const job = canonicalizeJob(minimal, ctx);
    const none = { hasActiveDeployment: false, hasActiveAlloc: false, hasActiveEval: false, hadEvals: false };
    expect(jobStatus(job, none)).toBe('pending');
    expect(jobStatus(job, { ...none, hasActiveEval: true })).toBe('pending');
    expect(jobStatus(job, { ...none, hasActiveAlloc: true })).toBe('running');
    expect(jobStatus(job, { ...none, hadEvals: true })).toBe('dead');
    expect(jobStatus({ ...job, Type: 'system' }, none)).toBe('running');
    expect(jobStatus({ ...job, Type: 'system', Stop: true }, none)).toBe('dead');
  });
});
