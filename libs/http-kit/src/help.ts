import { z } from 'zod';
import type { FieldSpec } from './fields';
import type { CompiledPath, PathTable } from './path-table';
import { toPathTable } from './path-table';
import type { AnyPathSpec, Operation } from './path-spec';

// `?help=1` and OpenAPI documents, generated from the same declarations as the routes
// (reference section 7: `{"help","openapi","see_also"}`, OpenAPI 3.0.2, x-vault-* extensions).

export interface HelpOptions {
  /** OpenAPI info.title (Vault: "HashiCorp Vault API"). */
  title: string;
  version?: string;
  /** OpenAPI info.description. */
  description?: string;
  /** Markdown for the DESCRIPTION section of root help (the backend's help). */
  backendHelp?: string;
  /** Tags for operations whose spec has none (Vault: "secrets", "system", "auth"). */
  tags?: string[];
  license?: { name: string; url: string };
  /** Body fields are also query parameters of reads and deletes (default true, Vault's
   * request data; see MountOptions.bodyFieldsInQuery). */
  bodyFieldsInQuery?: boolean;
  /**
   * The OpenAPI paths of help are relative to the queried path (Vault's API docs: "paths
   * in the OpenAPI document are relative to the initial path queried"), not to the table
   * root: help on `mounts/secret` documents `/` and `/tune`, the path parameters the query
   * fixes left out. Default false (relative to the table root).
   */
  pathsRelativeToQuery?: boolean;
}

export interface OpenApiDocumentOptions extends HelpOptions {
  /** Prepended to every path (e.g. `/v1/sys`). */
  prefix?: string;
  /** operationIds name the prefixed path (unique across tables merged into one document,
   * as Vault's whole-API document names each by its full path). Default false. */
  prefixInOperationIds?: boolean;
}

export type JsonObject = { [key: string]: unknown };

export interface HelpResponse {
  help: string;
  openapi: JsonObject;
  see_also: null;
}

const DEFAULT_LICENSE = { name: 'Mozilla Public License 2.0', url: 'https://www.mozilla.org/en-US/MPL/2.0' };

/** zod's int() adds the safe-integer bounds at every depth; they are noise in API docs. */
function stripSafeIntBounds(node: unknown): void {
  if (Array.isArray(node)) {
    for (const item of node) stripSafeIntBounds(item);
    return;
  }
  if (typeof node !== 'object' || node === null) return;
  const obj = node as JsonObject;
  if (obj.minimum === Number.MIN_SAFE_INTEGER) delete obj.minimum;
  if (obj.maximum === Number.MAX_SAFE_INTEGER) delete obj.maximum;
  for (const value of Object.values(obj)) stripSafeIntBounds(value);
}

function fieldSchema(field: FieldSpec): JsonObject {
  let schema: JsonObject;
  try {
    schema = z.toJSONSchema(field.schema, { target: 'openapi-3.0', unrepresentable: 'any', io: 'input' }) as JsonObject;
  } catch {
    schema = {};
  }
  delete schema.$schema;
  stripSafeIntBounds(schema);
  const out: JsonObject = { ...schema, description: field.description };
  if (field.default !== undefined) out.default = field.default;
  if (field.deprecated) out.deprecated = true;
  return out;
}

const GO_TYPE: Record<string, string> = { integer: 'int', boolean: 'bool', array: 'slice', object: 'map', number: 'float', string: 'string' };

/** Vault's type words for help text. A union names its widest member (a list beats a map
 * beats a scalar: `policies` as a comma string or a list is a slice); a schema with no
 * type at all (z.unknown(), checked by the handler) is `any`. */
function typeName(field: FieldSpec): string {
  const schema = fieldSchema(field);
  const types: string[] = [];
  if (typeof schema.type === 'string') types.push(schema.type);
  for (const member of [...((schema.anyOf as JsonObject[] | undefined) ?? []), ...((schema.oneOf as JsonObject[] | undefined) ?? [])]) {
    if (typeof member.type === 'string') types.push(member.type);
  }
  if (types.length === 0) return 'any';
  const widest = ['array', 'object', 'string', 'number', 'integer', 'boolean'].find((t) => types.includes(t)) ?? (types[0] as string);
  return GO_TYPE[widest] ?? widest;
}

