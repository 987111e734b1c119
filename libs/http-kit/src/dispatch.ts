import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response, Router } from 'express';
import { AppError, BadRequestError, MethodNotAllowedError } from '@selfstack/errors';
import { createLogger, type Logger } from '@selfstack/logger';
import { readBody } from './body';
import { PROTO_KEY_STAND_IN, containsProtoKeys, hideProtoKeys, restoreProtoKeys } from './json-policy';
import { coerceValue, parseBool, type FieldMap } from './fields';
import { helpFor, helpSelects, type HelpOptions } from './help';
import { DEFAULT_MAX_REQUEST_BYTES, kitSettingsOf } from './kit-settings';
import { toPathTable, type CompiledField, type CompiledPath, type PathTable } from './path-table';
import { onResponseClose } from './response-close';
import { sendJson, writeResult } from './reply';
import type { AnyPathSpec, Operation, OperationContext, RequestContext } from './path-spec';

/** Writes a handler's result (Vault: envelope; Nomad: index headers; ...). */
export type RespondHook<X = unknown> = (ctx: OperationContext<FieldMap, X>, result: unknown, res: Response) => void | Promise<void>;

export interface MountOptions<X = unknown> {
  /** Mount prefix for mountPaths and for the route-pattern label (e.g. `/v1/sys`). */
  prefix?: string;
  respond?: RespondHook<X>;
  /** Runs after the operation is resolved (existence check included), before validation of
   * query/body and before the handler; throw an AppError to deny. */
  authorize?: (ctx: RequestContext<X>) => void | Promise<void>;
  /** Per-request mount data handed to every hook as `ctx.extra`. */
  extra?: (req: Request, res: Response) => X | Promise<X>;
  /** `?help=1` support; `false` disables it. Default title: "<service> API". */
  help?: Partial<HelpOptions> | false;
  /**
   * Authorizes `?help=1` (Vault requires a token allowed on the path); default: allowed.
   * `path` is the decoded relative path; `res` carries what the caller put in its locals.
   */
  authorizeHelp?: (req: Request, path: string, res: Response) => void | Promise<void>;
  /** No spec matches: throw this error (Vault: "unsupported path"); default: next(). */
  unsupportedPath?: (path: string) => AppError;
  /** Method or operation not supported by the matched spec (default 405 "unsupported operation"). */
  unsupportedOperation?: (method: string, path: string) => AppError;
  /** Validation failures (default 400 with one message per field). */
  invalidRequest?: (messages: string[]) => AppError;
  /**
   * Validate the query and body before `extra`, the existence check and `authorize` run
   * (default: after them). Nomad parses every parameter in its HTTP handler before the RPC
   * checks the token, so a bad parameter answers before a bad token; Vault checks the ACL
   * first.
   */
  validateFirst?: boolean;
  /**
   * Whether `body` fields are read from the query string of reads and deletes (default
   * true: Vault's request data of a GET, LIST or DELETE is its query). `false`: they come
   * from a write's body only (Nomad), and help/OpenAPI say so.
   */
  bodyFieldsInQuery?: boolean;
  logger?: Logger;
}

export interface Dispatcher<X = unknown> {
  /** Serves `relativePath` (as in the URL, no leading slash; decoded by decodePath) from the
   * table; calls next() when no spec matches and no unsupportedPath error is configured. */
  (req: Request, res: Response, next: NextFunction, relativePath: string): Promise<void>;
  /** The same for a path the caller already decoded with decodePath (it routed on it). */
  decoded(req: Request, res: Response, next: NextFunction, decodedPath: string): Promise<void>;
  /**
   * Help for a decoded path whatever the method and query (for a caller that decides what
   * a help request is, as Vault's `help` query on any method): `authorizeHelp`, then the
   * help object, or unsupportedPath (else next()) when the table has nothing at or under
   * the path. Help disabled: next().
   */
  help(req: Request, res: Response, next: NextFunction, decodedPath: string): Promise<void>;
  readonly table: PathTable<X>;
}

