import type { z } from 'zod';
import { parseGoBool } from '@selfstack/config';
import type { AppError } from '@selfstack/errors';

/** Where a field's value comes from. `body` fields are read from the query string for
 * GET/HEAD/LIST/DELETE, as Vault does (request data of read operations is the query). */
export type FieldLocation = 'path' | 'query' | 'body';

export interface FieldSpec<S extends z.ZodType = z.ZodType> {
  /** The value the handler gets (and what `?help=1` and OpenAPI document). */
  schema: S;
  in: FieldLocation;
  description: string;
  required?: boolean;
  default?: z.output<S>;
  deprecated?: boolean;
  /**
   * How the value as received becomes the value `schema` checks, in place of the kit's
   * Go-style weak decoding (`coerceValue`): for an API whose parameters follow rules of
   * their own (Nomad's `stale` is true when present and empty; its JSON bodies are decoded
   * strictly). Returning `undefined` means "absent" (the default applies). Query values
   * arrive as the first string given, body values as parsed JSON.
   */
  decode?: (raw: unknown) => unknown;
  /**
   * The anchor's answer to a value `schema` rejects (e.g. Nomad's `Invalid index`, or its
   * plain 500 for a bad boolean). It is thrown as soon as the field fails: fields are
   * checked in declaration order, so the first bad one answers, as a Go handler parsing one
   * parameter after another does. Without it, the field's message is collected with the
   * others into the mount's `invalidRequest` error.
   */
  invalid?: (raw: unknown, name: string) => AppError;
}

export type FieldMap = Record<string, FieldSpec>;

// Path parameters always have a value when the pattern matched.
type FieldValue<F> = F extends FieldSpec<infer S>
  ? F extends { in: 'path' } | { required: true }
    ? z.output<S>
    : F extends { default: unknown }
      ? z.output<S>
      : z.output<S> | undefined
  : never;

/** Validated values of the fields declared at one location. */
export type FieldValues<F extends FieldMap, L extends FieldLocation> = {
  [K in keyof F as F[K]['in'] extends L ? K : never]: FieldValue<F[K]>;
};

/** All validated values, whatever their location (Vault's FieldData). */
export type AllFieldValues<F extends FieldMap> = { [K in keyof F]: FieldValue<F[K]> };

/** What query strings and form bodies must be coerced to before zod sees them. */
export type CoercionKind =
  | { kind: 'string' }
  | { kind: 'number' }
  | { kind: 'boolean' }
  | { kind: 'array'; element: CoercionKind }
  | { kind: 'other' };

interface ZodInternals {
  _zod?: { def?: { type?: string; innerType?: unknown; in?: unknown; element?: unknown } };
}

const WRAPPERS = new Set(['optional', 'nullable', 'default', 'prefault', 'catch', 'readonly', 'nonoptional', 'lazy']);

/** Reads the zod definition once (at table compile time, never per request). */
export function coercionKindOf(schema: unknown, depth = 0): CoercionKind {
  const def = (schema as ZodInternals)._zod?.def;
  if (!def || depth > 10) return { kind: 'other' };
  const type = def.type ?? '';
  if (WRAPPERS.has(type) && def.innerType !== undefined) return coercionKindOf(def.innerType, depth + 1);
  if (type === 'pipe' && def.in !== undefined) return coercionKindOf(def.in, depth + 1);
  if (type === 'string' || type === 'enum' || type === 'template_literal') return { kind: 'string' };
  if (type === 'number' || type === 'int') return { kind: 'number' };
  if (type === 'boolean') return { kind: 'boolean' };
  if (type === 'array') return { kind: 'array', element: coercionKindOf(def.element, depth + 1) };
  return { kind: 'other' };
}

const NUMBER_RE = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/** A boolean as mapstructure's weak decoding reads one: a bool, a number (non-zero is
 * true), or a string strconv.ParseBool accepts (reference 0.1: `?list=1`). */
export function parseBool(value: unknown): boolean | undefined {
  if (typeof value === 'boolean') return value;
  if (typeof value === 'number') return value !== 0;
  if (typeof value === 'string') return parseGoBool(value);
  return undefined;
}

/**
 * Weak decoding in the manner of Go's mapstructure (WeaklyTypedInput): strings become
 * numbers/booleans when they parse, scalars become strings, a single value is lifted into
 * a list. Values that do not convert are passed through so zod reports the error.
 */
export function coerceValue(value: unknown, kind: CoercionKind): unknown {
  switch (kind.kind) {
    case 'number':
      if (typeof value === 'string' && NUMBER_RE.test(value.trim())) return Number(value.trim());
      if (typeof value === 'boolean') return value ? 1 : 0;
      return value;
    case 'boolean': {
      if (typeof value === 'string' || typeof value === 'number') return parseBool(value) ?? value;
      return value;
    }
    case 'string':
      if (typeof value === 'number' || typeof value === 'boolean') return String(value);
      return value;
    case 'array': {
      const list = Array.isArray(value) ? value : [value];
      return list.map((item) => coerceValue(item, kind.element));
    }
    case 'other':
      return value;
  }
}
