// Differences between two versions of a job (issue 32, item 3: "versions with diffs").
// Nomad computes them server-side (`GET /v1/job/:id/versions?diffs=true`); ours answers an
// empty list there (docs/scheduler.md), so the console compares the versions itself.
export interface FieldChange {
  readonly path: string;
  readonly kind: 'added' | 'deleted' | 'edited';
  readonly before?: string;
  readonly after?: string;
}

/** Bookkeeping every new version changes; not what a user edited. */
const IGNORED = new Set(['Version', 'ModifyIndex', 'JobModifyIndex', 'CreateIndex', 'SubmitTime', 'Status', 'StatusDescription', 'Stable']);

const show = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v));

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Array elements keyed by Name (task groups, tasks) when every element has one. */
function keyed(list: unknown[]): Map<string, unknown> | undefined {
  const m = new Map<string, unknown>();
  for (const el of list) {
    if (!isObject(el) || typeof el.Name !== 'string' || m.has(el.Name)) return undefined;
    m.set(el.Name, el);
  }
  return m;
}

export function diffJobs(before: unknown, after: unknown, path = ''): FieldChange[] {
  const out: FieldChange[] = [];
  const walk = (a: unknown, b: unknown, p: string) => {
    if (a === undefined && b === undefined) return;
    if (a === undefined || a === null) {
      if (b !== undefined && b !== null) out.push({ path: p, kind: 'added', after: show(b) });
      return;
    }
    if (b === undefined || b === null) {
      out.push({ path: p, kind: 'deleted', before: show(a) });
      return;
    }
    if (isObject(a) && isObject(b)) {
      const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
      for (const k of keys) if (!(p === '' && IGNORED.has(k))) walk(a[k], b[k], p ? `${p}.${k}` : k);
      return;
    }
    if (Array.isArray(a) && Array.isArray(b)) {
      const ka = keyed(a);
      const kb = keyed(b);
      if (ka && kb) {
        const names = [...new Set([...ka.keys(), ...kb.keys()])];
        for (const n of names) walk(ka.get(n), kb.get(n), `${p}[${n}]`);
        return;
      }
      if (JSON.stringify(a) !== JSON.stringify(b)) out.push({ path: p, kind: 'edited', before: show(a), after: show(b) });
      return;
    }
    if (JSON.stringify(a) !== JSON.stringify(b)) out.push({ path: p, kind: 'edited', before: show(a), after: show(b) });
  };
  walk(before, after, path);
  return out;
}
