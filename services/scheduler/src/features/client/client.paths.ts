// /v1/client/* through the server (issue 26 item 5; the anchor's client endpoints): the
// server checks the caller (client.service.ts) and streams the agent's answer back as is:
// status, content type and body (logs with follow stay open until the task ends or the
// caller goes away). Detailed parameter errors (task, type, origin, offset, path) are the
// agent's, worded as the anchor's.
import { Readable } from 'node:stream';
import { z } from 'zod';
import type { AnyPathSpec } from '@selfstack/http-kit';
import { jsonMember, optionalQueryString, pathParam } from '../../http/fields';
import { STREAMED } from '../../http/reply';
import { schedulerPath, type RequestExtra } from '../../http/request-context';
import type { AgentTarget, ClientService } from './client.service';

type Ctx = { req: { originalUrl?: string; url?: string }; res: import('node:http').ServerResponse; method: string; signal: AbortSignal };

/** The request's path and query as the agent serves it (region/namespace are the server's). */
function agentUrl(ctx: Ctx): string {
  const u = new URL(ctx.req.originalUrl ?? ctx.req.url ?? '/', 'http://server');
  for (const k of ['region', 'namespace', 'node_id', 'pretty', 'stale', 'index', 'wait']) u.searchParams.delete(k);
  const q = u.searchParams.toString();
  return `${u.pathname}${q ? `?${q}` : ''}`;
}

async function relay(client: ClientService, target: AgentTarget, ctx: Ctx, body?: unknown): Promise<typeof STREAMED> {
  const upstream = await client.forward(target, { method: ctx.method === 'HEAD' ? 'GET' : ctx.method, url: agentUrl(ctx), body, signal: ctx.signal });
  const res = ctx.res;
  res.statusCode = upstream.status;
  const type = upstream.headers.get('content-type');
  if (type) res.setHeader('Content-Type', type);
  res.setHeader('Cache-Control', 'no-cache');
  res.setHeader('X-Accel-Buffering', 'no');
  if (ctx.method === 'HEAD' || !upstream.body) {
    await upstream.body?.cancel().catch(() => undefined);
    res.end();
    return STREAMED;
  }
  res.flushHeaders();
  const stream = Readable.fromWeb(upstream.body as import('node:stream/web').ReadableStream<Uint8Array>);
  await new Promise<void>((resolve) => {
    stream.on('data', (chunk: Buffer) => res.write(chunk));
    stream.once('end', () => resolve());
    stream.once('error', () => resolve());
    ctx.signal.addEventListener('abort', () => {
      stream.destroy();
      resolve();
    });
  });
  res.end();
  return STREAMED;
}

export function clientPaths(client: ClientService): AnyPathSpec<RequestExtra>[] {
  const alloc = { alloc: pathParam('allocation ID') };
  const fsQuery = { path: optionalQueryString('path inside the allocation directory (default `/`)') };
  const fsRoute = (op: 'ls' | 'stat' | 'cat', summary: string) =>
    schedulerPath({
      pattern: `client/fs/${op}/:alloc`,
      response: 'stream',
      summary,
      description: 'Needs read-fs in the allocation\'s namespace. A path leaving the allocation directory is a 400.',
      fields: { ...alloc, ...fsQuery },
      operations: {
        async read(ctx) {
          return relay(client, await client.forAllocation(ctx.params.alloc, ctx.extra.identity.acl, 'read-fs'), ctx);
        },
      },
    });
  return [
    schedulerPath({
      pattern: 'client/fs/logs/:alloc',
      response: 'stream',
      summary: "Stream a task's stdout or stderr",
      description:
        'Needs read-logs. `plain=true` streams the bytes; otherwise JSON frames {Data (base64), File, Offset}. `origin=end` with `offset` counts back from the end; `follow=true` keeps streaming until the task is dead.',
      fields: {
        ...alloc,
        task: optionalQueryString('task name (required)'),
        type: optionalQueryString('`stdout` or `stderr` (required)'),
        follow: optionalQueryString('keep streaming new output (bool)'),
        offset: optionalQueryString('byte offset (from origin)'),
        origin: optionalQueryString('`start` (default) or `end`'),
        plain: optionalQueryString('raw bytes instead of frames (bool)'),
      },
      operations: {
        async read(ctx) {
          return relay(client, await client.forAllocation(ctx.params.alloc, ctx.extra.identity.acl, 'read-logs'), ctx);
        },
      },
    }),
    fsRoute('ls', 'List a directory of an allocation'),
    fsRoute('stat', 'Stat a file of an allocation'),
    fsRoute('cat', 'Read a file of an allocation'),
    schedulerPath({
      pattern: 'client/allocation/:alloc/stats',
      response: 'stream',
      summary: "An allocation's resource usage (AllocResourceUsage)",
      description: 'Needs read-job in the allocation\'s namespace.',
      fields: { ...alloc },
      operations: {
        async read(ctx) {
          return relay(client, await client.forAllocation(ctx.params.alloc, ctx.extra.identity.acl, 'read-job'), ctx);
        },
      },
    }),
    schedulerPath({
      pattern: 'client/allocation/:alloc/restart',
      response: 'stream',
      summary: "Restart an allocation's tasks (one, or all)",
      description: 'Needs alloc-lifecycle. Body {TaskName, AllTasks}; without TaskName, all running tasks restart. The restart does not count against the restart policy.',
      fields: {
        ...alloc,
        TaskName: jsonMember(z.string(), 'AllocRestartRequest.TaskName', 'string', 'the task to restart (default: all running tasks)'),
        AllTasks: jsonMember(z.boolean(), 'AllocRestartRequest.AllTasks', 'bool', 'restart every task'),
      },
      operations: {
        async update(ctx) {
          const target = await client.forAllocation(ctx.params.alloc, ctx.extra.identity.acl, 'alloc-lifecycle');
          const body = { ...(ctx.body.TaskName !== undefined ? { TaskName: ctx.body.TaskName } : {}), ...(ctx.body.AllTasks !== undefined ? { AllTasks: ctx.body.AllTasks } : {}) };
          return relay(client, target, ctx, body);
        },
      },
    }),
    schedulerPath({
      pattern: 'client/stats',
      response: 'stream',
      summary: "A client node's host statistics (HostStats)",
      description: 'Needs node:read. `node_id` names the node (a server has no host stats of its own to give).',
      fields: { node_id: optionalQueryString('the node to ask (required on a server)') },
      operations: {
        async read(ctx) {
          return relay(client, await client.forNode(ctx.query.node_id ?? '', ctx.extra.identity.acl), ctx);
        },
      },
    }),
  ];
}
