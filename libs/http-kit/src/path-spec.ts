import type { Request, Response } from 'express';
import type { Logger } from '@selfstack/logger';
import type { AllFieldValues, FieldMap, FieldValues } from './fields';

/** The logical operations of the method table (shared ARCHITECTURE "Routes are data"). */
export type Operation = 'read' | 'list' | 'create' | 'update' | 'patch' | 'delete';
export const OPERATIONS: readonly Operation[] = ['read', 'list', 'create', 'update', 'patch', 'delete'];

/** What the existence check and `authorize` see: the operation is resolved, the path
 * parameters are validated, the query/body are not validated yet (`input` is raw). */
export interface RequestContext<X = unknown> {
  operation: Operation;
  /** The HTTP method as received (`LIST` included). */
  method: string;
  /** Request path relative to the table's root, decoded, without leading slash. */
  path: string;
  /** Full route pattern including the mount prefix (the log/metrics label). */
  pattern: string;
  /** Raw, decoded path parameters by name. */
  rawParams: Record<string, string>;
  /** The raw request data: the JSON/form body for PUT/POST/PATCH, else the query. */
  input: Record<string, unknown>;
  req: Request;
  res: Response;
  requestId: string;
  logger: Logger;
  /** Aborted when the client goes away before the response is finished. */
  readonly signal: AbortSignal;
  /** Per-mount data computed by MountOptions.extra (e.g. the secrets mount entry). */
  extra: X;
  spec: AnyPathSpec<X>;
}

export interface OperationContext<F extends FieldMap = FieldMap, X = unknown> extends RequestContext<X> {
  params: FieldValues<F, 'path'>;
  query: FieldValues<F, 'query'>;
  body: FieldValues<F, 'body'>;
  /** Every declared field, whatever its location. */
  data: AllFieldValues<F>;
  /** Input keys no field declares, sorted (for Vault's "ignored these unrecognized parameters"). */
  unknownParams: string[];
}

// Method shorthand keeps handler parameters bivariant, so a table can hold specs with
// different field maps.
export interface Operations<F extends FieldMap, X> {
  read?(ctx: OperationContext<F, X>): unknown;
  list?(ctx: OperationContext<F, X>): unknown;
  create?(ctx: OperationContext<F, X>): unknown;
  update?(ctx: OperationContext<F, X>): unknown;
  patch?(ctx: OperationContext<F, X>): unknown;
  delete?(ctx: OperationContext<F, X>): unknown;
}

export interface PathSpec<F extends FieldMap = FieldMap, X = unknown> {
  pattern: string;
  summary: string;
  description?: string;
  fields?: F;
  operations: Operations<F, X>;
  /** Decides PUT/POST between create (false) and update (true). */
  existenceCheck?(ctx: RequestContext<X>): boolean | Promise<boolean>;
  /** Per-operation summaries for help/OpenAPI (default: the path summary). */
  operationSummaries?: Partial<Record<Operation, string>>;
  /** `stream`: the kit does not read the body (uploads); the handler reads `ctx.req`. */
  body?: 'json' | 'stream';
  /** `stream`: a successful answer is a stream that lasts until the client goes away (the
   * scheduler's event stream); tools that walk the tables must not wait for its end. */
  response?: 'stream';
  /** Arbitrary keys are the data (KV v1 writes): no unknown-parameter reporting. */
  takesArbitraryInput?: boolean;
  /** OpenAPI `x-vault-unauthenticated`. */
  unauthenticated?: boolean;
  /** OpenAPI `x-vault-sudo`. */
  sudo?: boolean;
  tags?: string[];
}

export type AnyPathSpec<X = unknown> = PathSpec<FieldMap, X>;

/** Identity helper that infers field types for the handlers. */
export function definePath<const F extends FieldMap = Record<never, never>, X = unknown>(spec: PathSpec<F, X>): PathSpec<F, X> {
  return spec;
}

/**
 * definePath for one service's context type `X`, field types still inferred per spec: a
 * table holds specs with different field maps, each handler typed by its own fields.
 * `const secretsPath = definePathFor<SecretsExtra>()`.
 */
export function definePathFor<X>(): <const F extends FieldMap = Record<never, never>>(spec: PathSpec<F, X>) => AnyPathSpec<X> {
  return (spec) => spec;
}
