// go-bexpr evaluation (hashicorp/go-bexpr evaluate.go + mitchellh/pointerstructure) over
// JSON data. Go decides behaviour from static types (struct vs map, nil pointer vs nil
// map); JSON has no such types, so callers describe them with a DatumSchema. Reference §7.
import { RE2JS } from 're2js';
import { NumError, goQuote, strconvParseBool, parseGoFloat, parseGoInt } from './go-strconv';
import { parseBexpr } from './bexpr.parser';
import { BexprError, type CollectionExpression, type Expression, type MatchExpression, selectorString } from './bexpr.types';

/** Go kinds as reflect.Kind prints them. */
type Kind = 'bool' | 'int' | 'float64' | 'string' | 'map' | 'struct' | 'slice' | 'invalid';

export interface DatumSchema {
  /** Is the JSON object reached through `path` a Go map (missing keys are "not present") or a struct? */
  isMap(path: readonly string[]): boolean;
  /** What a JSON null at `path` is in Go: a nil map, a nil slice, or a nil pointer (kind invalid). */
  nullKind(path: readonly string[]): 'map' | 'slice' | 'invalid';
}

/** Every object a map, every null a nil pointer: go-bexpr over map[string]interface{}. */
export const GENERIC_SCHEMA: DatumSchema = {
  isMap: () => true,
  nullKind: () => 'invalid',
};

interface Local {
  name: string;
  path: string[] | null;
  value: string | number;
}

class NotFound extends Error {}

function escapePart(p: string): string {
  return p.replace(/~/g, '~0').replace(/\//g, '~1');
}

function pointerString(parts: readonly string[]): string {
  if (parts.length === 0) return '';
  return '/' + parts.map(escapePart).join('/');
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function kindOf(v: unknown, path: readonly string[], schema: DatumSchema): Kind {
  if (v === null || v === undefined) return schema.nullKind(path);
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'number') return Number.isInteger(v) ? 'int' : 'float64';
  if (typeof v === 'string') return 'string';
  if (Array.isArray(v)) return 'slice';
  return schema.isMap(path) ? 'map' : 'struct';
}

/** pointerstructure.Pointer.Get. */
function pointerGet(datum: unknown, parts: readonly string[], schema: DatumSchema): unknown {
  let cur: unknown = datum;
  const ptr = pointerString(parts);
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i] as string;
    const here = parts.slice(0, i);
    const kind = kindOf(cur, here, schema);
    if (kind === 'map') {
      if (!isObject(cur) || !Object.prototype.hasOwnProperty.call(cur, part)) {
        throw new NotFound(`${ptr} at part ${i}: couldn't find key ${goQuote(part)}`);
      }
      cur = cur[part];
    } else if (kind === 'struct') {
      const obj = cur as Record<string, unknown>;
      if (!Object.prototype.hasOwnProperty.call(obj, part)) {
        throw new NotFound(`${ptr} at part ${i}: couldn't find key: struct field with name ${goQuote(part)}`);
      }
      cur = obj[part];
    } else if (kind === 'slice') {
      const arr = Array.isArray(cur) ? cur : [];
      let idx: number;
      try {
        idx = Number(parseGoInt(part));
      } catch {
        throw new Error(`${ptr} at part ${i}: couldn't convert value ${goQuote(part)} to type int`);
      }
      if (idx < 0 || idx >= arr.length) {
        throw new Error(`${ptr} at part ${i}: index ${idx} is out of range (length = ${arr.length})`);
      }
      cur = arr[idx];
    } else {
      throw new Error(`${ptr}: at part ${i}, invalid value kind: ${kind}`);
    }
  }
  return cur;
}

interface Resolved {
  present: boolean;
  value: unknown;
  /** the datum path of the value, when it has one (local keys and indexes have none) */
  path: string[] | null;
}

function goTypeName(v: string | number): string {
  return typeof v === 'string' ? 'string' : 'int';
}

