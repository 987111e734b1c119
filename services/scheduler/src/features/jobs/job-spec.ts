// Job canonicalisation and validation (reference §1.1: api.Job.Canonicalize,
// structs.Job.Canonicalize and structs.Job.Validate), list stubs and summaries.
import { BadRequestError } from '@selfstack/errors';
import { asObject, type JsonObject } from '../../shared/common.types';
import type { Job, JobSummary, TaskGroupSummary } from './jobs.types';
import { validateSchedulingGroup, validateSchedulingJob } from '../../engine/spec-validation';

export const JOB_TYPES = ['service', 'batch', 'system', 'sysbatch'] as const;

/** Fields the server owns: they never count as a spec change. */
const SERVER_FIELDS = [
  'Status',
  'StatusDescription',
  'Stable',
  'Version',
  'SubmitTime',
  'CreateIndex',
  'ModifyIndex',
  'JobModifyIndex',
] as const;

function str(v: unknown, dflt: string): string {
  return typeof v === 'string' && v !== '' ? v : dflt;
}

function num(v: unknown, dflt: number): number {
  return typeof v === 'number' && Number.isFinite(v) ? v : dflt;
}

function list(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}

function canonicalTask(raw: unknown): JsonObject {
  const t = asObject(raw);
  const res = asObject(t['Resources']);
  return {
    Name: typeof t['Name'] === 'string' ? t['Name'] : '',
    Driver: typeof t['Driver'] === 'string' ? t['Driver'] : '',
    User: str(t['User'], ''),
    Lifecycle: t['Lifecycle'] ?? null,
    Config: t['Config'] ?? null,
    Constraints: t['Constraints'] ?? null,
    Affinities: t['Affinities'] ?? null,
    Env: t['Env'] ?? null,
    Services: t['Services'] ?? null,
    Templates: t['Templates'] ?? null,
    Artifacts: t['Artifacts'] ?? null,
    Vault: t['Vault'] ?? null,
    Meta: t['Meta'] ?? null,
    KillTimeout: num(t['KillTimeout'], 5_000_000_000),
    KillSignal: str(t['KillSignal'], ''),
    LogConfig: t['LogConfig'] ?? { MaxFiles: 10, MaxFileSizeMB: 10, Disabled: false },
    Leader: t['Leader'] === true,
    ShutdownDelay: num(t['ShutdownDelay'], 0),
    VolumeMounts: t['VolumeMounts'] ?? null,
    Kind: str(t['Kind'], ''),
    ...t,
    // Reference §1.1: default task resources {CPU:100, MemoryMB:300}.
    Resources: {
      CPU: num(res['CPU'], 100),
      Cores: num(res['Cores'], 0),
      MemoryMB: num(res['MemoryMB'], 300),
      MemoryMaxMB: num(res['MemoryMaxMB'], 0),
      DiskMB: num(res['DiskMB'], 0),
      IOPS: num(res['IOPS'], 0),
      Networks: res['Networks'] ?? null,
      Devices: res['Devices'] ?? null,
      ...res,
    },
  };
}

function canonicalGroup(raw: unknown): JsonObject {
  const g = asObject(raw);
  const scaling = asObject(g['Scaling']);
  const defaultCount = g['Scaling'] && typeof scaling['Min'] === 'number' ? (scaling['Min'] as number) : 1;
  return {
    Name: typeof g['Name'] === 'string' ? g['Name'] : '',
    Constraints: g['Constraints'] ?? null,
    Affinities: g['Affinities'] ?? null,
    Spreads: g['Spreads'] ?? null,
    Update: g['Update'] ?? null,
    Migrate: g['Migrate'] ?? null,
    Scaling: g['Scaling'] ?? null,
    RestartPolicy: g['RestartPolicy'] ?? null,
    ReschedulePolicy: g['ReschedulePolicy'] ?? null,
    EphemeralDisk: g['EphemeralDisk'] ?? { Sticky: false, SizeMB: 300, Migrate: false },
    Meta: g['Meta'] ?? null,
    Networks: g['Networks'] ?? null,
    Services: g['Services'] ?? null,
    Volumes: g['Volumes'] ?? null,
    ShutdownDelay: g['ShutdownDelay'] ?? null,
    ...g,
    Count: typeof g['Count'] === 'number' ? g['Count'] : defaultCount,
    Tasks: list(g['Tasks']).map(canonicalTask),
  };
}

