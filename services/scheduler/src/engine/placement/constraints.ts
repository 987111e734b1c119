// Constraint and affinity operands over node targets (the anchor's feasible.go
// resolveTarget/checkConstraint): `${node.unique.id}`, `${node.datacenter}`,
// `${node.unique.name}`, `${node.class}`, `${node.pool}`, `${attr.<name>}`, `${meta.<name>}`
// or a literal; operands =, ==, is, !=, not, <, <=, >, >=, regexp, version, semver,
// set_contains(_all), set_contains_any, is_set, is_not_set (distinct_hosts and
// distinct_property are placement-wide and checked by their own steps).
import { RE2JS } from 're2js';
import { asObject, type JsonObject } from '../../shared/common.types';
import type { Node } from '../../features/nodes/nodes.types';
import { parseVersionConstraint, versionMatches } from './versions';

export interface Constraint {
  LTarget: string;
  RTarget: string;
  Operand: string;
}

export interface Affinity extends Constraint {
  Weight: number;
}

export const DISTINCT_HOSTS = 'distinct_hosts';
export const DISTINCT_PROPERTY = 'distinct_property';

function text(v: unknown): string {
  return typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' ? String(v) : '';
}

/** A constraint from its JSON form (api.Constraint); Operand defaults to `=`. */
export function toConstraint(raw: unknown): Constraint {
  const o = asObject(raw);
  return { LTarget: text(o['LTarget']), RTarget: text(o['RTarget']), Operand: text(o['Operand']) || '=' };
}

export function toAffinity(raw: unknown): Affinity {
  const o = asObject(raw);
  return { ...toConstraint(raw), Weight: typeof o['Weight'] === 'number' ? o['Weight'] : 50 };
}

export function constraintsOf(v: unknown): Constraint[] {
  return Array.isArray(v) ? v.map(toConstraint) : [];
}

export function affinitiesOf(v: unknown): Affinity[] {
  return Array.isArray(v) ? v.map(toAffinity) : [];
}

/** Constraint.String(): the key of ConstraintFiltered. */
export function constraintString(c: Constraint): string {
  return `${c.LTarget} ${c.Operand} ${c.RTarget}`;
}

/** resolveTarget: the value of a target on a node, and whether it is present. */
export function resolveTarget(target: string, node: Node): [string, boolean] {
  if (!target.startsWith('${')) return [target, true];
  switch (target) {
    case '${node.unique.id}':
      return [node.ID, true];
    case '${node.datacenter}':
      return [node.Datacenter, true];
    case '${node.unique.name}':
      return [node.Name, true];
    case '${node.class}':
      return [node.NodeClass ?? '', true];
    case '${node.pool}':
      return [node.NodePool ?? 'default', true];
  }
  const inner = target.endsWith('}') ? target.slice(2, -1) : target.slice(2);
  if (inner.startsWith('attr.')) return lookup(node.Attributes, inner.slice(5));
  if (inner.startsWith('meta.')) return lookup(node['Meta'], inner.slice(5));
  return ['', false];
}

function lookup(map: unknown, key: string): [string, boolean] {
  const m = asObject(map);
  if (!Object.prototype.hasOwnProperty.call(m, key)) return ['', false];
  return [text(m[key]), true];
}

const regexCache = new Map<string, RE2JS | null>();

function compileRegex(pattern: string): RE2JS | null {
  let re = regexCache.get(pattern);
  if (re === undefined) {
    try {
      re = RE2JS.compile(pattern);
    } catch {
      re = null;
    }
    if (regexCache.size > 1000) regexCache.clear();
    regexCache.set(pattern, re);
  }
  return re;
}

function orderCheck(op: string, l: string, r: string): boolean {
  const cmp = (a: number | string, b: number | string): boolean => {
    switch (op) {
      case '<':
        return a < b;
      case '<=':
        return a <= b;
      case '>':
        return a > b;
      default:
        return a >= b;
    }
  };
  // Integers first, then floats, then lexical (the anchor's checkOrder).
  if (/^[+-]?\d+$/.test(l) && /^[+-]?\d+$/.test(r)) return cmp(Number(l), Number(r));
  const fl = Number(l);
  const fr = Number(r);
  if (l.trim() !== '' && r.trim() !== '' && Number.isFinite(fl) && Number.isFinite(fr)) return cmp(fl, fr);
  return cmp(l, r);
}

function setOf(v: string): Set<string> {
  return new Set(v.split(',').map((s) => s.trim()));
}