class Evaluation {
  constructor(
    private readonly datum: unknown,
    private readonly schema: DatumSchema,
  ) {}

  getValue(path: string[], locals: readonly Local[]): Resolved {
    if (path.length !== 0 && locals.length > 0) {
      for (let i = locals.length - 1; i >= 0; i--) {
        const lv = locals[i] as Local;
        if (path[0] === lv.name) {
          if (lv.path === null) {
            if (path.length > 1) {
              throw new BexprError(
                `${pointerString([lv.name])} references a ${goTypeName(lv.value)} so ${pointerString(path)} is invalid`,
              );
            }
            return { present: true, value: lv.value, path: null };
          }
          path = [...lv.path, ...path.slice(1)];
        }
      }
    }
    try {
      return { present: true, value: pointerGet(this.datum, path, this.schema), path };
    } catch (e) {
      const msg = e instanceof Error ? e.message : String(e);
      if (e instanceof NotFound && path.length >= 2) {
        // evaluateNotPresent: a missing key directly under a map is "not present".
        const parentPath = path.slice(0, -1);
        let parent: unknown;
        try {
          parent = pointerGet(this.datum, parentPath, this.schema);
        } catch {
          parent = undefined;
        }
        if (parent !== undefined && kindOf(parent, parentPath, this.schema) === 'map') {
          return { present: false, value: undefined, path };
        }
      }
      throw new BexprError(`error finding value in datum: ${msg}`);
    }
  }

  evaluate(ast: Expression, locals: readonly Local[]): boolean {
    switch (ast.kind) {
      case 'not':
        return !this.evaluate(ast.operand, locals);
      case 'and':
        return this.evaluate(ast.left, locals) && this.evaluate(ast.right, locals);
      case 'or':
        return this.evaluate(ast.left, locals) || this.evaluate(ast.right, locals);
      case 'match':
        return this.match(ast, locals);
      case 'collection':
        return this.collection(ast, locals);
    }
  }

  private valueKind(r: Resolved): Kind {
    return kindOf(r.value, r.path ?? [], this.schema);
  }

  private match(expr: MatchExpression, locals: readonly Local[]): boolean {
    const r = this.getValue(expr.selector.path, locals);
    if (!r.present) return notPresentDisposition(expr.operator);
    const kind = this.valueKind(r);
    switch (expr.operator) {
      case 'Equal':
        return this.equal(expr, r.value, kind);
      case 'NotEqual':
        return !this.equal(expr, r.value, kind);
      case 'In':
        return this.in(expr, r, kind);
      case 'NotIn':
        return !this.in(expr, r, kind);
      case 'IsEmpty':
        return this.isEmpty(expr, r.value, kind);
      case 'IsNotEmpty':
        return !this.isEmpty(expr, r.value, kind);
      case 'Matches':
        return this.matches(expr, r.value, kind);
      case 'NotMatches':
        return !this.matches(expr, r.value, kind);
      case 'IsNil':
        return this.isNil(expr, r.value, kind);
      case 'IsNotNil':
        return !this.isNil(expr, r.value, kind);
    }
  }

  private equal(expr: MatchExpression, value: unknown, kind: Kind): boolean {
    if (!isPrimitive(kind)) throw new BexprError('unable to find suitable primitive comparison function for matching');
    const mv = coerce(expr.value?.raw ?? '', kind, 'error getting match value in expression: ');
    return primitiveEqual(mv, value, kind);
  }

