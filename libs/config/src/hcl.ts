// HCL2 configuration files (the secrets and controller servers take them, as Vault and
// Boundary do). Parsing is done by @cdktf/hcl2json: HashiCorp's own hcl/v2 parser
// compiled to WASM, so syntax and error positions match the anchors exactly.
//
// Output shape (hcl2json's): attributes are plain values; every block becomes an array
// of bodies, nested under its labels: `listener "tcp" { ... }` twice ->
// `{ listener: { tcp: [{...}, {...}] } }`; `controller { ... }` -> `{ controller: [{...}] }`.
// Expressions that are not literals come back as `"${...}"` strings.
import { readFile } from 'node:fs/promises';
import { parse } from '@cdktf/hcl2json';
import type { z } from 'zod';
import { ConfigError, type ConfigProblem } from './config-error';

export type HclDocument = Record<string, unknown>;

export interface HclDiagnostic {
  readonly file: string;
  readonly line?: number;
  readonly column?: number;
  readonly summary: string;
  readonly detail: string;
}

export class HclParseError extends ConfigError {
  readonly file: string;
  readonly diagnostics: readonly HclDiagnostic[];

  constructor(file: string, diagnostics: readonly HclDiagnostic[]) {
    const problems: ConfigProblem[] = diagnostics.map((d) => ({
      where: d.line === undefined ? d.file : `${d.file}:${d.line}:${d.column ?? 1}`,
      message: d.detail ? `${d.summary}: ${d.detail}` : d.summary,
    }));
    super(`cannot parse HCL file ${file}:`, problems);
    this.file = file;
    this.diagnostics = diagnostics;
  }
}

// hcl2json reports hcl.Diagnostics joined by Go's formatting:
//   "parse config: [bad.hcl:2,9-3,1: Invalid expression; Expected the start of ...]"
// i.e. "<file>:<line>,<col>-<endline>,<endcol>: <summary>; <detail>" repeated, separated
// by spaces. The file name is ours, so we can anchor on it.
function diagnosticsFrom(message: string, filename: string): HclDiagnostic[] {
  const inner = message.replace(/^parse config: \[/, '').replace(/\]\s*$/, '');
  const escaped = filename.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const head = new RegExp(`${escaped}:(\\d+),(\\d+)(?:-(?:\\d+,)?\\d+)?: `, 'g');
  const starts: { index: number; end: number; line: number; column: number }[] = [];
  for (const m of inner.matchAll(head)) {
    starts.push({ index: m.index, end: m.index + m[0].length, line: Number(m[1]), column: Number(m[2]) });
  }
  if (starts.length === 0) {
    return [{ file: filename, summary: inner.trim() || 'invalid HCL', detail: '' }];
  }
  return starts.map((s, i) => {
    const next = starts[i + 1];
    const text = inner.slice(s.end, next ? next.index : undefined).trim();
    const sep = text.indexOf('; ');
    const summary = sep === -1 ? text : text.slice(0, sep);
    const detail = sep === -1 ? '' : text.slice(sep + 2);
    return { file: filename, line: s.line, column: s.column, summary, detail };
  });
}

/** Parses HCL2 text; `filename` is used in error positions. Throws `HclParseError`. */
export async function parseHcl(text: string, filename: string): Promise<HclDocument> {
  try {
    return (await parse(filename, text)) as HclDocument;
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    throw new HclParseError(filename, diagnosticsFrom(message, filename));
  }
}

/** Reads and parses an HCL2 file. Missing or unreadable files are a ConfigError too. */
export async function loadHclFile(path: string): Promise<HclDocument> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'file not found' : code === 'EACCES' ? 'permission denied' : (err as Error).message;
    throw new ConfigError(`cannot read HCL file ${path}:`, [{ where: path, message: why }]);
  }
  return parseHcl(text, path);
}

/**
 * Checks a parsed document against a zod schema, reporting every issue with its path in
 * the document (`listener.tcp.0.address`) and the file it came from.
 */
export function validateHcl<S extends z.ZodType>(schema: S, doc: HclDocument, filename: string): z.output<S> {
  const result = schema.safeParse(doc);
  if (result.success) return result.data;
  const problems = result.error.issues.map((issue) => ({
    where: `${filename}: ${issue.path.length > 0 ? issue.path.map(String).join('.') : '(top level)'}`,
    message: issue.message,
  }));
  throw new ConfigError(`invalid configuration in ${filename}:`, problems);
}
