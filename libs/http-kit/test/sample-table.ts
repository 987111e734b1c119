import { PassThrough } from 'node:stream';
import { z } from 'zod';
import { createLogger, type Logger } from '@selfstack/logger';
import { definePath, type AnyPathSpec } from '../src';

/** A small Vault-KV-like table used by the dispatch, help and listener tests. */
export function sampleTable(existing: Set<string> = new Set(['exists'])): AnyPathSpec[] {
  const config = definePath({
    pattern: 'config',
    summary: 'Configures settings for the KV store',
    description: 'Backend-wide settings.',
    fields: {
      max_versions: { in: 'body', schema: z.number().int().min(0), description: 'Number of versions to keep.', default: 0 },
      cas_required: { in: 'body', schema: z.boolean(), description: 'Require check-and-set on writes.' },
    },
    existenceCheck: () => true,
    operationSummaries: { read: 'Read the backend level settings.', update: 'Configure backend level settings.' },
    operations: {
      read: () => ({ max_versions: 10, cas_required: false }),
      update: (ctx) => ({ op: ctx.operation, max_versions: ctx.body.max_versions, cas_required: ctx.body.cas_required }),
    },
  });
  const data = definePath({
    pattern: 'data/*path',
    summary: 'Write, Read, and Delete data in the Key-Value Store.',
    fields: {
      path: { in: 'path', schema: z.string(), description: 'Location of the secret.' },
      version: { in: 'query', schema: z.number().int(), description: 'Version to read.' },
      data: { in: 'body', schema: z.record(z.string(), z.unknown()), description: 'The contents of the data map.', required: true },
      options: { in: 'body', schema: z.object({ cas: z.number().int().optional() }), description: 'Options for writing a KV entry.' },
    },
    existenceCheck: (ctx) => existing.has(ctx.rawParams.path ?? ''),
    operations: {
      read: (ctx) => (ctx.params.path === 'missing' ? undefined : { op: ctx.operation, path: ctx.params.path, version: ctx.query.version ?? null }),
      create: (ctx) => ({ op: ctx.operation, path: ctx.params.path, data: ctx.body.data, unknown: ctx.unknownParams }),
      update: (ctx) => ({ op: ctx.operation, path: ctx.params.path, data: ctx.body.data, unknown: ctx.unknownParams }),
      patch: (ctx) => ({ op: ctx.operation, path: ctx.params.path, data: ctx.body.data }),
      delete: () => undefined,
    },
  });
  const metadata = definePath({
    pattern: 'metadata/*path',
    summary: 'Configures settings for the KV store',
    fields: { path: { in: 'path', schema: z.string(), description: 'Location of the secret.' } },
    operations: {
      read: (ctx) => ({ op: ctx.operation, path: ctx.params.path }),
      list: (ctx) => ({ op: ctx.operation, path: ctx.params.path, keys: ['a', 'b/'] }),
      delete: () => undefined,
    },
  });
  const policy = definePath({
    pattern: 'policy/:name',
    summary: 'Read, Modify, or Delete an access control policy.',
    fields: {
      name: { in: 'path', schema: z.string().regex(/^[a-z0-9-]+$/, 'must be lowercase'), description: 'The name of the policy.' },
      policy: { in: 'body', schema: z.string(), description: 'The rules of the policy.', required: true },
      flags: { in: 'query', schema: z.array(z.boolean()), description: 'Flags.' },
      verbose: { in: 'query', schema: z.boolean(), description: 'Verbose output.' },
    },
    operations: {
      read: (ctx) => ({ name: ctx.params.name, verbose: ctx.query.verbose ?? null, flags: ctx.query.flags ?? null }),
      update: () => undefined,
    },
  });
  const listOnly = definePath({
    pattern: 'roles',
    summary: 'List the roles.',
    operations: { list: () => ({ keys: ['r1'] }) },
  });
  return [config, data, metadata, policy, listOnly];
}

export interface CapturedLogger {
  logger: Logger;
  lines: Array<Record<string, unknown>>;
  flush(): Promise<void>;
}

/** A JSON logger whose lines land in memory. */
export function capturedLogger(service = 'test'): CapturedLogger {
  const stream = new PassThrough();
  const lines: Array<Record<string, unknown>> = [];
  let rest = '';
  stream.on('data', (d: Buffer) => {
    rest += d.toString();
    let nl = rest.indexOf('\n');
    while (nl !== -1) {
      lines.push(JSON.parse(rest.slice(0, nl)) as Record<string, unknown>);
      rest = rest.slice(nl + 1);
      nl = rest.indexOf('\n');
    }
  });
  return {
    logger: createLogger({ service, destination: stream, batchMs: 0 }),
    lines,
    flush: () => new Promise((r) => setImmediate(r)),
  };
}
