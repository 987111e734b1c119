// CORS configuration (issue 28, item 4; spec "Errors" 403; Vault's sys/config/cors and
// vault/cors.go). Stored behind the barrier at `core/cors`, held in memory while unsealed
// (every /v1 request with an Origin consults it), and reloaded on other replicas through
// the bus when it changes.
import type { Bus } from '@selfstack/bus';
import { z } from 'zod';
import { badRequest } from '../../core/errors';
import type { Storage } from '../barrier/storage.types';

export const CORS_PATH = 'core/cors';
export const CORS_CHANNEL = 'secrets.cors';

/** Vault's StdAllowedHeaders, plus this API's own names of the token, namespace and request headers. */
export const STD_ALLOWED_HEADERS = [
  'Content-Type',
  'X-Requested-With',
  'X-Vault-AWS-IAM-Server-ID',
  'X-Vault-MFA',
  'X-Vault-No-Request-Forwarding',
  'X-Vault-Wrap-Format',
  'X-Vault-Wrap-TTL',
  'X-Vault-Policy-Override',
  'Authorization',
  'X-Vault-Token',
  'X-Vault-Namespace',
  'X-Vault-Request',
  'X-Secrets-Token',
  'X-Secrets-Namespace',
  'X-Secrets-Request',
];

/** The methods a preflight may ask for (Vault's allowedMethods, PATCH and LIST included). */
export const CORS_METHODS = ['DELETE', 'GET', 'OPTIONS', 'PATCH', 'POST', 'PUT', 'LIST'];

const configSchema = z.object({ enabled: z.boolean(), allowedOrigins: z.array(z.string()), allowedHeaders: z.array(z.string()) });
export type CorsConfig = z.output<typeof configSchema>;

export interface CorsService {
  /** The configuration when CORS is enabled (and the barrier unsealed); null otherwise. */
  current(): CorsConfig | null;
  isAllowedOrigin(config: CorsConfig, origin: string): boolean;
  enable(origins: string[], headers: string[]): Promise<void>;
  disable(): Promise<void>;
  load(): Promise<void>;
  clear(): void;
  start(): Promise<void>;
}

export function createCorsService(deps: { storage: Storage; bus: Bus }): CorsService {
  const { storage, bus } = deps;
  let config: CorsConfig | null = null;
  let loads = 0;
  const save = async (next: CorsConfig | null): Promise<void> => {
    if (next) await storage.put(CORS_PATH, Buffer.from(JSON.stringify(next)));
    else await storage.delete(CORS_PATH);
    loads++;
    config = next;
    void bus.publish(CORS_CHANNEL, 'changed').catch(() => undefined);
  };
  const service: CorsService = {
    current: () => (config?.enabled ? config : null),
    isAllowedOrigin: (c, origin) => c.allowedOrigins.includes('*') || c.allowedOrigins.includes(origin),
    async enable(origins, headers) {
      const clean = origins.map((o) => o.trim()).filter((o) => o !== '');
      if (clean.length === 0) throw badRequest('at least one origin or the wildcard must be provided.');
      if (clean.includes('*') && clean.length > 1) throw badRequest("to allow all origins the '*' must be the only value for allowed_origins");
      const allowed = [...STD_ALLOWED_HEADERS];
      const known = new Set(allowed.map((h) => h.toLowerCase()));
      for (const h of headers.map((x) => x.trim()).filter((x) => x !== '')) {
        if (/[\r\n,]/.test(h)) throw badRequest(`invalid header name ${JSON.stringify(h)}`);
        if (!known.has(h.toLowerCase())) {
          known.add(h.toLowerCase());
          allowed.push(h);
        }
      }
      await save({ enabled: true, allowedOrigins: clean, allowedHeaders: allowed });
    },
    disable: () => save(null),
    async load() {
      const id = ++loads;
      const raw = await storage.get(CORS_PATH);
      if (id === loads) config = raw ? configSchema.parse(JSON.parse(raw.toString('utf8'))) : null;
    },
    clear() {
      loads++;
      config = null;
    },
    async start() {
      const reload = (): void => {
        void service.load().catch(() => undefined);
      };
      await bus.subscribe(CORS_CHANNEL, reload);
      bus.onReconnect(reload);
    },
  };
  return service;
}
