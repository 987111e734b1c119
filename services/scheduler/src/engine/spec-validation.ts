// Validation of the scheduling parts of a job spec (the anchor's Job.Validate, TaskGroup,
// Constraint, Affinity, Spread, UpdateStrategy, ReschedulePolicy, PeriodicConfig and
// ParameterizedJobConfig Validate): what the engine could never honour is a 400 at
// register, never a job that silently schedules nothing.
import { asObject, type JsonObject } from '../shared/common.types';
import type { Job } from '../features/jobs/jobs.types';
import { CronSpecError, isValidTimeZone, parseCron } from './cron';
import { toAffinity, toConstraint, validateAffinity, validateConstraint } from './placement/constraints';

/** Drivers the anchor ships and well-known community plugins; anything else is a typo. */
export const KNOWN_DRIVERS = new Set([
  'docker', 'exec', 'exec2', 'raw_exec', 'java', 'qemu', 'podman', 'containerd-driver', 'nspawn', 'lxc', 'singularity',
  'firecracker-task-driver', 'pot', 'jail-task-driver', 'iis', 'win_iis', 'rkt', 'mock_driver',
  // The client agent's mock driver answers to its short name too (issue 26).
  'mock',
]);

const HEALTH_CHECKS = ['checks', 'task_states', 'manual'];
const DELAY_FUNCTIONS = ['constant', 'exponential', 'fibonacci'];

function list(v: unknown): JsonObject[] {
  return Array.isArray(v) ? v.map(asObject) : [];
}

function nest(label: string, errs: string[]): string[] {
  if (errs.length === 0) return [];
  const inner = errs.length === 1 ? `1 error occurred:\n\t* ${errs[0]}\n\n` : `${errs.length} errors occurred:\n\t${errs.map((e) => `* ${e}`).join('\n\t')}\n\n`;
  return [`${label} validation failed: ${inner}`];
}

function constraintErrors(raw: unknown): string[] {
  return list(raw).flatMap((c, i) => nest(`Constraint ${i + 1}`, validateConstraint(toConstraint(c), typeof c['Operand'] === 'string' && c['Operand'] !== '')));
}

function affinityErrors(raw: unknown): string[] {
  return list(raw).flatMap((a, i) => nest(`Affinity ${i + 1}`, validateAffinity(toAffinity(a))));
}

function spreadErrors(raw: unknown): string[] {
  return list(raw).flatMap((s, i) => {
    const errs: string[] = [];
    if (typeof s['Attribute'] !== 'string' || s['Attribute'] === '') errs.push('Missing spread attribute');
    const weight = typeof s['Weight'] === 'number' ? s['Weight'] : 50;
    if (weight <= 0 || weight > 100) errs.push('Spread block must have a positive weight from 0 to 100');
    const seen = new Set<string>();
    let sum = 0;
    for (const t of list(s['SpreadTarget'])) {
      const value = String(t['Value'] ?? '');
      const pct = Number(t['Percent'] ?? 0);
      if (seen.has(value)) errs.push(`Spread target value ${JSON.stringify(value)} already defined`);
      seen.add(value);
      if (pct < 0 || pct > 100) errs.push(`Spread target percentage for value ${JSON.stringify(value)} must be between 0 and 100`);
      sum += pct;
    }
    if (sum > 100) errs.push(`Sum of spread target percentages must not be greater than 100%; got ${sum}%`);
    return nest(`Spread ${i + 1}`, errs);
  });
}

const dur = (ns: number): string => `${ns / 1e9}s`;

function updateErrors(raw: unknown, count: number): string[] {
  const u = asObject(raw);
  if (Object.keys(u).length === 0) return [];
  const errs: string[] = [];
  const n = (k: string) => (typeof u[k] === 'number' ? (u[k] as number) : undefined);
  if (typeof u['HealthCheck'] === 'string' && u['HealthCheck'] !== '' && !HEALTH_CHECKS.includes(u['HealthCheck'])) errs.push(`Invalid health check given: ${JSON.stringify(u['HealthCheck'])}`);
  const mp = n('MaxParallel');
  if (mp !== undefined && mp < 0) errs.push(`Max parallel can not be less than zero: ${mp} < 0`);
  const canary = n('Canary');
  if (canary !== undefined && canary < 0) errs.push(`Canary count can not be less than zero: ${canary} < 0`);
  const minHealthy = n('MinHealthyTime');
  const healthy = n('HealthyDeadline');
  const progress = n('ProgressDeadline');
  if (minHealthy !== undefined && minHealthy < 0) errs.push(`Minimum healthy time may not be less than zero: ${dur(minHealthy)}`);
  if (healthy !== undefined && healthy <= 0) errs.push(`Healthy deadline must be greater than zero: ${dur(healthy)}`);
  if (progress !== undefined && progress < 0) errs.push(`Progress deadline must be zero or greater: ${dur(progress)}`);
  if (minHealthy !== undefined && healthy !== undefined && minHealthy >= healthy) errs.push(`Minimum healthy time must be less than healthy deadline: ${dur(minHealthy)} > ${dur(healthy)}`);
  if (healthy !== undefined && progress !== undefined && progress !== 0 && healthy >= progress) errs.push(`Healthy deadline must be less than progress deadline: ${dur(healthy)} > ${dur(progress)}`);
  if (mp !== undefined && mp > count && count > 0 && canary === undefined) {
    // The anchor only warns here; the deployment simply runs with the group's count.
  }
  return errs;
}

