// HCL2 job specifications to the API's Job JSON (POST /v1/jobs/parse; the anchor's
// jobspec2): the text is parsed by HashiCorp's own HCL parser (@cdktf/hcl2json, via
// @selfstack/config), then the job, group and task blocks are mapped to their API fields
// (durations to nanoseconds, `constraint`/`affinity`/`spread` blocks to lists, `port`
// labels to network ports, `config` kept as written). Input variables (`variable` blocks
// with defaults, overridden by the request's Variables in HCL var-file form) and `locals`
// are substituted where an expression is exactly `var.x`/`local.x` or interpolates them.
import { BadRequestError } from '@selfstack/errors';
import { HclParseError, parseDuration, parseHcl } from '@selfstack/config';
import { asObject, type JsonObject } from '../shared/common.types';

type Body = JsonObject;

function blocks(v: unknown): Body[] {
  return Array.isArray(v) ? v.map(asObject) : v && typeof v === 'object' ? [asObject(v)] : [];
}

/** Labeled blocks (`group "web" { ... }`) as [label, body] pairs, in document order. */
function labeled(v: unknown): Array<[string, Body]> {
  const out: Array<[string, Body]> = [];
  for (const [label, bodies] of Object.entries(asObject(v))) for (const b of blocks(bodies)) out.push([label, b]);
  return out;
}

function durationNs(v: unknown, field: string): number | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'number') return v;
  try {
    return Math.round(parseDuration(String(v)) * 1e6);
  } catch {
    throw new BadRequestError(`Error parsing job file: invalid duration for ${field}: ${JSON.stringify(v)}`);
  }
}

function set(out: JsonObject, key: string, v: unknown): void {
  if (v !== undefined) out[key] = v;
}

function strMap(v: unknown): Record<string, string> | undefined {
  const b = blocks(v)[0] ?? (v && typeof v === 'object' && !Array.isArray(v) ? asObject(v) : undefined);
  if (!b) return undefined;
  return Object.fromEntries(Object.entries(b).map(([k, x]) => [k, typeof x === 'string' ? x : JSON.stringify(x)]));
}

function constraint(b: Body): JsonObject {
  const c: JsonObject = { LTarget: b['attribute'] ?? '', RTarget: b['value'] ?? '', Operand: b['operator'] ?? '=' };
  if (b['distinct_hosts'] !== undefined) Object.assign(c, { Operand: 'distinct_hosts', RTarget: String(b['distinct_hosts']) });
  if (b['distinct_property'] !== undefined) Object.assign(c, { Operand: 'distinct_property', LTarget: b['distinct_property'], RTarget: b['value'] ?? '' });
  for (const op of ['regexp', 'version', 'semver', 'set_contains', 'set_contains_any', 'set_contains_all']) {
    if (b[op] !== undefined) Object.assign(c, { Operand: op, RTarget: String(b[op]) });
  }
  return c;
}

function affinity(b: Body): JsonObject {
  return { ...constraint(b), Weight: typeof b['weight'] === 'number' ? b['weight'] : 50 };
}

function spread(b: Body): JsonObject {
  return {
    Attribute: b['attribute'] ?? '',
    Weight: typeof b['weight'] === 'number' ? b['weight'] : 50,
    SpreadTarget: labeled(b['target']).map(([value, t]) => ({ Value: value, Percent: t['percent'] ?? 0 })),
  };
}

function update(b: Body | undefined): JsonObject | undefined {
  if (!b) return undefined;
  const u: JsonObject = {};
  set(u, 'Stagger', durationNs(b['stagger'], 'stagger'));
  set(u, 'MaxParallel', b['max_parallel']);
  set(u, 'HealthCheck', b['health_check']);
  set(u, 'MinHealthyTime', durationNs(b['min_healthy_time'], 'min_healthy_time'));
  set(u, 'HealthyDeadline', durationNs(b['healthy_deadline'], 'healthy_deadline'));
  set(u, 'ProgressDeadline', durationNs(b['progress_deadline'], 'progress_deadline'));
  set(u, 'AutoRevert', b['auto_revert']);
  set(u, 'AutoPromote', b['auto_promote']);
  set(u, 'Canary', b['canary']);
  return u;
}

function migrate(b: Body | undefined): JsonObject | undefined {
  if (!b) return undefined;
  const m: JsonObject = {};
  set(m, 'MaxParallel', b['max_parallel']);
  set(m, 'HealthCheck', b['health_check']);
  set(m, 'MinHealthyTime', durationNs(b['min_healthy_time'], 'min_healthy_time'));
  set(m, 'HealthyDeadline', durationNs(b['healthy_deadline'], 'healthy_deadline'));
  return m;
}

