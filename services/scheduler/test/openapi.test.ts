// The scheduler's generated documentation against what its handlers parse (issue 31, item
// 1). Every route of the /v1 table is called, every method it has, with every declared
// field set to a valid value of its documented type, over stub services; each handler's
// context is watched. The test fails when a handler
// - reads the raw request (`ctx.req.query`, `ctx.req.body`, `ctx.input`, `ctx.rawParams`),
// - reads a field its route does not declare, or
// - gets a value whose type is not the one `?help=1` and OpenAPI document for that field.
// A deliberately wrong route at the end shows the watch sees each of those.
import request from 'supertest';
import { z } from 'zod';
import {
  coerceValue,
  compilePathTable,
  createKitApp,
  mountPaths,
  type AnyPathSpec,
  type CompiledField,
  type CompiledPath,
  type Operation,
  type OperationContext,
} from '@selfstack/http-kit';
import { createLogger } from '@selfstack/logger';
import { schedulerPaths, V1_MOUNT } from '../src/app';
import type { SchedulerServices } from '../src/compose';
import { Acl } from '../src/features/acl/acl-policy';
import { jsonMember } from '../src/http/fields';
import { LIST_QUERY } from '../src/http/query';
import { schedulerPath, type RequestExtra } from '../src/http/request-context';
import { BASE_CONFIG } from './harness';

type JsonSchema = { type?: string; items?: JsonSchema };
type Where = 'query' | 'body' | 'params' | 'data';

interface Finding {
  route: string;
  method: string;
  problem: string;
}

const METHOD_OF: Record<Operation, string> = { read: 'GET', list: 'GET', create: 'PUT', update: 'PUT', patch: 'PATCH', delete: 'DELETE' };

/** Services whose every method answers with a value each handler can turn into a reply. */
function stubServices(): SchedulerServices {
  const answer = { index: 1, value: [], nextToken: '', Index: 1, token: {} };
  const service = new Proxy(
    {},
    {
      get: (_t, name) => {
        if (name === 'then') return undefined;
        if (name === 'mayRegister') return () => true;
        if (name === 'tokenSelf') return () => ({});
        return async () => answer;
      },
    },
  );
  // The event stream writes its own answer: a stream that ends at once.
  const events = { open: () => ({ run: async (out: { end(): void }) => out.end() }) };
  return {
    acl: service,
    jobs: service,
    nodes: service,
    allocations: service,
    evaluations: service,
    deployments: service,
    namespaces: service,
    events,
    clientUpdates: service,
    jobOperations: service,
    // The client endpoints relay an agent's answer: one that is there at once.
    client: {
      forAllocation: async () => ({ baseUrl: 'http://agent', secretHash: '' }),
      forNode: async () => ({ baseUrl: 'http://agent', secretHash: '' }),
      forward: async () => new Response('{}', { status: 200, headers: { 'Content-Type': 'application/json' } }),
    },
  } as unknown as SchedulerServices;
}

/** Records every read a handler makes of its context. */
class Watch {
  readonly reads: { where: Where; name: string; value: unknown }[] = [];
  readonly raw: string[] = [];

  wrap(ctx: OperationContext<Record<string, never>, RequestExtra>): OperationContext<Record<string, never>, RequestExtra> {
    const fields = (where: Where, values: object) =>
      new Proxy(values, {
        get: (t, name, receiver) => {
          const value: unknown = Reflect.get(t, name, receiver);
          if (typeof name === 'string') this.reads.push({ where, name, value });
          return value;
        },
      });
    const req = new Proxy(ctx.req, {
      get: (t, name) => {
        if (name === 'query' || name === 'body') this.raw.push(`ctx.req.${name}`);
        const value: unknown = Reflect.get(t, name, t);
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(t) : value;
      },
    });
    return new Proxy(ctx, {
      get: (t, name) => {
        if (name === 'query' || name === 'body' || name === 'params' || name === 'data') return fields(name, t[name]);
        if (name === 'input' || name === 'rawParams') this.raw.push(`ctx.${name}`);
        if (name === 'req') return req;
        return Reflect.get(t, name, t);
      },
    });
  }
}

/** Each spec's handlers, run on a watched context. */
function watched(specs: readonly AnyPathSpec<RequestExtra>[], watch: { current: Watch }): AnyPathSpec<RequestExtra>[] {
  return specs.map((spec) => {
    const operations: Record<string, unknown> = {};
    for (const [op, handler] of Object.entries(spec.operations)) {
      if (typeof handler !== 'function') continue;
      operations[op] = (ctx: OperationContext<Record<string, never>, RequestExtra>) =>
        (handler as (c: unknown) => unknown).call(spec.operations, watch.current.wrap(ctx));
    }
    return { ...spec, operations } as AnyPathSpec<RequestExtra>;
  });
}

