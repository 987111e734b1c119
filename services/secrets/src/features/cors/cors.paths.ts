// `sys/config/cors` (issue 28, item 4): read, update (enables), delete (disables). Root-
// protected (sudo) and an "injector" route, as in Vault.
import { z } from 'zod';
import { respondWith } from '../../http/logical-response';
import { commaList, secretsPath, type SecretsPathSpec } from '../../http/request-context';
import type { CorsService } from './cors.service';

const list = z.union([z.array(z.string()), z.string()]);

export function createCorsPaths(deps: { cors: CorsService }): SecretsPathSpec[] {
  const { cors } = deps;
  return [
    secretsPath({
      pattern: 'config/cors',
      summary: 'Read, enable or disable CORS for the API.',
      sudo: true,
      fields: {
        allowed_origins: { schema: list, in: 'body', description: 'Origins allowed to make cross-origin requests (`*` alone for any).' },
        allowed_headers: { schema: list, in: 'body', description: 'Headers a cross-origin request may send, beyond the standard ones.' },
        enable: { schema: z.boolean(), in: 'body', description: 'Deprecated: an update always enables CORS.' },
      },
      operations: {
        read() {
          const c = cors.current();
          const data = c ? { enabled: true, allowed_origins: c.allowedOrigins, allowed_headers: c.allowedHeaders } : { enabled: false };
          return respondWith({ data, injectTopLevel: true });
        },
        async update(ctx) {
          await cors.enable(commaList(ctx.data.allowed_origins), commaList(ctx.data.allowed_headers));
        },
        async delete() {
          await cors.disable();
        },
      },
    }),
  ];
}