function reschedule(b: Body | undefined): JsonObject | undefined {
  if (!b) return undefined;
  const r: JsonObject = {};
  set(r, 'Attempts', b['attempts']);
  set(r, 'Interval', durationNs(b['interval'], 'interval'));
  set(r, 'Delay', durationNs(b['delay'], 'delay'));
  set(r, 'DelayFunction', b['delay_function']);
  set(r, 'MaxDelay', durationNs(b['max_delay'], 'max_delay'));
  set(r, 'Unlimited', b['unlimited']);
  return r;
}

function network(b: Body): JsonObject {
  const reserved: JsonObject[] = [];
  const dynamic: JsonObject[] = [];
  for (const [label, p] of labeled(b['port'])) {
    const port = { Label: label, Value: p['static'] ?? 0, To: p['to'] ?? 0, HostNetwork: p['host_network'] ?? 'default' };
    (p['static'] !== undefined ? reserved : dynamic).push(port);
  }
  return { Mode: b['mode'] ?? '', ReservedPorts: reserved.length > 0 ? reserved : null, DynamicPorts: dynamic.length > 0 ? dynamic : null };
}

function service(b: Body): JsonObject {
  return {
    Name: b['name'] ?? '',
    PortLabel: b['port'] ?? '',
    Tags: b['tags'] ?? null,
    Provider: b['provider'] ?? 'consul',
    Checks: blocks(b['check']).map((c) => ({
      Name: c['name'] ?? '',
      Type: c['type'] ?? '',
      Path: c['path'] ?? '',
      Interval: durationNs(c['interval'], 'interval') ?? 0,
      Timeout: durationNs(c['timeout'], 'timeout') ?? 0,
    })),
  };
}

function task(name: string, b: Body): JsonObject {
  const t: JsonObject = { Name: name, Driver: b['driver'] ?? '' };
  set(t, 'User', b['user']);
  const config = blocks(b['config'])[0];
  set(t, 'Config', config);
  set(t, 'Env', strMap(b['env']));
  set(t, 'Meta', strMap(b['meta']));
  const res = blocks(b['resources'])[0];
  if (res) {
    const r: JsonObject = {};
    set(r, 'CPU', res['cpu']);
    set(r, 'Cores', res['cores']);
    set(r, 'MemoryMB', res['memory']);
    set(r, 'MemoryMaxMB', res['memory_max']);
    set(r, 'DiskMB', res['disk']);
    t['Resources'] = r;
  }
  const cs = blocks(b['constraint']).map(constraint);
  if (cs.length > 0) t['Constraints'] = cs;
  const as = blocks(b['affinity']).map(affinity);
  if (as.length > 0) t['Affinities'] = as;
  const services = blocks(b['service']).map(service);
  if (services.length > 0) t['Services'] = services;
  const artifacts = blocks(b['artifact']).map((a) => ({ GetterSource: a['source'] ?? '', RelativeDest: a['destination'] ?? '', GetterOptions: strMap(a['options']) ?? null, GetterMode: a['mode'] ?? 'any' }));
  if (artifacts.length > 0) t['Artifacts'] = artifacts;
  const templates = blocks(b['template']).map((x) => ({ EmbeddedTmpl: x['data'] ?? '', SourcePath: x['source'] ?? '', DestPath: x['destination'] ?? '', ChangeMode: x['change_mode'] ?? 'restart', ChangeSignal: x['change_signal'] ?? '' }));
  if (templates.length > 0) t['Templates'] = templates;
  set(t, 'KillTimeout', durationNs(b['kill_timeout'], 'kill_timeout'));
  set(t, 'KillSignal', b['kill_signal']);
  set(t, 'ShutdownDelay', durationNs(b['shutdown_delay'], 'shutdown_delay'));
  set(t, 'Leader', b['leader']);
  const lifecycle = blocks(b['lifecycle'])[0];
  if (lifecycle) t['Lifecycle'] = { Hook: lifecycle['hook'] ?? '', Sidecar: lifecycle['sidecar'] === true };
  const logs = blocks(b['logs'])[0];
  if (logs) t['LogConfig'] = { MaxFiles: logs['max_files'] ?? 10, MaxFileSizeMB: logs['max_file_size'] ?? 10, Disabled: logs['disabled'] === true };
  const payload = blocks(b['dispatch_payload'])[0];
  if (payload) t['DispatchPayload'] = { File: payload['file'] ?? '' };
  return t;
}

