// Each API's error body, turned into the message the console shows (issue 32, item 7:
// "loading and error states in each API's words"). Shapes: ../shared/ARCHITECTURE.md
// "Errors, one shape per API" and docs/operations.md (the gateway's own 413/502/504).
export const API_NAMES = ['secrets', 'scheduler', 'boxes', 'registry', 'controller'] as const;
export type ApiName = (typeof API_NAMES)[number];

export const API_TITLES: Record<ApiName, string> = {
  secrets: 'Secrets',
  scheduler: 'Scheduler',
  boxes: 'Boxes',
  registry: 'Registry',
  controller: 'Controller',
};

const STATUS_TEXT: Record<number, string> = {
  400: 'bad request',
  401: 'not signed in (401)',
  403: 'permission denied',
  404: 'not found',
  405: 'method not allowed',
  409: 'conflict',
  412: 'precondition failed',
  413: 'request body too large',
  415: 'unsupported media type',
  422: 'unprocessable entity',
  429: 'too many requests',
  500: 'internal error',
  501: 'not initialized',
  502: 'bad gateway',
  503: 'service unavailable (sealed or in maintenance)',
  504: 'gateway timeout',
};

function stringList(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string' && v.trim() !== '') : [];
}

/**
 * The API's own words for a failed response. `text` is the raw body. Secrets, registry,
 * controller: `{"errors": [...]}` (Vault may answer an empty list, then its `warnings`
 * or the status say what happened); boxes: the same plus `success: false`; scheduler:
 * plain text (Nomad), an empty body for an unknown path.
 */
export function apiErrorMessage(api: ApiName, status: number, text: string): string {
  const trimmed = text.trim();
  const fallback = STATUS_TEXT[status] ?? `HTTP ${status}`;
  if (api === 'scheduler') {
    // Nomad answers plain text; a JSON body here is a gateway page of another API.
    if (!trimmed.startsWith('{')) return trimmed === '' ? fallback : trimmed;
  }
  if (trimmed.startsWith('{')) {
    try {
      const body = JSON.parse(trimmed) as Record<string, unknown>;
      const errors = stringList(body.errors);
      if (errors.length > 0) return errors.join('; ');
      const warnings = stringList(body.warnings);
      if (warnings.length > 0) return warnings.join('; ');
      if (typeof body.message === 'string' && body.message) return body.message;
      return fallback;
    } catch {
      // Not JSON after all: fall through to the text.
    }
  }
  if (trimmed === '' || trimmed.startsWith('<')) return fallback;
  return trimmed.length > 500 ? `${trimmed.slice(0, 500)}…` : trimmed;
}

/** A failed call, carrying the API's message; what every page shows in its error state. */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  constructor(
    readonly api: ApiName,
    readonly status: number,
    message: string,
    readonly body?: unknown,
  ) {
    super(message);
  }
}

/** The message of anything a page catches: API errors verbatim, network failures named. */
export function describeError(err: unknown): string {
  if (err instanceof ApiError) return err.message;
  if (err instanceof DOMException && err.name === 'AbortError') return 'cancelled';
  if (err instanceof TypeError) return `network error: ${err.message}`;
  if (err instanceof Error) return err.message;
  return String(err);
}
