// nginx's config syntax (directives, blocks, quoted strings, comments) and its location
// selection, read from infra/nginx. Used by the gateway tests (test/infra) and by `make
// dev`'s same-origin dev gateway (scripts/dev-gateway.ts), which routes by this very
// config instead of a copy of its table.
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

export const NGINX_DIR = resolve(__dirname, '..', 'infra', 'nginx');

export interface Directive {
  readonly name: string;
  readonly args: readonly string[];
  readonly block?: readonly Directive[];
  readonly line: number;
}

function tokenize(text: string, file: string): { value: string; line: number; quoted: boolean }[] {
  const tokens: { value: string; line: number; quoted: boolean }[] = [];
  let i = 0;
  let line = 1;
  while (i < text.length) {
    const c = text[i]!;
    if (c === '\n') {
      line += 1;
      i += 1;
    } else if (/\s/.test(c)) {
      i += 1;
    } else if (c === '#') {
      while (i < text.length && text[i] !== '\n') i += 1;
    } else if (c === '{' || c === '}' || c === ';') {
      tokens.push({ value: c, line, quoted: false });
      i += 1;
    } else if (c === '"' || c === "'") {
      let j = i + 1;
      let value = '';
      while (j < text.length && text[j] !== c) {
        if (text[j] === '\\' && j + 1 < text.length) {
          // nginx's escapes: \" \' \\ stand for the character, \n \r \t for control
          // characters; any other backslash stays as written (regexes).
          const next = text[j + 1]!;
          const escapes: Record<string, string> = { '"': '"', "'": "'", '\\': '\\', n: '\n', r: '\r', t: '\t' };
          value += escapes[next] ?? `\\${next}`;
          j += 2;
        } else {
          if (text[j] === '\n') line += 1;
          value += text[j];
          j += 1;
        }
      }
      if (j >= text.length) throw new Error(`${file}:${line}: unterminated string`);
      tokens.push({ value, line, quoted: true });
      i = j + 1;
    } else {
      let j = i;
      // `{` inside a regex token (e.g. `\d{2}`) is part of the word in nginx when it is
      // not followed by whitespace; our configs do not use that, keep it simple.
      while (j < text.length && !/[\s;{}]/.test(text[j]!)) j += 1;
      tokens.push({ value: text.slice(i, j), line, quoted: false });
      i = j;
    }
  }
  return tokens;
}

/** Parses nginx config text into a directive tree; throws on unbalanced braces. */
export function parseNginx(text: string, file = 'nginx.conf'): Directive[] {
  const tokens = tokenize(text, file);
  let pos = 0;
  const parseBlock = (depth: number): Directive[] => {
    const out: Directive[] = [];
    while (pos < tokens.length) {
      const t = tokens[pos]!;
      if (t.value === '}' && !t.quoted) {
        if (depth === 0) throw new Error(`${file}:${t.line}: unexpected }`);
        pos += 1;
        return out;
      }
      const name = t.value;
      const line = t.line;
      pos += 1;
      const args: string[] = [];
      for (;;) {
        const a = tokens[pos];
        if (!a) throw new Error(`${file}:${line}: directive ${name} is not terminated`);
        pos += 1;
        if (!a.quoted && a.value === ';') {
          out.push({ name, args, line });
          break;
        }
        if (!a.quoted && a.value === '{') {
          out.push({ name, args, block: parseBlock(depth + 1), line });
          break;
        }
        if (!a.quoted && a.value === '}') throw new Error(`${file}:${a.line}: unexpected } in directive ${name}`);
        args.push(a.value);
      }
    }
    if (depth > 0) throw new Error(`${file}: unbalanced {`);
    return out;
  };
  return parseBlock(0);
}

/** Parses a file of infra/nginx and inlines `include selfstack/*.conf` directives. */
export function loadNginx(relative = 'nginx.conf'): Directive[] {
  const expand = (ds: readonly Directive[]): Directive[] =>
    ds.flatMap((d) => {
      if (d.name === 'include' && d.args[0]?.startsWith('selfstack/')) {
        return expand(parseNginx(readFileSync(join(NGINX_DIR, d.args[0]), 'utf8'), d.args[0]));
      }
      return d.block ? [{ ...d, block: expand(d.block) }] : [d];
    });
  return expand(parseNginx(readFileSync(join(NGINX_DIR, relative), 'utf8'), relative));
}

export function find(ds: readonly Directive[] | undefined, name: string): Directive[] {
  return (ds ?? []).filter((d) => d.name === name);
}

export function one(ds: readonly Directive[] | undefined, name: string): Directive | undefined {
  return find(ds, name)[0];
}

// nginx's location selection: exact "=", then the longest prefix; a "^~" prefix stops
// there; otherwise regexes in file order; otherwise the longest prefix.
export function selectLocation(server: Directive, path: string): Directive | undefined {
  const locations = find(server.block, 'location');
  let longest: Directive | undefined;
  let longestLen = -1;
  for (const loc of locations) {
    const [mod, arg] = loc.args.length === 2 ? loc.args : [undefined, loc.args[0]];
    if (mod === '=' && path === arg) return loc;
    if ((mod === undefined || mod === '^~') && arg !== undefined && path.startsWith(arg) && arg.length > longestLen) {
      longest = loc;
      longestLen = arg.length;
    }
  }
  if (longest && longest.args[0] === '^~') return longest;
  for (const loc of locations) {
    const [mod, re] = loc.args;
    if ((mod === '~' || mod === '~*') && re !== undefined && new RegExp(re, mod === '~*' ? 'i' : '').test(path)) return loc;
  }
  return longest;
}