function group(name: string, b: Body): JsonObject {
  const g: JsonObject = { Name: name };
  set(g, 'Count', b['count']);
  const cs = blocks(b['constraint']).map(constraint);
  if (cs.length > 0) g['Constraints'] = cs;
  const as = blocks(b['affinity']).map(affinity);
  if (as.length > 0) g['Affinities'] = as;
  const ss = blocks(b['spread']).map(spread);
  if (ss.length > 0) g['Spreads'] = ss;
  set(g, 'Update', update(blocks(b['update'])[0]));
  set(g, 'Migrate', migrate(blocks(b['migrate'])[0]));
  set(g, 'ReschedulePolicy', reschedule(blocks(b['reschedule'])[0]));
  const restart = blocks(b['restart'])[0];
  if (restart) {
    g['RestartPolicy'] = {
      Attempts: restart['attempts'] ?? 2,
      Interval: durationNs(restart['interval'], 'interval') ?? 1_800_000_000_000,
      Delay: durationNs(restart['delay'], 'delay') ?? 15_000_000_000,
      Mode: restart['mode'] ?? 'fail',
    };
  }
  const disk = blocks(b['ephemeral_disk'])[0];
  if (disk) g['EphemeralDisk'] = { SizeMB: disk['size'] ?? 300, Sticky: disk['sticky'] === true, Migrate: disk['migrate'] === true };
  const nets = blocks(b['network']).map(network);
  if (nets.length > 0) g['Networks'] = nets;
  const services = blocks(b['service']).map(service);
  if (services.length > 0) g['Services'] = services;
  set(g, 'Meta', strMap(b['meta']));
  const scaling = blocks(b['scaling'])[0];
  if (scaling) g['Scaling'] = { Min: scaling['min'] ?? g['Count'] ?? 1, Max: scaling['max'] ?? 0, Enabled: scaling['enabled'] !== false, Policy: blocks(scaling['policy'])[0] ?? null, Type: 'horizontal' };
  g['Tasks'] = labeled(b['task']).map(([n, t]) => task(n, t));
  return g;
}

const REF = /\$\{(var|local)\.([A-Za-z_][A-Za-z0-9_-]*)\}/g;
const EXACT = /^\$\{(var|local)\.([A-Za-z_][A-Za-z0-9_-]*)\}$/;

function substitute(v: unknown, scope: { var: JsonObject; local: JsonObject }): unknown {
  if (typeof v === 'string') {
    const exact = EXACT.exec(v);
    if (exact) {
      const table = scope[exact[1] as 'var' | 'local'];
      const key = exact[2] as string;
      if (!(key in table)) throw new BadRequestError(`Error getting job struct: Unknown variable: There is no variable named "${key}".`);
      return table[key];
    }
    return v.replace(REF, (all, kind: 'var' | 'local', key: string) => {
      const table = scope[kind];
      if (!(key in table)) throw new BadRequestError(`Error getting job struct: Unknown variable: There is no variable named "${key}".`);
      const x = table[key];
      return typeof x === 'string' ? x : JSON.stringify(x);
    });
  }
  if (Array.isArray(v)) return v.map((x) => substitute(x, scope));
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v as JsonObject).map(([k, x]) => [k, substitute(x, scope)]));
  return v;
}

/** How deep a job file may nest blocks and values (the request-body policy's 128 levels). */
const MAX_HCL_DEPTH = 128;

/** Whether `v` nests deeper than `max` levels (iterative: no recursion on hostile input). */
function nestedDeeper(v: unknown, max: number): boolean {
  const stack: Array<[unknown, number]> = [[v, 1]];
  while (stack.length > 0) {
    const [x, depth] = stack.pop() as [unknown, number];
    if (x === null || typeof x !== 'object') continue;
    if (depth > max) return true;
    for (const child of Array.isArray(x) ? x : Object.values(x as JsonObject)) stack.push([child, depth + 1]);
  }
  return false;
}

/**
 * The deepest nesting of `{`, `[` and `(` in HCL text, outside quoted strings and comments.
 * HashiCorp's parser recurses per level and fails past a few thousand with a stack overflow
 * reported as a diagnostic at 0,0: such input is refused first, with a clear message.
 */