  private in(expr: MatchExpression, r: Resolved, kind: Kind): boolean {
    const raw = expr.value?.raw ?? '';
    const prefix = 'error getting match value in expression: ';
    const value = r.value;
    switch (kind) {
      case 'map':
        coerce(raw, kind, prefix);
        return isObject(value) && Object.prototype.hasOwnProperty.call(value, raw);
      case 'slice': {
        coerce(raw, kind, prefix);
        const arr = Array.isArray(value) ? value : [];
        const elemKinds = new Set<Kind>();
        arr.forEach((item, i) => {
          if (item !== null) elemKinds.add(kindOf(item, [...(r.path ?? []), String(i)], this.schema));
        });
        if (elemKinds.has('int') && elemKinds.has('float64')) elemKinds.delete('int');
        if (elemKinds.size > 1) {
          // []interface{}: each element coerced on its own; syntax errors skip the element.
          for (let i = 0; i < arr.length; i++) {
            const item = arr[i];
            if (item === null) continue;
            const k = kindOf(item, [...(r.path ?? []), String(i)], this.schema);
            let mv: unknown;
            try {
              mv = coerceRaw(raw, k);
            } catch (e) {
              if (e instanceof NumError && e.isSyntax) continue;
              throw new BexprError('error getting interface slice match value in expression');
            }
            if (!isPrimitive(k)) {
              throw new BexprError(
                `unable to find suitable primitive comparison function for "in" comparison in interface slice: ${k}`,
              );
            }
            if (primitiveEqual(mv, item, k)) return true;
          }
          return false;
        }
        if (arr.length === 0) return false;
        const k = [...elemKinds][0] ?? 'invalid';
        const mv = coerce(raw, k, prefix);
        if (!isPrimitive(k)) throw new BexprError('unable to find suitable primitive comparison function for "in" comparison');
        return arr.some((item) => item !== null && primitiveEqual(mv, item, k));
      }
      case 'string':
        return (value as string).includes(raw);
      default:
        coerce(raw, kind, prefix);
        throw new BexprError(
          `cannot perform in/contains operations on type ${kind} for selector: ${goQuote(selectorString(expr.selector))}`,
        );
    }
  }

  private isEmpty(expr: MatchExpression, value: unknown, kind: Kind): boolean {
    switch (kind) {
      case 'map':
        return !isObject(value) || Object.keys(value).length === 0;
      case 'slice':
        return !Array.isArray(value) || value.length === 0;
      case 'string':
        return (value as string).length === 0;
      default:
        throw new BexprError(
          `cannot perform is-empty operations on type ${kind} for selector: ${goQuote(selectorString(expr.selector))}`,
        );
    }
  }

  private isNil(expr: MatchExpression, value: unknown, kind: Kind): boolean {
    switch (kind) {
      case 'map':
      case 'slice':
        return value === null || value === undefined;
      case 'struct':
        return false;
      case 'invalid':
        return true;
      default:
        throw new BexprError(
          `cannot perform is-nil operations on type ${kind} for selector: ${goQuote(selectorString(expr.selector))}`,
        );
    }
  }

  private matches(expr: MatchExpression, value: unknown, kind: Kind): boolean {
    if (kind !== 'string') {
      throw new BexprError(`value of type ${goTypeOfKind(kind)} is not convertible to []byte`);
    }
    const re = compileGoRegexp(expr.value?.raw ?? '');
    return re.test(value as string);
  }

  private collection(expr: CollectionExpression, locals: readonly Local[]): boolean {
    const r = this.getValue(expr.selector.path, locals);
    if (!r.present) return expr.op === 'ALL';
    const kind = this.valueKind(r);
    if (kind !== 'slice' && kind !== 'map') {
      throw new BexprError(`${selectorString(expr.selector)} is not a list or a map`);
    }
    const b = expr.binding;
    const entries: Array<[string | number, unknown]> =
      kind === 'map'
        ? Object.keys(isObject(r.value) ? r.value : {}).map((k) => [k, null])
        : (Array.isArray(r.value) ? r.value : []).map((_, i) => [i, null]);
    for (const [key] of entries) {
      if (b.mode === 'IndexAndValue' && b.index === b.value) {
        throw new BexprError(`${goQuote(b.index)} cannot be used as a placeholder for both the index and the value`);
      }
      const inner: Local[] = [...locals];
      if (kind === 'map') {
        if (b.default !== '') inner.push({ name: b.default, path: null, value: key });
        if (b.index !== '') inner.push({ name: b.index, path: null, value: key });
        if (b.value !== '') inner.push({ name: b.value, path: [...expr.selector.path, String(key)], value: '' });
      } else {
        if (b.index !== '') inner.push({ name: b.index, path: null, value: key });
        const pathValue = [...expr.selector.path, String(key)];
        if (b.default !== '') inner.push({ name: b.default, path: pathValue, value: '' });
        if (b.value !== '') inner.push({ name: b.value, path: pathValue, value: '' });
      }
      const result = this.evaluate(expr.inner, inner);
      if ((result && expr.op === 'ANY') || (!result && expr.op === 'ALL')) return result;
    }
    return expr.op === 'ALL';
  }
}