export interface CanonicalizeContext {
  /** The request's namespace (query or header) when the job names none. */
  namespace: string;
  region: string;
}

/** Applies Nomad's defaults; the result carries every field the API returns. */
export function canonicalizeJob(raw: JsonObject, ctx: CanonicalizeContext): Job {
  const id = typeof raw['ID'] === 'string' ? raw['ID'] : '';
  const region = typeof raw['Region'] === 'string' && raw['Region'] !== '' && raw['Region'] !== 'global' ? raw['Region'] : ctx.region;
  const datacenters = list(raw['Datacenters']);
  const job: JsonObject = {
    Region: region,
    Namespace: str(raw['Namespace'], ctx.namespace),
    ID: id,
    ParentID: '',
    Name: id,
    Type: 'service',
    Priority: 50,
    AllAtOnce: false,
    NodePool: 'default',
    Constraints: null,
    Affinities: null,
    Spreads: null,
    Update: null,
    Multiregion: null,
    Periodic: null,
    ParameterizedJob: null,
    Dispatched: false,
    DispatchIdempotencyToken: '',
    Payload: null,
    Meta: null,
    ConsulToken: '',
    ConsulNamespace: '',
    VaultToken: '',
    VaultNamespace: '',
    NomadTokenID: '',
    UI: null,
    VersionTag: null,
    ...raw,
  };
  job['Region'] = region;
  job['Namespace'] = str(raw['Namespace'], ctx.namespace);
  job['Name'] = str(raw['Name'], id);
  job['Type'] = str(raw['Type'], 'service');
  job['Priority'] = typeof raw['Priority'] === 'number' && raw['Priority'] !== 0 ? raw['Priority'] : 50;
  job['NodePool'] = str(raw['NodePool'], 'default');
  job['Datacenters'] = datacenters.length === 0 ? ['*'] : datacenters;
  job['TaskGroups'] = list(raw['TaskGroups']).map(canonicalGroup);
  job['Stop'] = raw['Stop'] === true;
  job['Status'] = '';
  job['StatusDescription'] = '';
  job['Stable'] = false;
  job['Version'] = 0;
  job['SubmitTime'] = 0;
  job['CreateIndex'] = 0;
  job['ModifyIndex'] = 0;
  job['JobModifyIndex'] = 0;
  return job as Job;
}

/** go-multierror's text: `1 error occurred:\n\t* msg\n\n`. */
export function multiError(errors: readonly string[]): string {
  if (errors.length === 1) return `1 error occurred:\n\t* ${errors[0]}\n\n`;
  return `${errors.length} errors occurred:\n\t${errors.map((e) => `* ${e}`).join('\n\t')}\n\n`;
}

function validateTask(task: JsonObject): string[] {
  const errs: string[] = [];
  const name = task['Name'];
  if (typeof name !== 'string' || name === '') errs.push('Missing task name');
  else if (name.includes('/')) errs.push('Task name cannot include slashes');
  else if (name.includes('\0')) errs.push('Task name cannot include null characters');
  if (typeof task['Driver'] !== 'string' || task['Driver'] === '') errs.push('Missing task driver');
  const res = asObject(task['Resources']);
  if (typeof res['CPU'] === 'number' && res['CPU'] < 1 && num(res['Cores'], 0) === 0) errs.push(`minimum CPU value is 1; got ${res['CPU']}`);
  if (typeof res['MemoryMB'] === 'number' && res['MemoryMB'] < 10) errs.push(`minimum MemoryMB value is 10; got ${res['MemoryMB']}`);
  return errs;
}