function bracketDepth(text: string): number {
  let depth = 0;
  let max = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      for (i++; i < text.length && text[i] !== '"'; i++) if (text[i] === '\\') i++;
    } else if (c === '#' || (c === '/' && text[i + 1] === '/')) {
      while (i < text.length && text[i] !== '\n') i++;
    } else if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      i = end === -1 ? text.length : end + 1;
    } else if (c === '{' || c === '[' || c === '(') {
      if (++depth > max) max = depth;
    } else if (c === '}' || c === ']' || c === ')') {
      depth = Math.max(0, depth - 1);
    }
  }
  return max;
}

async function parseText(text: string, file: string): Promise<JsonObject> {
  if (bracketDepth(text) > MAX_HCL_DEPTH) throw new BadRequestError(`Failed to parse job: ${file}: blocks and values nested deeper than ${MAX_HCL_DEPTH} levels`);
  try {
    const doc = (await parseHcl(text, file)) as JsonObject;
    // The conversion below walks the document recursively.
    if (nestedDeeper(doc, MAX_HCL_DEPTH)) throw new BadRequestError(`Failed to parse job: ${file}: blocks and values nested deeper than ${MAX_HCL_DEPTH} levels`);
    return doc;
  } catch (e) {
    if (e instanceof HclParseError) {
      const d = e.diagnostics.map((x) => `${x.file}:${x.line ?? 0},${x.column ?? 0}: ${x.summary}${x.detail ? `; ${x.detail}` : ''}`).join('; ');
      throw new BadRequestError(`Failed to parse job: ${d}`);
    }
    throw e;
  }
}

/** Parses an HCL2 job file into the API's Job JSON (not canonicalised). */
export async function parseJobHcl(text: string, variables = ''): Promise<JsonObject> {
  const doc = await parseText(text, 'input.hcl');
  const vars: JsonObject = {};
  for (const [name, b] of labeled(doc['variable'])) if (b['default'] !== undefined) vars[name] = b['default'];
  if (variables.trim() !== '') Object.assign(vars, await parseText(variables, 'input.vars.hcl'));
  const locals: JsonObject = {};
  for (const b of blocks(doc['locals'])) Object.assign(locals, substitute(b, { var: vars, local: locals }) as JsonObject);
  const jobs = labeled(doc['job']);
  if (jobs.length === 0) throw new BadRequestError('Error getting job struct: Missing job block: A job block is required');
  if (jobs.length > 1) throw new BadRequestError('Error getting job struct: Duplicate job block: Only one job block is allowed');
  const [id, raw] = jobs[0] as [string, Body];
  const b = substitute(raw, { var: vars, local: locals }) as Body;
  const job: JsonObject = { ID: id, Name: b['name'] ?? id };
  set(job, 'Region', b['region']);
  set(job, 'Namespace', b['namespace']);
  set(job, 'Type', b['type']);
  set(job, 'Priority', b['priority']);
  set(job, 'AllAtOnce', b['all_at_once']);
  set(job, 'Datacenters', b['datacenters']);
  set(job, 'NodePool', b['node_pool']);
  set(job, 'Meta', strMap(b['meta']));
  const cs = blocks(b['constraint']).map(constraint);
  if (cs.length > 0) job['Constraints'] = cs;
  const as = blocks(b['affinity']).map(affinity);
  if (as.length > 0) job['Affinities'] = as;
  const ss = blocks(b['spread']).map(spread);
  if (ss.length > 0) job['Spreads'] = ss;
  set(job, 'Update', update(blocks(b['update'])[0]));
  set(job, 'Migrate', migrate(blocks(b['migrate'])[0]));
  set(job, 'Reschedule', reschedule(blocks(b['reschedule'])[0]));
  const periodic = blocks(b['periodic'])[0];
  if (periodic) {
    job['Periodic'] = {
      Enabled: periodic['enabled'] !== false,
      Spec: periodic['cron'] ?? '',
      Specs: periodic['crons'] ?? null,
      SpecType: 'cron',
      ProhibitOverlap: periodic['prohibit_overlap'] === true,
      TimeZone: periodic['time_zone'] ?? 'UTC',
    };
  }
  const param = blocks(b['parameterized'])[0];
  if (param) job['ParameterizedJob'] = { Payload: param['payload'] ?? 'optional', MetaRequired: param['meta_required'] ?? null, MetaOptional: param['meta_optional'] ?? null };
  job['TaskGroups'] = labeled(b['group']).map(([n, g]) => group(n, g));
  return job;
}
