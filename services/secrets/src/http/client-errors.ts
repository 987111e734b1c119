// Errors the listener answers before any request reaches the app (issue 28, item 4):
// node:http rejects a malformed request, an unknown method or an oversized header block
// while parsing. They still get the spec's `{"errors":[...]}` body ("Every status >= 400
// returns the error body"), JSON headers and the listener's custom response headers.
import type { ClientErrorResponse } from '@selfstack/http-kit';
import type { CustomHeaders } from './response-headers';

/** Every method the /v1 API serves (answered in `Allow` with a 405). */
export const API_METHODS = 'GET, HEAD, POST, PUT, PATCH, DELETE, LIST';

const MESSAGES: Record<number, string[]> = {
  // Reference §9: an HTTP method the server does not know is 405 with an empty list.
  405: [],
  408: ['request timeout'],
  413: ['request too large'],
  431: ['request header fields too large'],
};

export function clientErrorResponder(customHeaders: CustomHeaders): (status: number) => ClientErrorResponse {
  return (status) => {
    const headers: Record<string, string> = { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' };
    for (const [name, value] of customHeaders.forStatus(status)) headers[name] = value;
    if (status === 405) headers.Allow = API_METHODS;
    return { headers, body: `${JSON.stringify({ errors: MESSAGES[status] ?? ['malformed HTTP request'] })}\n` };
  };
}