function rescheduleErrors(raw: unknown): string[] {
  const r = asObject(raw);
  if (Object.keys(r).length === 0) return [];
  const errs: string[] = [];
  const fn = r['DelayFunction'];
  if (typeof fn === 'string' && fn !== '' && !DELAY_FUNCTIONS.includes(fn)) errs.push(`Invalid delay function ${JSON.stringify(fn)}, must be one of [${DELAY_FUNCTIONS.map((f) => JSON.stringify(f)).join(' ')}]`);
  if (typeof r['Attempts'] === 'number' && r['Attempts'] < 0) errs.push(`Attempts must be >= 0 (got ${r['Attempts']})`);
  return nest('Reschedule policy', errs);
}

/** PeriodicConfig.Validate (specs from Spec or Specs, time zone, spec type). */
export function periodicErrors(p: JsonObject): string[] {
  if (p['Enabled'] === false) return [];
  const errs: string[] = [];
  const spec = typeof p['Spec'] === 'string' ? p['Spec'] : '';
  const specs = Array.isArray(p['Specs']) ? (p['Specs'] as unknown[]).map(String) : [];
  if (spec !== '' && specs.length > 0) errs.push('Only cron or crons may be used');
  if (spec === '' && specs.length === 0) errs.push('Must specify a spec');
  const tz = typeof p['TimeZone'] === 'string' ? p['TimeZone'] : '';
  if (tz !== '' && !isValidTimeZone(tz)) errs.push(`Invalid time zone ${JSON.stringify(tz)}: unknown time zone ${tz}`);
  const type = typeof p['SpecType'] === 'string' && p['SpecType'] !== '' ? p['SpecType'] : 'cron';
  if (type === 'cron') {
    for (const s of [spec, ...specs].filter((x) => x !== '')) {
      try {
        parseCron(s);
      } catch (e) {
        errs.push(`Invalid cron spec ${JSON.stringify(s)}: ${e instanceof CronSpecError ? e.message : String(e)}`);
      }
    }
  } else if (type !== 'test') errs.push(`Unknown periodic specification type ${JSON.stringify(type)}`);
  return errs;
}

export function parameterizedErrors(d: JsonObject): string[] {
  const errs: string[] = [];
  const payload = typeof d['Payload'] === 'string' && d['Payload'] !== '' ? d['Payload'] : 'optional';
  if (!['optional', 'required', 'forbidden'].includes(payload)) errs.push(`Unknown payload requirement: ${JSON.stringify(payload)}`);
  const req = Array.isArray(d['MetaRequired']) ? (d['MetaRequired'] as unknown[]).map(String) : [];
  const opt = new Set(Array.isArray(d['MetaOptional']) ? (d['MetaOptional'] as unknown[]).map(String) : []);
  const both = req.filter((k) => opt.has(k));
  if (both.length > 0) errs.push(`Required and optional meta keys should be disjoint. Following keys exist in both: [${both.join(' ')}]`);
  return errs;
}

/** Job-level errors (constraints, affinities, spreads, update, periodic, parameterized). */
export function validateSchedulingJob(job: Job): string[] {
  const errs: string[] = [...constraintErrors(job['Constraints']), ...affinityErrors(job['Affinities']), ...spreadErrors(job['Spreads'])];
  const periodic = job.Periodic ? asObject(job.Periodic) : null;
  if (periodic && periodic['Enabled'] !== false) {
    if (job.Type !== 'batch' && job.Type !== 'sysbatch') errs.push('Periodic can only be used with "batch" or "sysbatch" scheduler');
    errs.push(...periodicErrors(periodic));
  }
  if (job.ParameterizedJob) {
    if (job.Type !== 'batch' && job.Type !== 'sysbatch') errs.push('Parameterized job can only be used with "batch" or "sysbatch" scheduler');
    errs.push(...parameterizedErrors(asObject(job.ParameterizedJob)));
  }
  if (job.Type === 'system' || job.Type === 'sysbatch') {
    for (const g of job.TaskGroups) {
      if (typeof g['Count'] === 'number' && g['Count'] > 1) errs.push(`Job task group ${String(g['Name'])} has count ${g['Count']}. Count cannot exceed 1 with system scheduler`);
    }
  }
  return errs;
}

/** Group-level errors, appended to the group's own (TaskGroup.Validate). */
export function validateSchedulingGroup(job: Job, tg: JsonObject): string[] {
  const count = typeof tg['Count'] === 'number' ? tg['Count'] : 1;
  const errs = [...constraintErrors(tg['Constraints']), ...affinityErrors(tg['Affinities']), ...spreadErrors(tg['Spreads'])];
  errs.push(...nest('Update', updateErrors(tg['Update'] ?? job['Update'], count)));
  errs.push(...rescheduleErrors(tg['ReschedulePolicy']));
  for (const t of list(tg['Tasks'])) {
    const name = String(t['Name'] ?? '');
    const taskErrs = [...constraintErrors(t['Constraints']), ...affinityErrors(t['Affinities'])];
    const driver = t['Driver'];
    if (typeof driver === 'string' && driver !== '' && !KNOWN_DRIVERS.has(driver)) taskErrs.push(`Unknown driver ${JSON.stringify(driver)}`);
    errs.push(...nest(`Task ${name}`, taskErrs));
  }
  return errs;
}
