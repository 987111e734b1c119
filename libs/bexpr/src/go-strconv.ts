// The few Go strconv behaviours go-bexpr relies on, reproduced so that filter values are
// coerced and quoted exactly as Nomad does (spec: "Filter expressions"; reference §7).
import { parseGoBool } from '@selfstack/config';

const SYNTAX = 'invalid syntax';
const RANGE = 'value out of range';

export class NumError extends Error {
  constructor(
    readonly func: string,
    readonly input: string,
    readonly reason: 'invalid syntax' | 'value out of range',
  ) {
    super(`strconv.${func}: parsing ${goQuote(input)}: ${reason}`);
  }
  get isSyntax(): boolean {
    return this.reason === SYNTAX;
  }
}

/** strconv.Quote (also what %q and %#v print for a string). */
export function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0) ?? 0;
    switch (ch) {
      case '"':
        out += '\\"';
        continue;
      case '\\':
        out += '\\\\';
        continue;
      case '\n':
        out += '\\n';
        continue;
      case '\t':
        out += '\\t';
        continue;
      case '\r':
        out += '\\r';
        continue;
      case '\x07':
        out += '\\a';
        continue;
      case '\b':
        out += '\\b';
        continue;
      case '\f':
        out += '\\f';
        continue;
      case '\v':
        out += '\\v';
        continue;
    }
    if (c < 0x20 || c === 0x7f) out += '\\x' + c.toString(16).padStart(2, '0');
    else if ((c >= 0x80 && c < 0xa0) || c === 0xfffd) out += '\\u' + c.toString(16).padStart(4, '0');
    else out += ch;
  }
  return out + '"';
}