function validateGroup(group: JsonObject, job: Job): string[] {
  const jobType = job.Type;
  const errs: string[] = [];
  const count = group['Count'];
  if (typeof count === 'number' && count < 0) errs.push('Task group count can\'t be negative');
  const tasks = list(group['Tasks']).map(asObject);
  if (tasks.length === 0) errs.push('Missing tasks for task group');
  if (jobType === 'system' && group['Scaling']) errs.push('System jobs should not have a scaling block');
  const seen = new Map<string, number>();
  tasks.forEach((task, i) => {
    const name = typeof task['Name'] === 'string' ? task['Name'] : '';
    if (name !== '') {
      const prev = seen.get(name);
      if (prev !== undefined) errs.push(`Task ${i + 1} redefines '${name}' from task ${prev + 1}`);
      else seen.set(name, i);
    }
    const taskErrs = validateTask(task);
    if (taskErrs.length > 0) errs.push(`Task ${name === '' ? i + 1 : name} validation failed: ${multiError(taskErrs)}`);
  });
  return errs;
}

/** structs.Job.Validate; returns the multierror text or null. */
export function validateJob(job: Job): string | null {
  const errs: string[] = [];
  if (job.Region === '') errs.push('Missing job region');
  if (job.ID === '') errs.push('Missing job ID');
  else if (/\s/.test(job.ID)) errs.push('Job ID contains a space');
  else if (job.ID.includes('\0')) errs.push('Job ID contains a null character');
  if (job.Name === '') errs.push('Missing job name');
  else if (job.Name.includes('\0')) errs.push('Job Name contains a null character');
  if (job.Namespace === '') errs.push('Job must be in a namespace');
  if (!(JOB_TYPES as readonly string[]).includes(job.Type)) errs.push(`Invalid job type: ${JSON.stringify(job.Type)}`);
  if (!Number.isInteger(job.Priority) || job.Priority < 1 || job.Priority > 100) errs.push('Job priority must be between [1, 100]');
  if (job.Datacenters.length === 0) errs.push('Missing job datacenters');
  for (const dc of job.Datacenters) {
    if (typeof dc !== 'string' || dc === '') errs.push('Job datacenter must be non-empty string');
  }
  if (job.TaskGroups.length === 0) errs.push('Missing job task groups');
  // Scheduling parts (issue 25): constraints, affinities, spreads, update, periodic, parameterized.
  errs.push(...validateSchedulingJob(job));
  const seen = new Map<string, number>();
  job.TaskGroups.forEach((group, i) => {
    const name = typeof group['Name'] === 'string' ? group['Name'] : '';
    if (name === '') errs.push(`Job task group ${i + 1} missing name`);
    else {
      const prev = seen.get(name);
      if (prev !== undefined) errs.push(`Job task group ${i + 1} redefines '${name}' from group ${prev + 1}`);
      else seen.set(name, i);
    }
    const groupErrs = [...validateGroup(group, job), ...validateSchedulingGroup(job, group)];
    if (groupErrs.length > 0) errs.push(`Task group ${name} validation failed: ${multiError(groupErrs)}`);
  });
  return errs.length === 0 ? null : multiError(errs);
}

/**
 * Checks the HTTP layer makes before canonicalisation (reference §1.1, in order).
 * `pathId` is set for `/v1/job/:id`.
 */
export function checkRegisterRequest(body: JsonObject, pathId: string | null): JsonObject {
  const job = body['Job'];
  if (job === undefined || job === null) throw new BadRequestError('Job must be specified');
  if (typeof job !== 'object' || Array.isArray(job)) {
    throw new BadRequestError('json: cannot unmarshal ' + (Array.isArray(job) ? 'array' : typeof job) + ' into Go struct field JobRegisterRequest.Job of type api.Job');
  }
  const j = job as JsonObject;
  if (typeof j['ID'] !== 'string' || j['ID'] === '') throw new BadRequestError("Job ID hasn't been provided");
  if (pathId !== null && j['ID'] !== pathId) throw new BadRequestError('Job ID does not match name');
  if (j['Type'] === 'system' || j['Type'] === 'sysbatch') {
    for (const g of list(j['TaskGroups'])) {
      if (asObject(g)['Scaling']) throw new BadRequestError('Task groups with job type system do not support scaling blocks');
    }
  }
  return j;
}

