// The HTTP client of the CLI: node:http(s) directly (custom methods such as LIST, a CA
// file, an explicit skip-verify), the spec's headers on every request, and errors split
// as the Vault CLI splits them: the server's answer (ApiError) and everything local.
import http from 'node:http';
import https from 'node:https';

export interface ClientSettings {
  address: string;
  token: string;
  namespace: string;
  /** PEM of the CA that signs the server's certificate (undefined: the system's CAs). */
  ca: Buffer | undefined;
  skipVerify: boolean;
}

/** An answer of the server with status >= 400 (or one the CLI cannot read). */
export class ApiError extends Error {
  constructor(
    readonly method: string,
    readonly url: string,
    readonly status: number,
    readonly errors: string[],
    readonly body: unknown,
  ) {
    super(`Error making API request.\n\nURL: ${method} ${url}\nCode: ${status}. Errors:\n\n${errors.map((e) => `* ${e.trim()}`).join('\n')}`);
  }
}

/** The request never got an answer (connection refused, TLS verification, timeout). */
export class TransportError extends Error {}

export interface ApiResponse {
  status: number;
  body: unknown;
}

export interface ApiClient {
  readonly settings: ClientSettings;
  /** Sends `method /v1/<path>`; rejects with ApiError for a status >= 400 unless `allow` lists it. */
  request(method: string, path: string, options?: { body?: unknown; contentType?: string; allow?: number[]; token?: string | null }): Promise<ApiResponse>;
}

export function createApiClient(settings: ClientSettings): ApiClient {
  const base = new URL(settings.address);
  if (base.protocol !== 'http:' && base.protocol !== 'https:') throw new Error(`invalid address ${JSON.stringify(settings.address)}: must be http:// or https://`);
  const agent =
    base.protocol === 'https:' ? new https.Agent({ ca: settings.ca, rejectUnauthorized: !settings.skipVerify, keepAlive: false }) : new http.Agent({ keepAlive: false });
  return {
    settings,
    request(method, path, options = {}) {
      const url = new URL(`/v1/${path.replace(/^\/+/, '')}`, base);
      const headers: Record<string, string> = { 'X-Secrets-Request': 'true', Accept: 'application/json' };
      const token = options.token === undefined ? settings.token : options.token;
      if (token) headers['X-Secrets-Token'] = token;
      if (settings.namespace) headers['X-Secrets-Namespace'] = settings.namespace;
      let payload: Buffer | undefined;
      if (options.body !== undefined) {
        payload = Buffer.from(JSON.stringify(options.body));
        headers['Content-Type'] = options.contentType ?? 'application/json';
        headers['Content-Length'] = String(payload.length);
      }
      const lib = url.protocol === 'https:' ? https : http;
      return new Promise<ApiResponse>((resolve, reject) => {
        const req = lib.request(url, { method, headers, agent, timeout: 60_000 }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            let body: unknown = null;
            if (text.trim() !== '') {
              try {
                body = JSON.parse(text);
              } catch {
                body = text;
              }
            }
            const status = res.statusCode ?? 0;
            if (status >= 400 && !(options.allow ?? []).includes(status)) {
              const errors = body !== null && typeof body === 'object' && Array.isArray((body as { errors?: unknown }).errors) ? ((body as { errors: unknown[] }).errors.map(String)) : [];
              reject(new ApiError(method, url.toString(), status, errors, body));
              return;
            }
            resolve({ status, body });
          });
          res.on('error', (err) => reject(new TransportError(err.message)));
        });
        req.on('timeout', () => req.destroy(new Error('request timed out')));
        req.on('error', (err) => reject(new TransportError(`${method} ${url.toString()}: ${err.message}`)));
        req.end(payload);
      });
    },
  };
}
