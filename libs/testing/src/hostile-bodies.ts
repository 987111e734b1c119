// Property-based hostile request bodies for the sweep (issue 29 item 2): for every declared
// route that takes a JSON body, fast-check draws bodies over the route's declared body fields
// with one hostile value each (NUL, lone surrogates, deep nesting, prototype keys, huge
// strings, numbers beyond 2^53, wrong types). The draws are seeded per route, so a run is
// reproducible and its size bounded. What the kit's body policy must refuse (docs/operations.md
// "Request bodies") must be a 4xx; nothing may be a 5xx, hang or leave the error shape.
import fc from 'fast-check';
import type { SweepRoute } from './hostile-sweep';

export type HostileKind = 'nul' | 'surrogate' | 'deep' | 'inexact-int' | 'overflow' | 'proto' | 'huge' | 'big-exact' | 'wrong-type';

/** Kinds the body policy refuses whatever the route: the answer must be a 4xx. */
export const MUST_REFUSE: ReadonlySet<HostileKind> = new Set(['nul', 'surrogate', 'deep', 'inexact-int', 'overflow']);

export interface HostileBody {
  kind: HostileKind;
  /** Where the value went: `field` or `field.inner`. */
  at: string;
  /** Raw JSON text (hand-built: some values cannot come from JSON.stringify). */
  text: string;
}

export interface BodyCaseOptions {
  /** Nesting the body policy allows (deeper draws must be refused). */
  maxDepth: number;
  /** Bytes over the body limit; huge strings stay well under it. */
  oversizeBytes: number;
  /** Mixed draws per route beyond one per kind (default 4). */
  numRuns?: number;
}

const ascii = fc.string({ unit: fc.constantFrom(...'abcXYZ019 _-./:'.split('')), maxLength: 8 });
const jsonString = (s: string) => JSON.stringify(s);

function valueOf(kind: HostileKind, options: BodyCaseOptions): fc.Arbitrary<string> {
  switch (kind) {
    case 'nul':
      return fc.tuple(ascii, ascii, fc.boolean()).map(([a, b, inKey]) => (inKey ? `{${jsonString(`${a}\u0000${b}`)}:"v"}` : jsonString(`${a}\u0000${b}`)));
    case 'surrogate':
      // A high surrogate not followed by a low one, or a low one alone.
      return fc
        .tuple(ascii, fc.integer({ min: 0xd800, max: 0xdfff }), fc.boolean())
        .map(([a, unit, inKey]) => {
          const s = `"${a.replace(/["\\]/g, '')}\\u${unit.toString(16)}x"`;
          return inKey ? `{${s}:1}` : s;
        });
    case 'deep':
      return fc
        // Deeper than the limit, yet well under the size limit (a 413 would test the other rule).
        .tuple(fc.integer({ min: options.maxDepth + 1, max: Math.max(options.maxDepth + 1, Math.min(options.maxDepth * 40, Math.floor(options.oversizeBytes / 14))) }), fc.boolean())
        .map(([depth, arrays]) => (arrays ? '['.repeat(depth) + ']'.repeat(depth) : '{"a":'.repeat(depth) + '1' + '}'.repeat(depth)));
    case 'inexact-int':
      // Odd integers between 2^53 and 2^63 are never doubles.
      return fc.tuple(fc.bigInt({ min: 2n ** 52n, max: 2n ** 62n }), fc.boolean()).map(([n, negative]) => (negative ? '-' : '') + String(2n * n + 1n));
    case 'overflow':
      return fc.constantFrom('1e400', '-1e400', '1' + '0'.repeat(400), '123e999');
    case 'proto':
      return fc
        .tuple(fc.constantFrom('__proto__', 'constructor', 'prototype'), fc.constantFrom('{"polluted":true}', '"x"', '{"prototype":{"polluted":true}}', 'null', '[1]'))
        .map(([k, v]) => `{${jsonString(k)}:${v}}`);
    case 'huge':
      return fc
        .tuple(fc.constantFrom('x', 'é', '𝄞', '\\n'), fc.integer({ min: 1, max: Math.max(1, Math.floor(options.oversizeBytes / 8)) }))
        .map(([unit, n]) => `"${unit.repeat(Math.ceil(n / unit.length))}"`);
    case 'big-exact':
      // Beyond 2^53 with at most 15 significant digits (nanosecond times of whole
      // milliseconds): the double prints as the literal, so the policy keeps it.
      return fc.integer({ min: 1e12, max: 9e12 }).map((ms) => `${ms}000000`);
    case 'wrong-type':
      return fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v) ?? 'null');
  }
}

const KINDS: HostileKind[] = ['nul', 'surrogate', 'deep', 'inexact-int', 'overflow', 'proto', 'huge', 'big-exact', 'wrong-type'];

function seedOf(text: string): number {
  let h = 2166136261;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619);
  return h | 0;
}

/**
 * Seeded hostile bodies for one route: one per kind, then `numRuns` mixed draws. The value
 * goes into one declared body field (or a field of its own when the route declares none,
 * as KV v1's arbitrary keys), sometimes one object deeper.
 */
export function hostileBodies(route: SweepRoute, bodyFields: readonly string[], options: BodyCaseOptions): HostileBody[] {
  const fields = bodyFields.length > 0 ? [...bodyFields] : ['zz_field'];
  const draw = (kind: HostileKind) =>
    fc.tuple(fc.constantFrom(...fields), fc.boolean(), valueOf(kind, options)).map(([field, nested, value]): HostileBody => {
      const at = nested ? `${field}.inner` : field;
      const member = nested ? `{"inner":${value}}` : value;
      return { kind, at, text: `{${JSON.stringify(field)}:${member}}` };
    });
  const seed = seedOf(`${route.method} ${route.pattern}`);
  const out: HostileBody[] = [];
  KINDS.forEach((kind, i) => out.push(...fc.sample(draw(kind), { seed: seed + i, numRuns: 1 })));
  const mixed = fc.constantFrom(...KINDS).chain(draw);
  out.push(...fc.sample(mixed, { seed: seed + KINDS.length, numRuns: options.numRuns ?? 4 }));
  return out;
}
