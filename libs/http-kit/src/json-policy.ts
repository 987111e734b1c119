// The one body-decoding policy every service shares (docs/operations.md "Request bodies").
// JSON.parse does the parsing (V8's parser is not recursive, so nesting cannot overflow the
// stack there; keys such as `__proto__` become own data properties); an iterative walk then
// refuses what the rest of the stack cannot hold faithfully:
// - nesting deeper than the limit (consumers, PostgreSQL's jsonb and Prisma recurse);
// - NUL characters and lone UTF-16 surrogates in keys and strings (PostgreSQL text and
//   jsonb cannot store U+0000, and jsonb refuses unpaired surrogates): a 400 naming the field;
// - numbers that would change on the way in: an integer literal beyond 2^53 that a double
//   does not hold exactly (the API would answer another value than the one sent), and
//   literals beyond the double range (JSON.parse gives Infinity, rendered as `null`).
// A 400 is always the answer; nothing is silently dropped or rounded.
import { BadRequestError, jsonParseMessage } from '@selfstack/errors';

/** Nesting levels (objects and arrays) a request body may have. */
export const DEFAULT_MAX_BODY_DEPTH = 128;

export interface JsonPolicyOptions {
  maxDepth?: number;
}

const SAFE = Number.MAX_SAFE_INTEGER;

/** `a.b[3].c` for the path of a value (keys needing it are quoted as JSON strings). */
export function describeJsonPath(parts: readonly (string | number)[]): string {
  if (parts.length === 0) return '(the body)';
  // A deep path keeps its head and tail: `data.a.a.a...(120 levels)...a.a`.
  if (parts.length > 12) return `${describeJsonPath(parts.slice(0, 4))}...(${parts.length - 8} levels)...${describeJsonPath(parts.slice(-4))}`;
  let out = '';
  for (const p of parts) {
    if (typeof p === 'number') out += `[${p}]`;
    else if (/^[A-Za-z_$][\w$-]*$/.test(p)) out += out === '' ? p : `.${p}`;
    else out += `[${JSON.stringify(p)}]`; // JSON.stringify escapes NUL and lone surrogates
  }
  return out;
}

// ES2024's String.prototype.isWellFormed (Node 20 has it; the ES2023 lib does not type it).
interface WellFormed {
  isWellFormed(): boolean;
}

/** Why a string cannot be stored, or undefined. */
export function unstorableStringReason(s: string): string | undefined {
  if (s.includes('\u0000')) return 'contains a NUL character (\\u0000), which cannot be stored';
  if (!(s as unknown as WellFormed).isWellFormed()) return 'contains a lone UTF-16 surrogate, which is not valid Unicode';
  return undefined;
}

// Frames link to their parent: the path is only built for the error message.
interface Frame {
  value: unknown;
  key: string | number | undefined;
  parent: Frame | undefined;
  depth: number;
}

function pathOf(frame: Frame): (string | number)[] {
  const out: (string | number)[] = [];
  for (let f: Frame | undefined = frame; f && f.key !== undefined; f = f.parent) out.push(f.key);
  return out.reverse();
}

// Objects of parsed bodies that hold a `__proto__` key, or hold one further down: the kit
// puts such keys back where validation (zod's records assign keys, which `__proto__` does
// not survive) lost them. Weak: nothing outlives its request.
const PROTO_CONTAINERS = new WeakSet<object>();

function markProtoContainers(frame: Frame | undefined): void {
  for (let f = frame; f; f = f.parent) {
    const v = f.value as object;
    if (PROTO_CONTAINERS.has(v)) return;
    PROTO_CONTAINERS.add(v);
  }
}

/** Whether a parsed body value holds a `__proto__` key (as data) at any depth. */
export function containsProtoKeys(value: unknown): boolean {
  return typeof value === 'object' && value !== null && PROTO_CONTAINERS.has(value);
}

/**
 * The name a `__proto__` key has while a schema checks a body value. A zod record skips
 * or mis-assigns a `__proto__` key (assigning one sets a prototype), so the key would be
 * dropped without being checked; renamed, it is checked like any key. A NUL never occurs
 * in an accepted key (the policy refuses it), so the name cannot collide.
 */
export const PROTO_KEY_STAND_IN = '\u0000__proto__';

/** A copy of `value` with every `__proto__` key renamed to PROTO_KEY_STAND_IN (only the
 * objects holding one are copied; the rest is shared). */
export function hideProtoKeys(value: unknown): unknown {
  if (!containsProtoKeys(value)) return value;
  const holder: Record<string, unknown> = {};
  const stack: [unknown, object, string | number][] = [[value, holder, 'v']];
  while (stack.length > 0) {
    const [src, parent, key] = stack.pop() as [unknown, object, string | number];
    let copy = src;
    if (containsProtoKeys(src)) {
      if (Array.isArray(src)) {
        const list: unknown[] = new Array<unknown>(src.length);
        copy = list;
        src.forEach((item, i) => stack.push([item, list, i]));
      } else {
        const obj: Record<string, unknown> = {};
        copy = obj;
        // Pushed in reverse: popped (and so defined) in the body's key order.
        const keys = Object.keys(src as object);
        for (let i = keys.length - 1; i >= 0; i--) {
          const k = keys[i] as string;
          stack.push([(src as Record<string, unknown>)[k], obj, k === '__proto__' ? PROTO_KEY_STAND_IN : k]);
        }
      }
    }
    if (Array.isArray(parent)) (parent as unknown[])[key as number] = copy;
    else (parent as Record<string, unknown>)[key as string] = copy;
  }
  return holder['v'];
}