/** strconv.Unquote for double-quoted and back-quoted literals; null on invalid syntax. */
export function goUnquote(s: string): string | null {
  if (s.length < 2) return null;
  const q = s[0];
  if (q !== s[s.length - 1]) return null;
  const body = s.slice(1, -1);
  if (q === '`') {
    if (body.includes('`')) return null;
    return body.replace(/\r/g, '');
  }
  if (q !== '"') return null;
  if (body.includes('\n')) return null;
  let out = '';
  for (let i = 0; i < body.length; ) {
    const ch = body[i] as string;
    if (ch === '"') return null;
    if (ch !== '\\') {
      out += ch;
      i++;
      continue;
    }
    const e = body[i + 1];
    if (e === undefined) return null;
    const simple: Record<string, string> = { a: '\x07', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v', '\\': '\\', '"': '"' };
    if (simple[e] !== undefined) {
      out += simple[e];
      i += 2;
      continue;
    }
    if (e === 'x' || e === 'u' || e === 'U') {
      const n = e === 'x' ? 2 : e === 'u' ? 4 : 8;
      const hex = body.slice(i + 2, i + 2 + n);
      if (hex.length !== n || !/^[0-9a-fA-F]+$/.test(hex)) return null;
      const v = parseInt(hex, 16);
      if (e === 'x') out += String.fromCharCode(v);
      else {
        if (v > 0x10ffff || (v >= 0xd800 && v < 0xe000)) return null;
        out += String.fromCodePoint(v);
      }
      i += 2 + n;
      continue;
    }
    if (e >= '0' && e <= '7') {
      const oct = body.slice(i + 1, i + 4);
      if (!/^[0-7]{3}$/.test(oct)) return null;
      const v = parseInt(oct, 8);
      if (v > 255) return null;
      out += String.fromCharCode(v);
      i += 4;
      continue;
    }
    return null;
  }
  return out;
}

function underscoreOK(s: string): boolean {
  // Go's rule: underscores only with a base prefix, each between digits (or after the prefix).
  let saw = '^';
  let i = 0;
  if (s.length >= 1 && (s[0] === '-' || s[0] === '+')) s = s.slice(1);
  let hex = false;
  if (s.length >= 2 && s[0] === '0') {
    const p = (s[1] ?? '').toLowerCase();
    if (p === 'x' || p === 'o' || p === 'b') {
      hex = p === 'x';
      i = 2;
      saw = '0';
    }
  }
  for (; i < s.length; i++) {
    const c = s[i] as string;
    if ((c >= '0' && c <= '9') || (hex && /[a-fA-F]/.test(c))) {
      saw = '0';
      continue;
    }
    if (c === '_') {
      if (saw !== '0') return false;
      saw = '_';
      continue;
    }
    if (saw === '_') return false;
    saw = '!';
  }
  return saw !== '_';
}

function parseUintBig(func: string, input: string, s: string): bigint {
  if (s === '') throw new NumError(func, input, SYNTAX);
  let base = 10;
  let digits = s;
  let prefixed = false;
  if (s[0] === '0') {
    const p = (s[1] ?? '').toLowerCase();
    if (s.length >= 3 && p === 'b') {
      base = 2;
      digits = s.slice(2);
      prefixed = true;
    } else if (s.length >= 3 && p === 'o') {
      base = 8;
      digits = s.slice(2);
      prefixed = true;
    } else if (s.length >= 3 && p === 'x') {
      base = 16;
      digits = s.slice(2);
      prefixed = true;
    } else if (s.length > 1) {
      base = 8;
      digits = s.slice(1);
      prefixed = true;
    }
  }
  let n = 0n;
  let sawUnderscore = false;
  for (const c of digits) {
    if (c === '_' && prefixed) {
      sawUnderscore = true;
      continue;
    }
    const d = parseInt(c, 36);
    if (Number.isNaN(d) || d >= base || c === '_') throw new NumError(func, input, SYNTAX);
    n = n * BigInt(base) + BigInt(d);
  }
  if (sawUnderscore && !underscoreOK(s)) throw new NumError(func, input, SYNTAX);
  return n;
}

/** strconv.ParseInt(s, 0, 64). */
export function parseGoInt(s: string): bigint {
  let body = s;
  let neg = false;
  if (body[0] === '+' || body[0] === '-') {
    neg = body[0] === '-';
    body = body.slice(1);
  }
  const n = parseUintBig('ParseInt', s, body);
  const v = neg ? -n : n;
  if (v > 9223372036854775807n || v < -9223372036854775808n) throw new NumError('ParseInt', s, RANGE);
  return v;
}

/** strconv.ParseUint(s, 0, 64). */
export function parseGoUint(s: string): bigint {
  const n = parseUintBig('ParseUint', s, s);
  if (n > 18446744073709551615n) throw new NumError('ParseUint', s, RANGE);
  return n;
}

/** strconv.ParseBool, failing as Go does (a NumError). */
export function strconvParseBool(s: string): boolean {
  const v = parseGoBool(s);
  if (v === undefined) throw new NumError('ParseBool', s, SYNTAX);
  return v;
}

/** strconv.ParseFloat(s, 64) for the decimal, exponent, inf and nan forms. */
export function parseGoFloat(s: string): number {
  const t = s.toLowerCase();
  if (/^[+-]?(inf|infinity)$/.test(t)) return t.startsWith('-') ? -Infinity : Infinity;
  if (/^[+-]?nan$/.test(t)) return NaN;
  if (/^[+-]?0x[0-9a-f_]*(\.[0-9a-f_]*)?p[+-]?[0-9_]+$/.test(t)) {
    const m = /^([+-]?)0x([0-9a-f_]*)(?:\.([0-9a-f_]*))?p([+-]?[0-9_]+)$/.exec(t);
    if (m) {
      const int = (m[2] ?? '').replace(/_/g, '');
      const frac = (m[3] ?? '').replace(/_/g, '');
      if (int === '' && frac === '') throw new NumError('ParseFloat', s, SYNTAX);
      const mant = parseInt(int + frac || '0', 16) / Math.pow(16, frac.length);
      const v = mant * Math.pow(2, parseInt((m[4] ?? '0').replace(/_/g, ''), 10));
      return m[1] === '-' ? -v : v;
    }
  }
  if (!/^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/.test(t)) throw new NumError('ParseFloat', s, SYNTAX);
  const v = Number(t);
  if (!Number.isFinite(v)) throw new NumError('ParseFloat', s, RANGE);
  return v;
}
