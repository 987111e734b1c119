// Upload routes (spec "Upload rules"; reference A.5, A.9): the two URL-issuing GETs, the
// signed `PUT /api/v1/uploads/:token` that receives the image (streamed: the kit does not
// read or limit this body), and the authenticated direct-upload callback.
import { z } from 'zod';
import { definePath, enforceRateLimit, type AnyPathSpec } from '@selfstack/http-kit';
import type { BoxesExtra } from '../../shared/request-context';
import type { BoxesRateLimiter } from '../guards/rate-limit';
import type { UploadService } from './uploads.service';

const p = (description: string) => ({ in: 'path' as const, schema: z.string(), required: true as const, description });
const providerPath = {
  username: p('Owner of the box'),
  name: p('Name of the box'),
  box_version: p('Version number'),
  provider_name: p('Provider name'),
};
const base = 'box/:username/:name/version/:box_version/provider/:provider_name';

export function createUploadPaths(deps: { uploadService: UploadService; limiter: BoxesRateLimiter }): AnyPathSpec<BoxesExtra>[] {
  const { uploadService: u, limiter } = deps;
  return [
    definePath({
      pattern: `${base}/upload`,
      summary: 'Get a short-lived URL to PUT the box image to',
      fields: providerPath,
      operations: {
        async read(ctx) {
          await enforceRateLimit(limiter, 'upload', ctx.extra.clientKey);
          return u.issue(ctx.extra.caller, ctx.params, ctx.params.box_version, ctx.params.provider_name, 'classic');
        },
      },
    }),
    definePath({
      pattern: `${base}/upload/direct`,
      summary: 'Get a short-lived URL to PUT the box image to, and the callback that finalizes it',
      fields: providerPath,
      operations: {
        async read(ctx) {
          await enforceRateLimit(limiter, 'upload', ctx.extra.clientKey);
          return u.issue(ctx.extra.caller, ctx.params, ctx.params.box_version, ctx.params.provider_name, 'direct');
        },
      },
    }),
    definePath({
      pattern: `${base}/upload/direct/:upload_id`,
      summary: 'Finalize a direct upload (PUT with the authorization header, empty body)',
      fields: { ...providerPath, upload_id: p('Upload id from the callback URL') },
      operations: {
        update: (ctx) => u.complete(ctx.extra.caller, ctx.params, ctx.params.box_version, ctx.params.provider_name, ctx.params.upload_id),
      },
    }),
    definePath({
      pattern: 'uploads/:token',
      summary: 'Receive a box image (the upload_path of the upload endpoints); no authorization header needed, the URL is signed',
      body: 'stream',
      fields: { token: p('Signed upload token') },
      operations: {
        async update(ctx) {
          const declared = ctx.req.headers['content-length'];
          const contentLength = declared !== undefined && /^\d+$/.test(declared) ? Number(declared) : undefined;
          try {
            return await u.receive({ token: ctx.params.token, body: ctx.req, contentLength, signal: ctx.signal, base: ctx.extra.caller.base });
          } catch (err) {
            // Refused before (or while) reading the image: close the connection instead of
            // letting the server read and discard the rest of a large body.
            if (!ctx.req.complete) ctx.res.setHeader('Connection', 'close');
            throw err;
          }
        },
      },
    }),
  ];
}