function specOf(job: JsonObject): JsonObject {
  const copy: JsonObject = { ...job };
  for (const f of SERVER_FIELDS) delete copy[f];
  return copy;
}

function stableStringify(v: unknown): string {
  if (Array.isArray(v)) return '[' + v.map(stableStringify).join(',') + ']';
  if (typeof v === 'object' && v !== null) {
    const o = v as JsonObject;
    return '{' + Object.keys(o).sort().map((k) => JSON.stringify(k) + ':' + stableStringify(o[k])).join(',') + '}';
  }
  return JSON.stringify(v) ?? 'null';
}

/** Did the user-controlled part of the job change? (reference §1.1: unchanged = no new version) */
export function jobSpecChanged(previous: JsonObject, next: JsonObject): boolean {
  return stableStringify(specOf(previous)) !== stableStringify(specOf(next));
}

export function isPeriodicOrParameterized(job: Job): boolean {
  return isPeriodic(job) || isParameterized(job);
}

export function isPeriodic(job: JsonObject): boolean {
  return job['Periodic'] !== null && job['Periodic'] !== undefined && asObject(job['Periodic'])['Enabled'] !== false;
}

/** Job.IsParameterized: a dispatched child keeps the block but is not itself parameterized. */
export function isParameterized(job: JsonObject): boolean {
  return job['ParameterizedJob'] !== null && job['ParameterizedJob'] !== undefined && job['Dispatched'] !== true;
}

function emptyGroupSummary(): TaskGroupSummary {
  return { Queued: 0, Complete: 0, Failed: 0, Running: 0, Starting: 0, Lost: 0, Unknown: 0 };
}

/** A summary carrying one entry per task group, keeping counts of groups that remain. */
export function summaryFor(job: Job, previous: JobSummary | null, index: number): JobSummary {
  const summary: Record<string, TaskGroupSummary> = {};
  for (const g of job.TaskGroups) {
    const name = String(g['Name']);
    summary[name] = previous?.Summary[name] ?? emptyGroupSummary();
  }
  return {
    JobID: job.ID,
    Namespace: job.Namespace,
    Summary: summary,
    Children: previous?.Children ?? { Pending: 0, Running: 0, Dead: 0 },
    CreateIndex: previous?.CreateIndex ?? index,
    ModifyIndex: index,
  };
}

/** JobListStub (reference §1.2). */
export function jobStub(job: Job, summary: JobSummary, withMeta: boolean): JsonObject {
  const stub: JsonObject = {
    ID: job.ID,
    ParentID: job['ParentID'] ?? '',
    Name: job.Name,
    Namespace: job.Namespace,
    Datacenters: job.Datacenters,
    NodePool: job['NodePool'] ?? 'default',
    Multiregion: job['Multiregion'] ?? null,
    Type: job.Type,
    Priority: job.Priority,
    Periodic: job.Periodic !== null && job.Periodic !== undefined,
    ParameterizedJob: isParameterized(job),
    Stop: job.Stop,
    Status: job.Status,
    StatusDescription: job.StatusDescription,
    JobSummary: summary,
    CreateIndex: job.CreateIndex,
    ModifyIndex: job.ModifyIndex,
    JobModifyIndex: job.JobModifyIndex,
    SubmitTime: job.SubmitTime,
  };
  if (withMeta) stub['Meta'] = job.Meta ?? {};
  return stub;
}

export interface StatusInputs {
  hasActiveDeployment: boolean;
  hasActiveAlloc: boolean;
  hasActiveEval: boolean;
  hadEvals: boolean;
}

/** getJobStatus (reference §1.4). */
export function jobStatus(job: Job, s: StatusInputs): string {
  if (job.Type === 'system' || isPeriodicOrParameterized(job)) return job.Stop ? 'dead' : 'running';
  if (s.hasActiveDeployment) return 'running';
  if (s.hasActiveAlloc) return 'running';
  if (s.hasActiveEval) return 'pending';
  if (s.hadEvals || job.Stop) return 'dead';
  return 'pending';
}
