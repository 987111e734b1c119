// Root-level routes (outside /api/v1, reference A.6): the catalog at /:username/:name
// (HEAD and GET, `Content-Type: application/json`, which is how vagrant tells metadata
// from a box file) and /:username/boxes/:name/versions/:version/providers/:provider.box.
import { pipeline } from 'node:stream/promises';
import { z } from 'zod';
import { AppError, NotFoundError } from '@selfstack/errors';
import type { BlobStore } from '@selfstack/blob';
import { definePath, type AnyPathSpec } from '@selfstack/http-kit';
import { parseRange } from '../../shared/http-range';
import { jsonReply } from '../../shared/json-reply';
import type { BoxesExtra } from '../../shared/request-context';
import type { DownloadService } from './downloads.service';

const p = (description: string) => ({ in: 'path' as const, schema: z.string(), required: true as const, description });

export function createDownloadPaths(deps: { downloadService: DownloadService; blobs: BlobStore }): AnyPathSpec<BoxesExtra>[] {
  const { downloadService: d, blobs } = deps;
  return [
    definePath({
      pattern: ':username/boxes/:name/versions/:box_version/providers/:file',
      summary: 'Download a box file (Range supported)',
      fields: { username: p('Owner'), name: p('Box name'), box_version: p('Version'), file: p('<provider>.box') },
      operations: {
        async read(ctx) {
          const { req, res } = ctx;
          const target = await d.locate(ctx.extra.caller, ctx.params, ctx.params.box_version, ctx.params.file);
          const isHead = req.method === 'HEAD';
          if (target.kind === 'redirect') {
            if (!isHead) await d.countDownload(target.boxId);
            res.status(302).setHeader('Location', target.url);
            res.setHeader('Content-Length', '0');
            res.end();
            return undefined;
          }
          const range = parseRange(typeof req.headers.range === 'string' ? req.headers.range : undefined, target.size);
          if (range.kind === 'unsatisfiable') {
            throw new AppError(416, `Range not satisfiable for ${target.size} bytes`, { headers: { 'Content-Range': `bytes */${target.size}` } });
          }
          const got = isHead ? null : await blobs.get(target.key, range.kind === 'range' ? { start: range.start, end: range.end } : undefined);
          if (!isHead && !got) throw new NotFoundError('Resource not found: the box file is missing from storage');
          res.setHeader('Accept-Ranges', 'bytes');
          res.setHeader('Content-Type', 'application/octet-stream');
          res.setHeader('Content-Disposition', `attachment; filename="${target.filename.replace(/["\\\r\n]/g, '_')}"`);
          if (target.sha256) res.setHeader('ETag', `"${target.sha256}"`);
          if (target.checksum && target.checksumType) res.setHeader('X-Checksum', `${target.checksumType}:${target.checksum}`);
          if (range.kind === 'range') {
            res.status(206);
            res.setHeader('Content-Range', `bytes ${range.start}-${range.end}/${target.size}`);
            res.setHeader('Content-Length', String(range.end - range.start + 1));
          } else {
            res.status(200);
            res.setHeader('Content-Length', String(target.size));
          }
          // A download is counted once per fetch of the file, not per resumed chunk.
          if (!isHead && (range.kind === 'none' || range.start === 0)) await d.countDownload(target.boxId);
          if (!got) {
            res.end();
            return undefined;
          }
          await pipeline(got.stream, res).catch((err: unknown) => {
            // The client went away mid-download: nothing to answer.
            if (!res.writableEnded) res.destroy(err instanceof Error ? err : undefined);
          });
          return undefined;
        },
      },
    }),
    definePath({
      pattern: ':username/:name',
      summary: 'Box catalog (metadata) as read by `vagrant box add username/name`',
      fields: { username: p('Owner'), name: p('Box name') },
      operations: {
        read: async (ctx) => jsonReply(await d.catalog(ctx.extra.caller, ctx.params)),
      },
    }),
  ];
}