function slug(openApiPath: string): string {
  const parts = openApiPath.split('/').filter((p) => p !== '').map((p) => p.replace(/[{}]/g, ''));
  return parts.length > 0 ? parts.join('-').replace(/[^A-Za-z0-9-]/g, '-') : 'root';
}

/** How one entry appears in a document: its key, and the path parameters the key fixes. */
interface Placed {
  entry: CompiledPath<unknown>;
  key: string;
  /** Path parameters bound by the queried path (not parameters of the key). */
  bound: ReadonlySet<string>;
  /** The path named in operationIds. */
  idPath: string;
}

const NONE: ReadonlySet<string> = new Set();

function parameter(name: string, where: 'path' | 'query', field: FieldSpec | undefined, required: boolean): JsonObject {
  return {
    name,
    description: field?.description ?? '',
    in: where,
    ...(required ? { required: true } : {}),
    schema: field ? fieldSchema(field) : { type: 'string' },
  };
}

function pathItem(placed: Placed, options: HelpOptions): JsonObject {
  const { entry, bound } = placed;
  const spec = entry.spec;
  const ops = spec.operations;
  const tags = spec.tags ?? options.tags ?? [];
  const fieldOf = (name: string) => spec.fields?.[name];
  const item: JsonObject = { description: spec.summary };
  if (spec.existenceCheck) item['x-vault-create-supported'] = true;
  if (spec.sudo) item['x-vault-sudo'] = true;
  if (spec.unauthenticated) item['x-vault-unauthenticated'] = true;
  const pathParams = entry.compiled.paramNames.filter((n) => !bound.has(n)).map((n) => parameter(n, 'path', fieldOf(n), true));
  if (pathParams.length > 0) item.parameters = pathParams;

  const queryFields = entry.fields.filter((f) => f.spec.in === 'query');
  const bodyFields = entry.fields.filter((f) => f.spec.in === 'body');
  const summaryOf = (op: Operation) => spec.operationSummaries?.[op] ?? spec.summary;
  const base = (op: Operation, verb: string): JsonObject => ({
    summary: summaryOf(op),
    ...(spec.description ? { description: spec.description } : {}),
    operationId: `${verb}-${slug(placed.idPath)}`,
    tags,
  });
  const responses = { '200': { description: 'OK' } };
  // Reads take their data from the query string, so scalar body fields are query
  // parameters there (never required: `required` is about writes).
  const readParams = [
    ...queryFields.map((f) => parameter(f.name, 'query', f.spec, f.spec.required === true)),
    ...(options.bodyFieldsInQuery === false ? [] : bodyFields.filter((f) => f.coercion.kind !== 'other').map((f) => parameter(f.name, 'query', f.spec, false))),
  ];

  if (ops.read || ops.list) {
    const params = [...readParams];
    if (ops.list) {
      params.push(
        ops.read
          ? { name: 'list', description: 'Return a list if `true`', in: 'query', schema: { type: 'string' } }
          : { name: 'list', description: 'Must be set to `true`', in: 'query', required: true, schema: { type: 'string', enum: ['true'] } },
      );
    }
    const get = base(ops.read ? 'read' : 'list', ops.read ? 'read' : 'list');
    if (params.length > 0) get.parameters = params;
    get.responses = responses;
    item.get = get;
  }
  const withBody = (op: Operation, verb: string, contentType: string): JsonObject => {
    const o = base(op, verb);
    const qp = queryFields.map((f) => parameter(f.name, 'query', f.spec, f.spec.required === true));
    if (qp.length > 0) o.parameters = qp;
    if (bodyFields.length > 0) {
      const properties: JsonObject = {};
      for (const f of bodyFields) properties[f.name] = fieldSchema(f.spec);
      const required = bodyFields.filter((f) => f.spec.required === true).map((f) => f.name);
      o.requestBody = {
        required: required.length > 0,
        content: { [contentType]: { schema: { type: 'object', properties, ...(required.length > 0 ? { required } : {}) } } },
      };
    }
    o.responses = responses;
    return o;
  };
  if (ops.create || ops.update) item.post = withBody(ops.update ? 'update' : 'create', 'write', 'application/json');
  if (ops.patch) item.patch = withBody('patch', 'patch', 'application/merge-patch+json');
  if (ops.delete) {
    const del = base('delete', 'delete');
    if (readParams.length > 0) del.parameters = readParams;
    del.responses = { '204': { description: 'empty body' } };
    item.delete = del;
  }
  return item;
}