let fallbackLogger: Logger | undefined;
function defaultLogger(): Logger {
  fallbackLogger ??= createLogger({ service: 'http-kit', silent: true });
  return fallbackLogger;
}

// Query keys the kit itself interprets; never reported as unknown parameters.
const RESERVED_QUERY = new Set(['list', 'help']);
const WRITE_METHODS = new Set(['PUT', 'POST', 'PATCH']);

class KitContext<X> implements OperationContext<FieldMap, X> {
  operation: Operation = 'read';
  params: Record<string, unknown> = {};
  query: Record<string, unknown> = {};
  body: Record<string, unknown> = {};
  data: Record<string, unknown> = {};
  unknownParams: string[] = [];
  private controller: AbortController | undefined;

  constructor(
    readonly method: string,
    readonly path: string,
    readonly pattern: string,
    readonly rawParams: Record<string, string>,
    public input: Record<string, unknown>,
    readonly req: Request,
    readonly res: Response,
    readonly requestId: string,
    readonly logger: Logger,
    public extra: X,
    readonly spec: AnyPathSpec<X>,
  ) {}

  // Created on first use only: most handlers never look at it, and it is a hot path.
  get signal(): AbortSignal {
    if (!this.controller) {
      const controller = new AbortController();
      this.controller = controller;
      const res = this.res;
      if (!res.writableFinished) {
        if (res.destroyed || this.req.socket?.destroyed) controller.abort();
        else onResponseClose(res, () => { if (!res.writableFinished) controller.abort(); });
      }
    }
    return this.controller.signal;
  }
}