/** checkConstraint: does the node's (lVal, rVal) pair satisfy the operand? */
export function checkOperand(operand: string, lVal: string, rVal: string, lFound: boolean, rFound: boolean): boolean {
  switch (operand) {
    case DISTINCT_HOSTS:
    case DISTINCT_PROPERTY:
      return true;
    case '=':
    case '==':
    case 'is':
      return lFound && rFound && lVal === rVal;
    case '!=':
    case 'not':
      return !(lFound === rFound && lVal === rVal);
    case '<':
    case '<=':
    case '>':
    case '>=':
      return lFound && rFound && orderCheck(operand, lVal, rVal);
    case 'is_set':
      return lFound;
    case 'is_not_set':
      return !lFound;
    case 'version':
      return lFound && rFound && versionMatches(lVal, rVal, false);
    case 'semver':
      return lFound && rFound && versionMatches(lVal, rVal, true);
    case 'regexp': {
      if (!lFound || !rFound) return false;
      const re = compileRegex(rVal);
      return re !== null && re.matcher(lVal).find();
    }
    case 'set_contains':
    case 'set_contains_all': {
      if (!lFound || !rFound) return false;
      const have = setOf(lVal);
      return [...setOf(rVal)].every((x) => have.has(x));
    }
    case 'set_contains_any': {
      if (!lFound || !rFound) return false;
      const have = setOf(lVal);
      return [...setOf(rVal)].some((x) => have.has(x));
    }
    default:
      return false;
  }
}

export function meetsConstraint(c: Constraint, node: Node): boolean {
  const [l, lOk] = resolveTarget(c.LTarget, node);
  const [r, rOk] = resolveTarget(c.RTarget, node);
  return checkOperand(c.Operand, l, r, lOk, rOk);
}

/** Constraint.Validate: the anchor's messages for a constraint that can never be checked. */
export function validateConstraint(c: Constraint, operandGiven = true): string[] {
  const errs: string[] = [];
  if (!operandGiven || c.Operand === '') errs.push('Missing constraint operand');
  let requireLTarget = true;
  switch (c.Operand) {
    case DISTINCT_HOSTS:
      requireLTarget = false;
      break;
    case 'set_contains':
    case 'set_contains_all':
    case 'set_contains_any':
      if (c.RTarget === '') errs.push('Set contains constraint requires an RTarget');
      break;
    case 'regexp':
      try {
        RE2JS.compile(c.RTarget);
      } catch (e) {
        errs.push(`Regular expression failed to compile: ${e instanceof Error ? e.message : String(e)}`);
      }
      break;
    case 'version':
      if (parseVersionConstraint(c.RTarget) === null) errs.push(`Version constraint is invalid: Malformed constraint: ${c.RTarget}`);
      break;
    case 'semver':
      if (parseVersionConstraint(c.RTarget, true) === null) errs.push(`Semver constraint is invalid: improper constraint: ${c.RTarget}`);
      break;
    case DISTINCT_PROPERTY:
      if (c.RTarget !== '') {
        if (!/^\d+$/.test(c.RTarget)) errs.push(`Failed to convert RTarget ${JSON.stringify(c.RTarget)} to uint64: strconv.ParseUint: parsing ${JSON.stringify(c.RTarget)}: invalid syntax`);
        else if (Number(c.RTarget) < 1) errs.push(`Distinct Property must have an allowed count of 1 or greater: ${Number(c.RTarget)} < 1`);
      }
      break;
    case 'is_set':
    case 'is_not_set':
      if (c.RTarget !== '') errs.push(`Operator ${JSON.stringify(c.Operand)} does not support an RTarget`);
      break;
    case '=':
    case '==':
    case 'is':
    case '!=':
    case 'not':
    case '<':
    case '<=':
    case '>':
    case '>=':
      if (c.RTarget === '') errs.push(`Operator ${JSON.stringify(c.Operand)} requires an RTarget`);
      break;
    default:
      errs.push(`Unknown constraint type ${JSON.stringify(c.Operand)}`);
  }
  if (requireLTarget && c.LTarget === '') errs.push('no attribute provided but is required by operator');
  return errs;
}

/** Affinity.Validate. */
export function validateAffinity(a: Affinity): string[] {
  if ([DISTINCT_HOSTS, DISTINCT_PROPERTY].includes(a.Operand)) return [`Unknown affinity operator ${JSON.stringify(a.Operand)}`];
  const errs = validateConstraint(a);
  if (a.Weight === 0) errs.push('Affinity weight cannot be zero');
  if (a.Weight > 100 || a.Weight < -100) errs.push(`Affinity weight must be within the range [-100,100]`);
  return errs;
}

export function distinctHostsEnabled(c: Constraint): boolean {
  return c.Operand === DISTINCT_HOSTS && !['false', '0', 'f', 'F', 'FALSE', 'False'].includes(c.RTarget);
}

export type { JsonObject };
