// Job diffs as the anchor's /plan and /versions?diffs=true return them (structs.JobDiff):
// Type Added|Deleted|Edited|None; primitive fields as FieldDiffs (values as strings),
// nested objects, maps and lists as ObjectDiffs, task groups and their tasks by name. A
// task changed in a way that replaces its allocations is annotated "forces create/destroy
// update", otherwise "forces in-place update"; a task group carries its planned Updates.
import { asObject, type JsonObject } from '../shared/common.types';
import type { DesiredUpdates } from './engine.types';
import { groupOf, tasksUpdated } from './job-rules';
import type { Job } from '../features/jobs/jobs.types';

export interface FieldDiff {
  Type: string;
  Name: string;
  Old: string;
  New: string;
  Annotations: string[] | null;
}

export interface ObjectDiff {
  Type: string;
  Name: string;
  Fields: FieldDiff[] | null;
  Objects: ObjectDiff[] | null;
}

export interface TaskDiff extends ObjectDiff {
  Annotations: string[] | null;
}

export interface TaskGroupDiff extends ObjectDiff {
  Tasks: TaskDiff[] | null;
  Updates: Record<string, number> | null;
}

export interface JobDiff extends ObjectDiff {
  ID: string;
  TaskGroups: TaskGroupDiff[] | null;
}

/** Server-owned fields: never part of a diff. */
const IGNORED = new Set(['Status', 'StatusDescription', 'Stable', 'Version', 'SubmitTime', 'CreateIndex', 'ModifyIndex', 'JobModifyIndex', 'TaskGroups', 'Tasks']);

function primitive(v: unknown): boolean {
  return v === null || v === undefined || ['string', 'number', 'boolean'].includes(typeof v);
}

function str(v: unknown): string {
  return v === null || v === undefined ? '' : typeof v === 'string' ? v : String(v);
}

function kind(oldV: unknown, newV: unknown): string {
  const o = oldV !== undefined && oldV !== null;
  const n = newV !== undefined && newV !== null;
  if (!o && n) return 'Added';
  if (o && !n) return 'Deleted';
  return 'Edited';
}

function diffObject(name: string, oldV: unknown, newV: unknown, contextual: boolean): ObjectDiff | null {
  const fields: FieldDiff[] = [];
  const objects: ObjectDiff[] = [];
  if (Array.isArray(oldV) || Array.isArray(newV)) {
    const a = Array.isArray(oldV) ? oldV : [];
    const b = Array.isArray(newV) ? newV : [];
    if (a.every(primitive) && b.every(primitive)) {
      const as = new Set(a.map(str));
      const bs = new Set(b.map(str));
      for (const x of as) if (!bs.has(x)) fields.push({ Type: 'Deleted', Name: name, Old: x, New: '', Annotations: null });
      for (const x of bs) if (!as.has(x)) fields.push({ Type: 'Added', Name: name, Old: '', New: x, Annotations: null });
    } else {
      for (let i = 0; i < Math.max(a.length, b.length); i++) {
        const d = diffObject(name, a[i], b[i], contextual);
        if (d) objects.push(d);
      }
      if (objects.length === 0) return null;
      return objects.length === 1 ? (objects[0] as ObjectDiff) : { Type: 'Edited', Name: name, Fields: null, Objects: objects };
    }
  } else {
    const a = asObject(oldV);
    const b = asObject(newV);
    for (const key of [...new Set([...Object.keys(a), ...Object.keys(b)])].sort()) {
      if (IGNORED.has(key)) continue;
      const x = a[key];
      const y = b[key];
      if (primitive(x) && primitive(y)) {
        if (str(x) !== str(y)) {
          const type = str(x) === '' ? 'Added' : str(y) === '' ? 'Deleted' : 'Edited';
          fields.push({ Type: type, Name: key, Old: str(x), New: str(y), Annotations: null });
        }
      } else {
        const d = diffObject(key, x, y, contextual);
        if (d) objects.push(d);
      }
    }
  }
  if (fields.length === 0 && objects.length === 0) return null;
  return { Type: kind(oldV, newV), Name: name, Fields: fields.length > 0 ? fields : null, Objects: objects.length > 0 ? objects : null };
}

const UPDATE_NAMES: Array<[keyof DesiredUpdates, string]> = [
  ['Place', 'create'],
  ['Stop', 'destroy'],
  ['InPlaceUpdate', 'in-place update'],
  ['DestructiveUpdate', 'create/destroy update'],
  ['Migrate', 'migrate'],
  ['Canary', 'canary'],
  ['Ignore', 'ignore'],
];

function tasksOf(tg: JsonObject | undefined): JsonObject[] {
  return tg && Array.isArray(tg['Tasks']) ? (tg['Tasks'] as unknown[]).map(asObject) : [];
}

/** The diff from `prev` (null: new job) to `next`, with the plan's per-group updates. */
export function jobDiff(prev: Job | null, next: Job, updates: Record<string, DesiredUpdates> = {}): JobDiff {
  const top = diffObject('Job', prev ?? undefined, next, true);
  const names = [...new Set([...(prev?.TaskGroups ?? []).map((g) => String(g['Name'])), ...next.TaskGroups.map((g) => String(g['Name']))])];
  const groups: TaskGroupDiff[] = [];
  for (const name of names) {
    const a = groupOf(prev, name);
    const b = groupOf(next, name);
    const d = diffObject(name, a, b, true);
    const taskNames = [...new Set([...tasksOf(a).map((t) => String(t['Name'])), ...tasksOf(b).map((t) => String(t['Name']))])];
    const destructive = prev !== null && tasksUpdated(prev, next, name);
    const tasks: TaskDiff[] = [];
    for (const tn of taskNames) {
      const ta = tasksOf(a).find((t) => t['Name'] === tn);
      const tb = tasksOf(b).find((t) => t['Name'] === tn);
      const td = diffObject(tn, ta, tb, true);
      if (!td) continue;
      tasks.push({ ...td, Annotations: td.Type === 'Edited' ? [destructive ? 'forces create/destroy update' : 'forces in-place update'] : td.Type === 'Added' ? ['forces create'] : ['forces destroy'] });
    }
    const u = updates[name];
    const upd: Record<string, number> = {};
    if (u) for (const [k, label] of UPDATE_NAMES) if (u[k] && (u[k] as number) > 0) upd[label] = u[k] as number;
    if (!d && tasks.length === 0 && Object.keys(upd).length === 0) continue;
    groups.push({
      Type: d?.Type ?? (tasks.length > 0 ? 'Edited' : 'None'),
      Name: name,
      Fields: d?.Fields ?? null,
      Objects: d?.Objects ?? null,
      Tasks: tasks.length > 0 ? tasks : null,
      Updates: Object.keys(upd).length > 0 ? upd : null,
    });
  }
  const changed = top !== null || groups.some((g) => g.Type !== 'None');
  return {
    Type: prev === null ? 'Added' : changed ? 'Edited' : 'None',
    ID: next.ID,
    Name: 'Job',
    Fields: top?.Fields ?? null,
    Objects: top?.Objects ?? null,
    TaskGroups: groups.length > 0 ? groups : null,
  };
}