/** Renames PROTO_KEY_STAND_IN keys of a schema's output back to `__proto__` (own data
 * properties), in place. */
export function restoreProtoKeys<T>(value: T): T {
  const stack: unknown[] = [value];
  const seen = new Set<object>();
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v !== 'object' || v === null || seen.has(v)) continue;
    seen.add(v);
    if (Array.isArray(v)) {
      for (const item of v) stack.push(item);
      continue;
    }
    const o = v as Record<string, unknown>;
    if (Object.hasOwn(o, PROTO_KEY_STAND_IN)) {
      Object.defineProperty(o, '__proto__', { value: o[PROTO_KEY_STAND_IN], enumerable: true, writable: true, configurable: true });
      delete o[PROTO_KEY_STAND_IN];
    }
    for (const k of Object.keys(o)) stack.push(o[k]);
  }
  return value;
}

function fail(message: string): never {
  throw new BadRequestError(jsonParseMessage(message));
}

/**
 * Checks a parsed body against the policy without recursion; `source` is the JSON text it
 * came from (needed only when an integer beyond 2^53 shows up, to see what was sent).
 */
export function checkJsonValue(root: unknown, source: string | undefined, options: JsonPolicyOptions = {}): void {
  const maxDepth = options.maxDepth ?? DEFAULT_MAX_BODY_DEPTH;
  const stack: Frame[] = [{ value: root, key: undefined, parent: undefined, depth: 0 }];
  let bigIntegers = false;
  while (stack.length > 0) {
    const frame = stack.pop() as Frame;
    const { value, depth } = frame;
    if (typeof value === 'string') {
      const reason = unstorableStringReason(value);
      if (reason) fail(`field ${describeJsonPath(pathOf(frame))} ${reason}`);
      continue;
    }
    if (typeof value === 'number') {
      if (!Number.isFinite(value)) fail(`field ${describeJsonPath(pathOf(frame))}: number out of range`);
      if (Number.isInteger(value) && (value > SAFE || value < -SAFE)) bigIntegers = true;
      continue;
    }
    if (typeof value !== 'object' || value === null) continue;
    if (depth >= maxDepth) fail(`field ${describeJsonPath(pathOf(frame))}: nesting deeper than ${maxDepth} levels`);
    if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push({ value: value[i], key: i, parent: frame, depth: depth + 1 });
      continue;
    }
    const keys = Object.keys(value);
    for (let i = keys.length - 1; i >= 0; i--) {
      const key = keys[i] as string;
      const reason = unstorableStringReason(key);
      if (reason) fail(`key ${JSON.stringify(key)} of field ${describeJsonPath(pathOf(frame))} ${reason}`);
      if (key === '__proto__') markProtoContainers(frame);
      stack.push({ value: (value as Record<string, unknown>)[key], key, parent: frame, depth: depth + 1 });
    }
  }
  if (bigIntegers && source !== undefined) checkIntegerLiterals(source);
}

// A JSON string (skipped) or a number literal; the text was valid JSON already.
const TOKEN_RE = /"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/g;

/**
 * Integer literals beyond 2^53 are accepted when the double they parse to prints as the
 * same literal (e.g. a nanosecond time such as 1764244966123000000, which the API answers
 * unchanged), and refused otherwise (9007199254740993 would come back as ...992).
 */
function checkIntegerLiterals(source: string): void {
  for (const m of source.matchAll(TOKEN_RE)) {
    const tok = m[0];
    if (tok.startsWith('"') || /[.eE]/.test(tok)) continue;
    const n = Number(tok);
    if (Number.isSafeInteger(n)) continue;
    const canonical = tok.replace(/^(-?)0+(?=\d)/, '$1');
    if (String(n) !== canonical) {
      fail(`number ${tok.length > 40 ? `${tok.slice(0, 40)}...` : tok} cannot be represented exactly (integers beyond 2^53 must be exact doubles)`);
    }
  }
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** Bytes -> text, refusing invalid UTF-8 (a lossy decode would change the data). */
export function decodeUtf8(raw: Uint8Array): string {
  try {
    return UTF8.decode(raw);
  } catch {
    throw new BadRequestError(jsonParseMessage('request body is not valid UTF-8'));
  }
}

/** JSON text -> value under the policy. */
export function parseJsonBody(text: string, options: JsonPolicyOptions = {}): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch (err) {
    throw new BadRequestError(jsonParseMessage(err instanceof Error ? err.message : String(err)));
  }
  checkJsonValue(value, text, options);
  return value;
}
