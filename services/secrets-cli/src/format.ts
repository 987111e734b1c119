// Output of the CLI: a Key/Value table (the Vault CLI's default), JSON (`-format=json`,
// the API's answer pretty-printed), or one bare value (`-field`).

export type OutputFormat = 'table' | 'json';

export function parseFormat(value: string): OutputFormat {
  const v = value.toLowerCase();
  if (v === 'table' || v === 'json') return v;
  throw new UsageError(`Invalid output format: ${value}`);
}

/** A local error: bad flags, wrong number of arguments, invalid values (exit code 1). */
export class UsageError extends Error {}

/** A value as the table shows it: strings bare, lists as [a b], maps as map[k:v], null as n/a. */
export function cell(value: unknown): string {
  if (value === null || value === undefined) return 'n/a';
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return `[${value.map(cell).join(' ')}]`;
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `map[${entries.map(([k, v]) => `${k}:${cell(v)}`).join(' ')}]`;
  }
  return String(value);
}

/** Columns padded to the widest cell, with a dashed rule under the header. */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const all = [header, header.map((h) => '-'.repeat(h.length)), ...rows];
  const widths = header.map((_, i) => Math.max(...all.map((r) => (r[i] ?? '').length)));
  return all.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i] ?? 0))).join('    ').trimEnd()).join('\n');
}

/** A Key/Value table of a map (keys sorted unless `ordered`). */
export function kvTable(data: Record<string, unknown>, ordered = false): string {
  const keys = ordered ? Object.keys(data) : Object.keys(data).sort();
  return table(['Key', 'Value'], keys.map((k) => [k, cell(data[k])]));
}

export function json(value: unknown): string {
  return JSON.stringify(value, null, 2);
}