/** Entries keyed by their path under `prefix` (the table root when empty). */
function placeAll(entries: readonly CompiledPath<unknown>[], options: Pick<OpenApiDocumentOptions, 'prefix' | 'prefixInOperationIds'>): Placed[] {
  const prefix = (options.prefix ?? '').replace(/\/+$/, '');
  return entries.map((entry) => {
    const own = entry.compiled.openApiPath;
    const key = prefix === '' ? own : own === '/' ? prefix : prefix + own;
    return { entry, key, bound: NONE, idPath: options.prefixInOperationIds ? key : own };
  });
}

function document(placed: readonly Placed[], options: HelpOptions): JsonObject {
  const paths: JsonObject = {};
  for (const p of placed) {
    // Two entries placed at one key (a path and its glob fallback): the first declared wins,
    // as it does when routing.
    if (!(p.key in paths)) paths[p.key] = pathItem(p, options);
  }
  return {
    openapi: '3.0.2',
    info: {
      title: options.title,
      description: options.description ?? '',
      version: options.version ?? '1.0.0',
      license: options.license ?? DEFAULT_LICENSE,
    },
    paths,
    components: { schemas: {} },
  };
}

/** A whole-service (or whole-table) OpenAPI 3.0.2 document. */
export function openApiFor<X>(specs: readonly AnyPathSpec<X>[] | PathTable<X>, options: OpenApiDocumentOptions): JsonObject {
  const table = toPathTable(specs);
  return document(placeAll(table.entries as readonly CompiledPath<unknown>[], options), options);
}

function isUnder(entry: CompiledPath<unknown>, relPath: string): boolean {
  if (relPath === '') return true;
  const lit = entry.compiled.literalPrefix;
  return lit === relPath || lit.startsWith(relPath + '/');
}

function rootHelp(entries: readonly CompiledPath<unknown>[], options: HelpOptions): string {
  const lines = [
    '## DESCRIPTION',
    '',
    (options.backendHelp ?? options.description ?? options.title).trim(),
    '',
    '## PATHS',
    '',
    'The following paths are supported by this backend. To view help for',
    'any of the paths below, use the help command with any route matching',
    'the path pattern. Note that depending on the policy of your auth token,',
    'you may or may not be able to access certain paths.',
    '',
  ];
  for (const e of entries) lines.push(`    ${e.compiled.vaultRegex}`, `        ${e.spec.summary}`, '');
  return lines.join('\n');
}

function pathHelp(entry: CompiledPath<unknown>, relPath: string): string {
  const lines = [`Request:        ${relPath}`, `Matching Route: ${entry.compiled.vaultRegex}`, '', entry.spec.summary, ''];
  if (entry.fields.length > 0) {
    lines.push('## PARAMETERS', '');
    for (const f of [...entry.fields].sort((a, b) => a.name.localeCompare(b.name))) {
      lines.push(`    ${f.name} (${typeName(f.spec)})`, '', `        ${f.spec.description}`, '');
    }
  }
  lines.push('## DESCRIPTION', '', (entry.spec.description ?? entry.spec.summary).trim(), '');
  return lines.join('\n');
}