function appFor(specs: readonly AnyPathSpec<RequestExtra>[]) {
  const identity = { acl: Acl.management(), token: null };
  return createKitApp({ service: 'scheduler', logger: createLogger({ service: 't', silent: true }), errorFlavour: 'nomad', metrics: false, jsonWithoutContentType: true }, (app) => {
    mountPaths<RequestExtra>(app, specs, { ...V1_MOUNT, extra: () => ({ identity }) });
  });
}

/** Fields whose valid values no generic sample of their type is: lists of objects. */
const SAMPLES: Record<string, unknown> = {
  Allocs: [{ ID: 'x', ClientStatus: 'running' }],
  topic: ['Job'],
};

/** A wire value of the field's documented type that the field accepts. */
function sample(field: CompiledField, documented: JsonSchema): unknown {
  const own = SAMPLES[field.name];
  if (own !== undefined && field.spec.schema.safeParse(own).success) return own;
  const inQuery = field.spec.in !== 'body';
  const candidates: Record<string, unknown[]> = {
    boolean: inQuery ? ['true'] : [true],
    integer: inQuery ? ['1'] : [1],
    number: inQuery ? ['1'] : [1],
    string: inQuery ? ['x', '1s'] : ['x'],
    array: [['x']],
    object: [{}],
  };
  for (const raw of candidates[documented.type ?? ''] ?? []) {
    const value = field.spec.decode ? field.spec.decode(raw) : coerceValue(raw, field.coercion);
    if (field.spec.schema.safeParse(value).success) return raw;
  }
  throw new Error(`no sample of type ${documented.type} for field ${field.name}`);
}

function matchesType(value: unknown, schema: JsonSchema): boolean {
  switch (schema.type) {
    case 'boolean':
      return typeof value === 'boolean';
    case 'integer':
      return Number.isInteger(value);
    case 'number':
      return typeof value === 'number';
    case 'string':
      return typeof value === 'string';
    case 'array':
      return Array.isArray(value) && value.every((v) => schema.items === undefined || matchesType(v, schema.items));
    case 'object':
      return typeof value === 'object' && value !== null && !Array.isArray(value);
    default:
      return false;
  }
}

const HELP_TYPE: Record<string, string> = { integer: 'int', boolean: 'bool', array: 'slice', object: 'map', string: 'string', number: 'number' };

interface Documented {
  /** Field name -> where the document puts it and its schema, for one operation. */
  fields: Map<string, { where: 'path' | 'query' | 'body'; schema: JsonSchema }>;
  help: string;
}

async function documented(app: Parameters<typeof request>[0], path: string, openApiPath: string, method: string): Promise<Documented> {
  const res = await request(app).get(`${path}?help=1`);
  expect(res.status).toBe(200);
  const item = res.body.openapi.paths[openApiPath] as Record<string, unknown> | undefined;
  if (!item) throw new Error(`${openApiPath} missing from the OpenAPI document of ${path}`);
  const operation = item[method === 'PUT' ? 'post' : method.toLowerCase()] as Record<string, unknown>;
  const fields: Documented['fields'] = new Map();
  for (const p of [...((item.parameters as unknown[]) ?? []), ...((operation.parameters as unknown[]) ?? [])] as { name: string; in: 'path' | 'query'; schema: JsonSchema }[]) {
    fields.set(p.name, { where: p.in, schema: p.schema });
  }
  const body = operation.requestBody as { content: Record<string, { schema: { properties: Record<string, JsonSchema> } }> } | undefined;
  for (const [name, schema] of Object.entries(body?.content['application/json']?.schema.properties ?? {})) fields.set(name, { where: 'body', schema });
  return { fields, help: res.body.help as string };
}