function firstOf(value: unknown): unknown {
  return Array.isArray(value) ? value[0] : value;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function allowedMethods(spec: AnyPathSpec<unknown>): string {
  const ops = spec.operations;
  const out: string[] = [];
  if (ops.read) out.push('GET', 'HEAD');
  if (ops.list) out.push(...(ops.read ? [] : ['GET']), 'LIST');
  if (ops.create || ops.update) out.push('PUT', 'POST');
  if (ops.patch) out.push('PATCH');
  if (ops.delete) out.push('DELETE');
  return out.join(', ');
}

function validateFields(
  fields: readonly CompiledField[],
  source: (field: CompiledField) => unknown,
  target: Record<string, unknown>,
  data: Record<string, unknown>,
  errors: string[],
  isWrite = true,
): void {
  for (const f of fields) {
    const raw = source(f);
    const spec = f.spec;
    const value = raw === undefined ? undefined : spec.decode ? spec.decode(raw) : coerceValue(raw, f.coercion);
    if (value === undefined) {
      if (spec.default !== undefined) {
        target[f.name] = spec.default;
        data[f.name] = spec.default;
      } else if (spec.required && (isWrite || spec.in !== 'body')) {
        // A required body field is required of writes; reads and deletes do not send it.
        errors.push(`missing required field "${f.name}"`);
      }
      continue;
    }
    // `__proto__` keys are data (json-policy.ts): the schema checks them under a stand-in
    // name (a zod record would drop them unchecked), and they come back as own keys.
    const checked = containsProtoKeys(value) ? hideProtoKeys(value) : value;
    const result = spec.schema.safeParse(checked);
    if (result.success) {
      const out = checked === value ? result.data : restoreProtoKeys(result.data);
      target[f.name] = out;
      data[f.name] = out;
    } else if (spec.invalid) {
      throw spec.invalid(raw, f.name);
    } else {
      const detail = result.error.issues
        .map((i) => (i.path.length > 0 ? `${i.path.map((p) => (p === PROTO_KEY_STAND_IN ? '__proto__' : String(p))).join('.')}: ${i.message}` : i.message))
        .join('; ');
      errors.push(`invalid value for field "${f.name}": ${detail}`);
    }
  }
}

/**
 * The query/body fields of one request (the path fields are checked before). Fields land
 * in `ctx.query` or `ctx.body` by declaration; `ctx.data` has them all.
 */
function validateData<X>(
  ctx: KitContext<X>,
  entry: CompiledPath<X>,
  query: Record<string, unknown>,
  isWrite: boolean,
  bodyFieldsInQuery: boolean,
  errors: string[],
): void {
  const input = ctx.input;
  const dataFields = bodyFieldsInQuery || isWrite ? entry.dataFields : entry.queryFields;
  const scratch: Record<string, unknown> = {};
  validateFields(
    dataFields,
    (f) => {
      const fromQuery = f.spec.in === 'query' || !isWrite;
      const v = fromQuery ? query[f.name] : input[f.name];
      return fromQuery && f.coercion.kind !== 'array' ? firstOf(v) : v;
    },
    scratch,
    ctx.data,
    errors,
    isWrite,
  );
  for (const f of dataFields) {
    if (f.name in scratch) (f.spec.in === 'query' ? ctx.query : ctx.body)[f.name] = scratch[f.name];
  }
}

/**
 * The one method table (shared ARCHITECTURE "Routes are data"): GET and HEAD read, GET
 * with a true `list` query value lists, LIST lists, PUT and POST write (create or update,
 * decided by the existence check), PATCH patches, DELETE deletes. Undefined: a method the
 * table does not know.
 */
export function methodOperation(method: string, list?: unknown): Operation | 'write' | undefined {
  switch (method) {
    case 'GET':
      return list !== undefined && parseBool(firstOf(list)) === true ? 'list' : 'read';
    case 'HEAD':
      return 'read';
    case 'LIST':
      return 'list';
    case 'PUT':
    case 'POST':
      return 'write';
    case 'PATCH':
      return 'patch';
    case 'DELETE':
      return 'delete';
    default:
      return undefined;
  }
}

/**
 * A relative path as the URL carries it, decoded: a malformed escape and a NUL (PostgreSQL
 * text cannot hold one: a `%00` path parameter would fail its query with a 500) are 400s.
 */
export function decodePath(path: string): string {
  if (!path.includes('%')) return path;
  let decoded: string;
  try {
    decoded = decodeURIComponent(path);
  } catch {
    throw new BadRequestError('invalid URL escape in path');
  }
  // PostgreSQL text cannot hold NUL: a `%00` path parameter would fail its query with a 500.
  if (decoded.includes('\u0000')) throw new BadRequestError('invalid path: contains a NUL character');
  return decoded;
}

const hasNul = (v: unknown): boolean =>
  typeof v === 'string' ? v.includes('\u0000') : Array.isArray(v) ? v.some(hasNul) : typeof v === 'object' && v !== null && Object.values(v).some(hasNul);

/** Query values reach SQL too (filters, prefixes): NUL is refused there as in the path. */
function checkQuery(query: Record<string, unknown>): void {
  for (const key in query) if (hasNul(query[key]) || key.includes('\u0000')) throw new BadRequestError('invalid query: contains a NUL character');
}

function joinPattern(prefix: string, pattern: string): string {
  const p = prefix.replace(/\/+$/, '');
  return pattern === '' ? p || '/' : `${p}/${pattern}`;
}


/**
 * The method table, validation, existence check, authorization and response writing for
 * one table, callable from any Express handler with a relative path.
 */
export function createDispatcher<X = unknown>(specs: readonly AnyPathSpec<X>[] | PathTable<X>, options: MountOptions<X> = {}): Dispatcher<X> {
  const table: PathTable<X> = toPathTable(specs);
  const helpOptions = options.help === false ? undefined : (options.help ?? {});
  const prefix = options.prefix ?? '';
  const patterns = new Map<CompiledPath<X>, string>(table.entries.map((e) => [e, joinPattern(prefix, e.compiled.pattern)]));
  const invalid = options.invalidRequest ?? ((messages: string[]) => new BadRequestError(messages));
  const unsupportedOperation = options.unsupportedOperation ?? (() => new MethodNotAllowedError('unsupported operation'));
  const validateFirst = options.validateFirst ?? false;
  const bodyFieldsInQuery = options.bodyFieldsInQuery ?? true;

  const writeHelp = (req: Request, res: Response, path: string): void => {
    const settings = kitSettingsOf(req);
    const title = helpOptions?.title ?? `${settings?.service ?? 'service'} API`;
    const help = helpFor(table, path, { ...helpOptions, title, bodyFieldsInQuery });
    sendJson(res, 200, JSON.stringify(help) + (settings?.flavour === 'vault' ? '\n' : ''));
  };
  const help = async (req: Request, res: Response, next: NextFunction, path: string): Promise<void> => {
    try {
      if (helpOptions === undefined) {
        next();
        return;
      }
      if (options.authorizeHelp) await options.authorizeHelp(req, path, res);
      if (!helpSelects(table, path, helpOptions)) {
        if (options.unsupportedPath) throw options.unsupportedPath(path);
        next();
        return;
      }
      writeHelp(req, res, path);
    } catch (err) {
      next(err);
    }
  };

  const serve = async (req: Request, res: Response, next: NextFunction, path: string): Promise<void> => {
    try {
      const query = req.query as Record<string, unknown>;
      checkQuery(query);
      // `?help=1` works on any path of the table, also on prefixes no spec matches (the
      // mount root); it answers the raw help object, never through the respond hook.
      if (
        helpOptions !== undefined &&
        (req.method === 'GET' || req.method === 'HEAD') &&
        query.help !== undefined &&
        parseBool(firstOf(query.help)) === true &&
        helpSelects(table, path, helpOptions)
      ) {
        if (options.authorizeHelp) await options.authorizeHelp(req, path, res);
        writeHelp(req, res, path);
        return;
      }
      const m = table.match(path);
      if (!m) {
        if (options.unsupportedPath) throw options.unsupportedPath(path);
        next();
        return;
      }
      const { entry, spec } = m;
      const pattern = patterns.get(entry) ?? spec.pattern;
      (res.locals as Record<string, unknown>).routePattern = pattern;
      const settings = kitSettingsOf(req);
      const method = req.method;
      const ops = spec.operations;

      let operation = methodOperation(method, query.list);
      const supported =
        (operation === 'write' ? Boolean(ops.create || ops.update) : operation !== undefined && Boolean(ops[operation]));
      if (!supported) {
        const err = unsupportedOperation(method, path);
        throw new AppError(err.status, err.messages, { headers: { ...err.headers, Allow: allowedMethods(spec as AnyPathSpec<unknown>) }, expose: err.expose });
      }

      const logger = options.logger ?? settings?.logger ?? defaultLogger();
      const requestId = ((res.locals as Record<string, unknown>).requestId as string | undefined) ?? randomUUID();
      const isWrite = WRITE_METHODS.has(method);

      // Request data: the body for writes, the query string otherwise (as Vault does).
      let input: Record<string, unknown>;
      if (isWrite && spec.body !== 'stream') {
        let body = req.body as unknown;
        if (body === undefined) {
          body = await readBody(req, {
            maxBytes: settings?.maxRequestBytes ?? DEFAULT_MAX_REQUEST_BYTES,
            jsonWithoutContentType: settings?.jsonWithoutContentType ?? false,
            flavour: settings?.flavour ?? 'registry',
            ...(settings?.maxBodyDepth === undefined ? {} : { maxDepth: settings.maxBodyDepth }),
          });
          req.body = body;
        }
        if (body === undefined || body === null) input = {};
        else if (isPlainObject(body)) input = body;
        else if (spec.takesArbitraryInput) input = {};
        else throw invalid(['invalid request body: expected a JSON object']);
      } else {
        input = query;
      }

      // Hooks that answer synchronously are not awaited (each await is a microtask turn).
      let extra: unknown;
      if (!validateFirst && options.extra) {
        extra = options.extra(req, res);
        if (extra instanceof Promise) extra = await extra;
      }
      const ctx = new KitContext<X>(method, path, pattern, m.params, input, req, res, requestId, logger, extra as X, spec);
      // Until the existence check decides, a write is provisionally an update.
      ctx.operation = operation === 'write' ? 'update' : (operation as Operation);

      const errors: string[] = [];
      validateFields(entry.pathFields, (f) => m.params[f.name], ctx.params, ctx.data, errors);
      if (errors.length > 0) throw invalid(errors);
      if (validateFirst) {
        validateData(ctx, entry, query, isWrite, bodyFieldsInQuery, errors);
        if (errors.length > 0) throw invalid(errors);
        if (options.extra) {
          extra = options.extra(req, res);
          ctx.extra = (extra instanceof Promise ? await extra : extra) as X;
        }
      }

      if (operation === 'write') {
        // PUT == POST; the existence check tells create from update so policies can differ.
        if (spec.existenceCheck) operation = (await spec.existenceCheck(ctx)) ? 'update' : 'create';
        else operation = ops.update ? 'update' : 'create';
        if (!ops[operation]) {
          const err = unsupportedOperation(method, path);
          throw new AppError(err.status, err.messages, { headers: { ...err.headers, Allow: allowedMethods(spec as AnyPathSpec<unknown>) }, expose: err.expose });
        }
      }
      const op = operation as Operation;
      ctx.operation = op;
      if (options.authorize) {
        const pending = options.authorize(ctx);
        if (pending) await pending;
      }

      if (!validateFirst) {
        validateData(ctx, entry, query, isWrite, bodyFieldsInQuery, errors);
        if (errors.length > 0) throw invalid(errors);
      }

      if (!spec.takesArbitraryInput) {
        const unknown: string[] = [];
        const known = bodyFieldsInQuery || isWrite ? entry.dataFieldNames : entry.queryFieldNames;
        for (const key of Object.keys(input)) {
          if (!known.has(key) && !(input === query && RESERVED_QUERY.has(key))) unknown.push(key);
        }
        if (unknown.length > 0) ctx.unknownParams = unknown.sort();
      }

      const handler = ops[op] as (c: OperationContext<FieldMap, X>) => unknown;
      const result = await handler.call(ops, ctx);
      if (res.headersSent || res.writableEnded) return;
      if (options.respond) {
        const pending = options.respond(ctx, result, res);
        if (pending) await pending;
      } else writeResult(res, method, result);
    } catch (err) {
      next(err);
    }
  };
  const dispatch = (req: Request, res: Response, next: NextFunction, relativePath: string): Promise<void> => {
    let path: string;
    try {
      path = decodePath(relativePath);
    } catch (err) {
      next(err);
      return Promise.resolve();
    }
    return serve(req, res, next, path);
  };
  return Object.assign(dispatch, { table, decoded: serve, help });
}

/** One table served by an app, as recorded by mountPaths / recordMountedTable. */
export interface MountedTable {
  /** Mount prefix (may hold a `:param` of the service's own routing, e.g. `/v1/:mount`). */
  prefix: string;
  table: PathTable<unknown>;
  /** Distinguishes tables sharing a prefix (e.g. `kv-v1` and `kv-v2`). */
  label?: string;
}

const mountedTables = new WeakMap<object, MountedTable[]>();

/** Records a table served under `router` (mountPaths does it; services that dispatch
 * themselves call it) so that tests can walk every declared route. */
export function recordMountedTable<X>(router: object, entry: { prefix: string; table: PathTable<X>; label?: string }): void {
  let list = mountedTables.get(router);
  if (!list) {
    list = [];
    mountedTables.set(router, list);
  }
  list.push(entry as MountedTable);
}

/** Every table recorded for `router`, in mount order. */
export function mountedPathTables(router: object): readonly MountedTable[] {
  return mountedTables.get(router) ?? [];
}

/** Wires a table into Express under `options.prefix` (default `/`). */
export function mountPaths<X = unknown>(router: Pick<Router, 'use'>, specs: readonly AnyPathSpec<X>[] | PathTable<X>, options: MountOptions<X> = {}): Dispatcher<X> {
  const dispatcher = createDispatcher(specs, options);
  const prefix = options.prefix && options.prefix !== '' ? options.prefix : '/';
  recordMountedTable(router, { prefix, table: dispatcher.table });
  router.use(prefix, (req: Request, res: Response, next: NextFunction) => {
    void dispatcher(req, res, next, req.path.slice(1));
  });
  return dispatcher;
}