function notPresentDisposition(op: MatchExpression['operator']): boolean {
  return op === 'NotEqual' || op === 'NotIn' || op === 'IsEmpty' || op === 'NotMatches' || op === 'IsNil';
}

function isPrimitive(kind: Kind): boolean {
  return kind === 'bool' || kind === 'int' || kind === 'float64' || kind === 'string';
}

function coerceRaw(raw: string, kind: Kind): unknown {
  switch (kind) {
    case 'bool':
      return strconvParseBool(raw);
    case 'int':
      return parseGoInt(raw);
    case 'float64':
      return parseGoFloat(raw);
    default:
      return raw;
  }
}

function coerce(raw: string, kind: Kind, prefix: string): unknown {
  try {
    return coerceRaw(raw, kind);
  } catch (e) {
    throw new BexprError(prefix + (e instanceof Error ? e.message : String(e)));
  }
}

/**
 * The int64 a datum's number stands for. Beyond 2^53 a double cannot hold every integer;
 * the APIs render such a number as its shortest decimal (JSON.stringify), and that decimal
 * is the value a filter names (issue 29 item 3: `SubmitTime == <the value the API
 * returned>` matches), rather than the double's exact binary value (1764244966123000000 is
 * stored as ...122999808).
 */
export function intOfDouble(value: number): bigint {
  const t = Math.trunc(value);
  if (Number.isSafeInteger(t) || Math.abs(t) >= 1e21) return BigInt(t);
  return BigInt(String(t));
}

function primitiveEqual(mv: unknown, value: unknown, kind: Kind): boolean {
  switch (kind) {
    case 'int':
      return typeof value === 'number' && intOfDouble(value) === mv;
    case 'float64':
      return mv === value;
    default:
      return mv === value;
  }
}

function goTypeOfKind(kind: Kind): string {
  switch (kind) {
    case 'map':
      return 'map[string]interface {}';
    case 'slice':
      return '[]interface {}';
    case 'invalid':
      return '<nil>';
    default:
      return kind;
  }
}

const regexCache = new Map<string, RE2JS>();

/**
 * Go's regexp (RE2) semantics via re2js, a linear-time RE2 port: a client-supplied
 * `matches` pattern can never backtrack catastrophically (JS RegExp could block the event
 * loop on `(a+)+$`). Unanchored, like regexp.Match; errors read as Go's.
 */
export function compileGoRegexp(src: string): { test(input: string): boolean } {
  const cached = regexCache.get(src);
  if (cached) return cached;
  let re: RE2JS;
  try {
    re = RE2JS.compile(src);
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    throw new BexprError(`failed to compile regular expression ${goQuote(src)}: ${why}`);
  }
  if (regexCache.size > 1000) regexCache.clear();
  regexCache.set(src, re);
  return re;
}

/** A compiled filter expression (bexpr.CreateEvaluator). */
export class Evaluator {
  private constructor(
    readonly expression: string,
    private readonly ast: Expression,
  ) {}

  static create(expression: string): Evaluator {
    return new Evaluator(expression, parseBexpr(expression));
  }

  /** Evaluator.Evaluate: true when the datum matches; BexprError on evaluation errors. */
  evaluate(datum: unknown, schema: DatumSchema = GENERIC_SCHEMA): boolean {
    return new Evaluation(datum, schema).evaluate(this.ast, []);
  }
}
