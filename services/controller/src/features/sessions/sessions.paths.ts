// The controller API's route table (declared once; the kit derives the method table,
// validation, ?help=1 and OpenAPI from it).
import { timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { BadRequestError, MethodNotAllowedError, UnauthorizedError } from '@selfstack/errors';
import { definePath, requestToken, type AnyPathSpec, type RequestContext } from '@selfstack/http-kit';
import type { SessionService } from './sessions.service';
import { SESSION_STATUSES, sessionView, workerView } from './sessions.types';

function rejectUnknown(unknown: readonly string[]): void {
  if (unknown.length > 0) throw new BadRequestError(`unknown fields: ${unknown.join(', ')}`);
}

export function sessionPaths(sessions: SessionService): AnyPathSpec[] {
  return [
    definePath({
      pattern: 'v1/sessions',
      summary: 'Sessions handed to workers.',
      description: 'GET lists sessions (optionally by worker and status); POST creates a session and hands it to a worker.',
      fields: {
        worker_name: { schema: z.string().min(1).max(256), in: 'body', description: 'Worker to hand the session to (default: the least loaded connected worker); on GET, filters by worker.' },
        target_id: { schema: z.string().max(256), in: 'body', description: 'Identifier of the target the session is for.' },
        expiration_seconds: { schema: z.number().int().positive().max(7 * 24 * 3600), in: 'body', description: 'Session lifetime in seconds (default 8 hours).' },
        status: { schema: z.enum(SESSION_STATUSES), in: 'query', description: 'On GET, filters by session status.' },
      },
      // POST always creates.
      existenceCheck: () => false,
      operations: {
        async read(ctx) {
          const items = await sessions.list({
            ...(ctx.data.worker_name ? { workerName: ctx.data.worker_name } : {}),
            ...(ctx.data.status ? { status: ctx.data.status } : {}),
          });
          return { items: items.map(sessionView) };
        },
        async create(ctx) {
          rejectUnknown(ctx.unknownParams);
          const session = await sessions.create({
            ...(ctx.body.worker_name !== undefined ? { worker_name: ctx.body.worker_name } : {}),
            ...(ctx.body.target_id !== undefined ? { target_id: ctx.body.target_id } : {}),
            ...(ctx.body.expiration_seconds !== undefined ? { expiration_seconds: ctx.body.expiration_seconds } : {}),
          });
          return sessionView(session);
        },
      },
    }),
    definePath({
      pattern: 'v1/sessions/:id',
      summary: 'One session; POST to `<id>:cancel` cancels it.',
      fields: { id: { schema: z.string().min(1).max(300), in: 'path', required: true, description: 'Session id, optionally followed by the `:cancel` action.' } },
      existenceCheck: () => true,
      operations: {
        async read(ctx) {
          if (ctx.params.id.includes(':')) throw new MethodNotAllowedError('unsupported operation');
          return sessionView(await sessions.get(ctx.params.id));
        },
        async update(ctx) {
          const m = /^([^:]+):cancel$/.exec(ctx.params.id);
          if (!m) throw new MethodNotAllowedError('unsupported operation');
          rejectUnknown(ctx.unknownParams);
          return sessionView(await sessions.cancel(m[1]!));
        },
      },
    }),
    definePath({
      pattern: 'v1/workers',
      summary: 'Workers seen on the cluster listener.',
      operations: {
        async read() {
          return { items: (await sessions.listWorkers()).map(workerView) };
        },
      },
    }),
  ];
}

/** Bearer-token check for the API when `controller { api_token = ... }` is configured. */
export function bearerAuthorizer(token: string | undefined): ((ctx: RequestContext) => void) | undefined {
  if (!token) return undefined;
  const expected = Buffer.from(token);
  return (ctx) => {
    const given = Buffer.from(requestToken(ctx.req.headers, ['authorization']) ?? '');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      throw new UnauthorizedError('missing or invalid bearer token');
    }
  };
}
