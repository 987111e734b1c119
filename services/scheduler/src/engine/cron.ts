// Cron specs as the anchor reads them (hashicorp/cronexpr): 5 fields (minute hour
// day-of-month month day-of-week), 6 (+ year), 7 (second first, + year), the @yearly,
// @annually, @monthly, @weekly, @daily, @midnight and @hourly macros, L, W and #; next
// launches computed in the job's time zone (IANA name, default UTC), via croner.
import { Cron } from 'croner';

export class CronSpecError extends Error {}

const MACROS = new Set(['@yearly', '@annually', '@monthly', '@weekly', '@daily', '@midnight', '@hourly']);

/** The croner pattern for a cronexpr spec (6 fields carry a year, not seconds). */
export function cronPattern(spec: string): string {
  const trimmed = spec.trim();
  if (MACROS.has(trimmed)) return trimmed === '@midnight' ? '@daily' : trimmed;
  const fields = trimmed.split(/\s+/);
  if (fields.length === 6) return `0 ${fields.join(' ')}`;
  if (fields.length === 5 || fields.length === 7) return fields.join(' ');
  throw new CronSpecError(`syntax error in ${fields.length < 5 ? 'day-of-week' : 'year'} field: '${trimmed}'`);
}

export function isValidTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

const cache = new Map<string, Cron>();

function compile(spec: string, timeZone: string): Cron {
  const key = `${timeZone}\u0000${spec}`;
  let c = cache.get(key);
  if (!c) {
    try {
      c = new Cron(cronPattern(spec), { paused: true, timezone: timeZone === '' ? 'UTC' : timeZone });
    } catch (e) {
      if (e instanceof CronSpecError) throw e;
      throw new CronSpecError(e instanceof Error ? e.message.replace(/^CronPattern: /, '') : String(e));
    }
    if (cache.size > 1000) cache.clear();
    cache.set(key, c);
  }
  return c;
}

/** Throws CronSpecError for a spec the anchor would refuse. */
export function parseCron(spec: string): void {
  compile(spec, 'UTC');
}

/** The first launch strictly after `afterMs` (Unix ms), or null when none is left. */
export function nextLaunch(specs: readonly string[], timeZone: string, afterMs: number): number | null {
  let best: number | null = null;
  for (const spec of specs) {
    const next = compile(spec, timeZone).nextRun(new Date(afterMs));
    if (next && (best === null || next.getTime() < best)) best = next.getTime();
  }
  return best;
}