/** Calls every route and method of `specs` and lists what disagrees with the documents. */
async function check(specs: readonly AnyPathSpec<RequestExtra>[]): Promise<{ findings: Finding[]; calls: number }> {
  const watch = { current: new Watch() };
  const app = appFor(watched(specs, watch));
  const table = compilePathTable(specs);
  const findings: Finding[] = [];
  let calls = 0;
  for (const entry of table.entries as readonly CompiledPath<RequestExtra>[]) {
    const path = `/v1/${entry.spec.pattern.replace(/[:+]([A-Za-z_]+)/g, 'x')}`;
    // Help documents paths relative to the mount, as Vault does.
    const openApiPath = entry.compiled.openApiPath;
    const methods = new Set(Object.entries(entry.spec.operations).filter(([, h]) => typeof h === 'function').map(([op]) => METHOD_OF[op as Operation]));
    for (const method of methods) {
      const route = `${method} ${path}`;
      const doc = await documented(app, path, openApiPath, method);
      const note = (problem: string) => findings.push({ route, method, problem });
      // Everything the route declares for this method is documented for it, with one type.
      const isWrite = method === 'PUT';
      const sent = entry.fields.filter((f) => f.spec.in !== 'body' || isWrite);
      const query = new URLSearchParams();
      const body: Record<string, unknown> = {};
      for (const f of sent) {
        const d = doc.fields.get(f.name);
        if (!d || d.where !== f.spec.in) {
          note(`field ${f.name} (in: ${f.spec.in}) is not documented there (${d?.where ?? 'absent'})`);
          continue;
        }
        if (!doc.help.includes(`    ${f.name} (${HELP_TYPE[d.schema.type ?? ''] ?? '?'})`)) note(`?help=1 does not list ${f.name} as ${d.schema.type}`);
        if (f.spec.in === 'path') continue;
        const value = sample(f, d.schema);
        if (f.spec.in === 'query') query.set(f.name, String(value));
        else body[f.name] = value;
      }
      // A streamed answer (the event stream) is written by its handler, not the reply writer.
      if (!doc.fields.has('pretty') && entry.spec.response !== 'stream') note('does not declare `pretty`, which every reply reads');
      watch.current = new Watch();
      const qs = query.toString();
      const url = qs === '' ? path : `${path}?${qs}`;
      const res =
        method === 'PUT' ? await request(app).put(url).send(body) : method === 'DELETE' ? await request(app).delete(url) : await request(app).get(url);
      calls++;
      if (res.status >= 300) note(`answered ${res.status} ${res.text}`);
      const w = watch.current;
      for (const r of w.raw) note(`reads the raw request: ${r}`);
      for (const read of w.reads) {
        const d = doc.fields.get(read.name);
        const where = read.where === 'params' ? 'path' : read.where;
        if (!d || (where !== 'data' && d.where !== where)) {
          note(`reads ctx.${read.where}.${read.name}, which is not declared there`);
        } else if (read.value !== undefined && !matchesType(read.value, d.schema)) {
          note(`reads ${read.name} as ${JSON.stringify(read.value)}, documented as ${JSON.stringify(d.schema.type)}`);
        }
      }
    }
  }
  return { findings, calls };
}

describe('OpenAPI and ?help=1 against what the handlers parse', () => {
  it('every handler reads only declared fields, of their documented types, and never the raw request', async () => {
    const specs = schedulerPaths({ services: stubServices(), config: BASE_CONFIG });
    const { findings, calls } = await check(specs);
    expect(findings).toEqual([]);
    // 61 routes, 72 route-methods (GET, PUT and DELETE by the routes' operations).
    expect(specs).toHaveLength(61);
    expect(calls).toBe(72);
  });

  it('sees a raw read, an undeclared field and a type the document does not give', async () => {
    const wrong = schedulerPath({
      pattern: 'wrong/:id',
      summary: 'reads what it should not',
      fields: {
        ...LIST_QUERY,
        id: { schema: z.string(), in: 'path', description: 'id' },
        // Documented as the string it takes, handed over as the number it becomes.
        count: { schema: z.string().transform((v) => v.length), in: 'query', description: 'a count' },
        Flag: jsonMember(z.boolean(), 'R.Flag', 'bool', 'a flag'),
      },
      operations: {
        read(ctx) {
          const q = ctx.req.query as Record<string, unknown>;
          return { a: q['x'], b: (ctx.data as Record<string, unknown>)['undeclared'], c: ctx.rawParams['id'], n: ctx.query.count };
        },
        update(ctx) {
          return { input: ctx.input, flag: ctx.body.Flag };
        },
      },
    });
    const { findings } = await check([wrong]);
    expect(findings.map((f) => `${f.method} ${f.problem}`).sort()).toEqual([
      'GET reads count as 1, documented as "string"',
      'GET reads ctx.data.undeclared, which is not declared there',
      'GET reads the raw request: ctx.rawParams',
      'GET reads the raw request: ctx.req.query',
      'PUT reads the raw request: ctx.input',
    ]);
  });
});
