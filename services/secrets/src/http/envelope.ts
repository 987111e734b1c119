// The response envelope (reference §1) and the writers for every success shape:
// 204 with no body, 200 envelope (keys in Go's struct order), injector responses (a Go
// map, so keys sorted), raw sys bodies, and the kit's Reply for another status ("404 with
// a body" for a deleted KV v2 version, or no body). They run under the /v1 handler, which
// has set `Cache-Control: no-store` on the response already.
import type { ServerResponse } from 'node:http';
import { Reply, sendJson } from '@selfstack/http-kit';
import { stringifyWithRaw } from '../core/json';
import { LogicalResponse } from './logical-response';

const JSON_TYPE = 'application/json';

export function writeNoContent(res: ServerResponse, status = 204): void {
  res.statusCode = status;
  res.setHeader('Content-Type', JSON_TYPE);
  res.end();
}

export interface EnvelopeContext {
  requestId: string;
  mountType: string;
  unknownParams: readonly string[];
}

export function unknownParamsWarning(params: readonly string[]): string {
  return `Endpoint ignored these unrecognized parameters: [${params.join(' ')}]`;
}

function sortedObject(input: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(input).sort()) out[k] = input[k];
  return out;
}

export function envelope(ctx: EnvelopeContext, r: LogicalResponse['init']): Record<string, unknown> {
  const warnings = [...(r.warnings ?? [])];
  if (ctx.unknownParams.length > 0) warnings.push(unknownParamsWarning(ctx.unknownParams));
  const body: Record<string, unknown> = {
    request_id: ctx.requestId,
    lease_id: '',
    renewable: r.renewable ?? false,
    lease_duration: r.leaseDuration ?? 0,
    data: r.data ?? null,
    wrap_info: null,
    warnings: warnings.length > 0 ? warnings : null,
    auth: r.auth ?? null,
    mount_type: ctx.mountType,
  };
  if (r.injectTopLevel && r.data !== null && typeof r.data === 'object' && !Array.isArray(r.data)) {
    return sortedObject({ ...(r.data as Record<string, unknown>), ...body });
  }
  return body;
}

/**
 * `stringifyWithRaw(envelope(ctx, r))` without building the envelope object (the common
 * case, no injected top-level keys): the same text, member for member.
 */
export function envelopeText(ctx: EnvelopeContext, r: LogicalResponse['init']): string {
  let warnings = r.warnings;
  if (ctx.unknownParams.length > 0) warnings = [...(warnings ?? []), unknownParamsWarning(ctx.unknownParams)];
  return (
    `{"request_id":${JSON.stringify(ctx.requestId)},"lease_id":"","renewable":${r.renewable ?? false},` +
    `"lease_duration":${stringifyWithRaw(r.leaseDuration ?? 0)},"data":${stringifyWithRaw(r.data ?? null)},"wrap_info":null,` +
    `"warnings":${warnings && warnings.length > 0 ? JSON.stringify(warnings) : 'null'},"auth":${stringifyWithRaw(r.auth ?? null)},` +
    `"mount_type":${JSON.stringify(ctx.mountType)}}`
  );
}

/** Writes whatever a logical handler returned. A Reply's body is the envelope's content. */
export function writeLogical(res: ServerResponse, ctx: EnvelopeContext, result: unknown): void {
  if (result instanceof Reply) {
    const body = result.body as LogicalResponse['init'] | undefined;
    if (body === undefined) {
      // Vault answers a merge-patch of a missing key or metadata 404 with no body; the spec
      // says every status >= 400 carries `{"errors":[...]}` (issue 28, item 4), as Vault's
      // own missing reads do.
      if (result.status >= 400) sendJson(res, result.status, '{"errors":[]}\n');
      else {
        res.statusCode = result.status;
        res.end();
      }
      return;
    }
    sendJson(res, result.status, `${stringifyWithRaw(envelope(ctx, body))}\n`);
    return;
  }
  if (result === undefined || result === null) {
    if (ctx.unknownParams.length === 0) {
      writeNoContent(res);
      return;
    }
    sendJson(res, 200, `${JSON.stringify(envelope(ctx, {}))}\n`);
    return;
  }
  const init: LogicalResponse['init'] = result instanceof LogicalResponse ? result.init : { data: result };
  if (init.rawBody !== undefined) {
    sendJson(res, 200, JSON.stringify(init.rawBody));
    return;
  }
  sendJson(res, 200, `${init.injectTopLevel ? stringifyWithRaw(envelope(ctx, init)) : envelopeText(ctx, init)}\n`);
}

/** The raw sys handlers (init, seal-status, unseal, health, leader): a bare JSON body, with
 * a Reply's status where it is not 200. */
export function writeRaw(res: ServerResponse, result: unknown): void {
  if (result instanceof Reply) sendJson(res, result.status, `${JSON.stringify(result.body)}\n`);
  else sendJson(res, 200, `${JSON.stringify(result)}\n`);
}
