// GET /v1/event/stream (spec "Events"; reference §6). The handler writes the stream
// itself (ndjson, flushed line by line) and answers the kit with STREAMED once it ends.
import { z } from 'zod';
import { requestToken, type AnyPathSpec } from '@selfstack/http-kit';
import { namespaceScope, READ_QUERY } from '../../http/query';
import { STREAMED } from '../../http/reply';
import { schedulerPath, TOKEN_HEADERS, type RequestExtra } from '../../http/request-context';
import type { EventStreamService } from './event-stream.service';
import { parseTopics } from './event-topics';

export function eventPaths(events: EventStreamService): AnyPathSpec<RequestExtra>[] {
  return [
    schedulerPath({
      pattern: 'event/stream',
      response: 'stream',
      summary: 'Stream events: the retained backlog from `index`, then new events as they are written (newline-delimited JSON)',
      fields: {
        index: READ_QUERY.index,
        namespace: READ_QUERY.namespace,
        region: READ_QUERY.region,
        topic: {
          in: 'query',
          schema: z.array(z.string()).optional(),
          description: 'Repeatable: `Topic`, `Topic:*` or `Topic:<key>` (a Key or FilterKeys entry); none = every topic (management token)',
        },
      },
      operations: {
        async read(ctx) {
          const request = { index: ctx.query.index, namespace: namespaceScope(ctx).namespace, topics: parseTopics(ctx.query.topic ?? []) };
          // 403 before any byte of the stream.
          const stream = events.open(ctx.extra.identity, requestToken(ctx.req.headers, TOKEN_HEADERS) ?? '', request);
          const res = ctx.res;
          res.statusCode = 200;
          res.setHeader('Content-Type', 'application/json');
          res.setHeader('Cache-Control', 'no-cache');
          // nginx (and other proxies honouring it) must pass each line on at once.
          res.setHeader('X-Accel-Buffering', 'no');
          // A HEAD gets the head of the answer, not an endless wait for a body it never gets.
          if (ctx.method === 'HEAD') {
            res.end();
            return STREAMED;
          }
          res.flushHeaders();
          res.socket?.setNoDelay(true);
          await stream.run(res, ctx.signal);
          return STREAMED;
        },
      },
    }),
  ];
}