/**
 * Help for `relativePath` within a table: the matching path's help (or the table's root
 * help), and an OpenAPI document for the matching path and every path under it. Paths
 * are relative to the table root, as Vault documents them relative to the mount.
 */
export function helpFor<X>(specs: readonly AnyPathSpec<X>[] | PathTable<X>, relativePath: string, options: HelpOptions): HelpResponse {
  const table = toPathTable(specs) as PathTable<unknown>;
  const rel = trimSlashes(relativePath);
  const matched = rel === '' ? undefined : table.match(rel)?.entry;
  let placed: Placed[];
  if (options.pathsRelativeToQuery) {
    placed = relativePlacements(table, rel, matched);
  } else {
    const selected = table.entries.filter((e) => e === matched || isUnder(e, rel));
    placed = placeAll(selected, {});
  }
  const help = matched ? pathHelp(matched, rel) : rootHelp(placed.map((p) => p.entry), options);
  return { help, openapi: document(placed, options), see_also: null };
}

/** Whether help for `relativePath` has anything to show (a matching path or paths under it). */
export function helpSelects<X>(table: PathTable<X>, relativePath: string, options: Pick<HelpOptions, 'pathsRelativeToQuery'> = {}): boolean {
  const rel = trimSlashes(relativePath);
  if (rel === '') return table.entries.length > 0;
  if (table.match(rel) !== undefined) return true;
  const t = table as PathTable<unknown>;
  return options.pathsRelativeToQuery ? relativePlacements(t, rel, undefined).length > 0 : t.entries.some((e) => isUnder(e, rel));
}

const trimSlashes = (path: string): string => path.replace(/^\/+/, '').replace(/\/+$/, '');

/**
 * Where `entry` sits relative to the queried path `rel`: its pattern's segments are laid
 * over the query's; literals must agree, a `:name` takes one segment, a `+name` or a
 * trailing `*name` the rest of the query. What of the pattern the query leaves over is the
 * key (`/` when nothing); the parameters the query covered are bound. Undefined when the
 * entry is not the queried path or under it (a root catch-all is under nothing).
 */
function relativeTo(entry: CompiledPath<unknown>, querySegments: readonly string[]): { key: string; bound: Set<string> } | undefined {
  const segments = entry.compiled.pattern === '' ? [] : entry.compiled.pattern.split('/');
  const openApi = entry.compiled.openApiPath === '/' ? [] : entry.compiled.openApiPath.slice(1).split('/');
  // A catch-all (`*path` at the root) lies under nothing but the table root: it shows only
  // where it is the route that serves the query.
  const first = segments[0];
  if (querySegments.length > 0 && first !== undefined && (first[0] === '*' || first[0] === '+')) return undefined;
  const bound = new Set<string>();
  let i = 0;
  let j = 0;
  while (i < querySegments.length) {
    const seg = segments[j];
    if (seg === undefined) return undefined;
    const kind = seg[0];
    if (kind === '*' || kind === '+') {
      // Takes the rest of the query (a `*` may take nothing, handled below).
      bound.add(seg.slice(1));
      i = querySegments.length;
      j++;
      break;
    }
    if (kind === ':') bound.add(seg.slice(1));
    else if (seg !== querySegments[i]) return undefined;
    i++;
    j++;
  }
  return { key: '/' + openApi.slice(j).join('/'), bound };
}

function relativePlacements(table: PathTable<unknown>, rel: string, matched: CompiledPath<unknown> | undefined): Placed[] {
  const querySegments = rel === '' ? [] : rel.split('/');
  const placed: Placed[] = [];
  for (const entry of table.entries) {
    const at = relativeTo(entry, querySegments);
    if (at) placed.push({ entry, key: at.key, bound: at.bound, idPath: entry.compiled.openApiPath });
    // The route that serves the query always shows, at the queried path itself.
    else if (entry === matched) placed.push({ entry, key: '/', bound: new Set(entry.compiled.paramNames), idPath: entry.compiled.openApiPath });
  }
  return placed;
}
