import { coercionKindOf, type CoercionKind, type FieldSpec } from './fields';
import { compilePattern, matchPattern, type CompiledPattern } from './path-pattern';
import type { AnyPathSpec } from './path-spec';

export interface CompiledField {
  name: string;
  spec: FieldSpec;
  coercion: CoercionKind;
}

export interface CompiledPath<X = unknown> {
  spec: AnyPathSpec<X>;
  compiled: CompiledPattern;
  fields: CompiledField[];
  /** Field names read from the request data (body, or query for reads). */
  dataFieldNames: Set<string>;
  pathFields: CompiledField[];
  /** Query and body fields, in declaration order. */
  dataFields: CompiledField[];
  /** The `in: 'query'` fields only (what a read takes when body fields are not read from
   * the query: MountOptions.bodyFieldsInQuery false). */
  queryFields: CompiledField[];
  queryFieldNames: Set<string>;
}

export interface PathMatch<X = unknown> {
  spec: AnyPathSpec<X>;
  params: Record<string, string>;
  entry: CompiledPath<X>;
}

export interface PathTable<X = unknown> {
  readonly entries: readonly CompiledPath<X>[];
  /** First declared spec matching `relativePath` (no leading slash, already decoded). */
  match(relativePath: string): PathMatch<X> | undefined;
}

/**
 * Compiles a table once (patterns, field coercions) so that matching per request is a
 * regex test per entry. Usable without Express: the secrets service routes by mount
 * prefix itself and matches engine paths relative to the mount.
 */
export function compilePathTable<X = unknown>(specs: readonly AnyPathSpec<X>[]): PathTable<X> {
  const entries: CompiledPath<X>[] = specs.map((spec) => {
    const compiled = compilePattern(spec.pattern);
    const fields = Object.entries(spec.fields ?? {}).map(([name, field]) => ({
      name,
      spec: field,
      coercion: coercionKindOf(field.schema),
    }));
    for (const p of compiled.paramNames) {
      const f = spec.fields?.[p];
      if (f && f.in !== 'path') throw new Error(`pattern "${spec.pattern}": field "${p}" must be declared in: 'path'`);
    }
    for (const f of fields) {
      if (f.spec.in === 'path' && !compiled.paramNames.includes(f.name)) {
        throw new Error(`pattern "${spec.pattern}": path field "${f.name}" is not in the pattern`);
      }
    }
    const dataFieldNames = new Set(fields.filter((f) => f.spec.in !== 'path').map((f) => f.name));
    const pathFields = fields.filter((f) => f.spec.in === 'path');
    const dataFields = fields.filter((f) => f.spec.in !== 'path');
    const queryFields = fields.filter((f) => f.spec.in === 'query');
    const queryFieldNames = new Set(queryFields.map((f) => f.name));
    return { spec, compiled, fields, dataFieldNames, pathFields, dataFields, queryFields, queryFieldNames };
  });
  return {
    entries,
    match(relativePath: string) {
      for (const entry of entries) {
        const params = matchPattern(entry.compiled, relativePath);
        if (params) return { spec: entry.spec, params, entry };
      }
      return undefined;
    },
  };
}

export function isPathTable<X>(value: readonly AnyPathSpec<X>[] | PathTable<X>): value is PathTable<X> {
  return !Array.isArray(value);
}

export function toPathTable<X>(value: readonly AnyPathSpec<X>[] | PathTable<X>): PathTable<X> {
  return isPathTable(value) ? value : compilePathTable(value);
}
