// Which APIs this page can reach (issue 32: "served by one service's port versus the
// gateway"). The console only calls its own origin (the CSP allows nothing else), so:
//   - through the gateway (nginx, or `make dev`'s dev gateway), all five APIs are here:
//     scheduler, secrets, boxes and registry by path prefix (infra/nginx/selfstack/
//     routes.conf), the controller's API under /controller/;
//   - served by the secrets or the scheduler service on its own port, only that API is.
import type { ApiName } from './api-errors';

export type Reach =
  | { readonly mode: 'gateway' }
  | { readonly mode: 'single'; readonly service: 'secrets' | 'scheduler' }
  | { readonly mode: 'unknown' };

export type Availability = { readonly ok: true; readonly base: string } | { readonly ok: false; readonly reason: string };

/** Path prefix of the controller's API on the gateway (its own /v1/ would be the secrets one). */
export const CONTROLLER_PREFIX = '/controller';

export function availability(reach: Reach, api: ApiName): Availability {
  if (reach.mode === 'gateway') return { ok: true, base: api === 'controller' ? CONTROLLER_PREFIX : '' };
  if (reach.mode === 'single') {
    if (api === reach.service) return { ok: true, base: '' };
    return {
      ok: false,
      reason: `This page is served by the ${reach.service} service on its own port, which carries only the ${reach.service} API. Open the console through the gateway (port 8080, or the address \`make dev\` prints) to use the ${api} API.`,
    };
  }
  return { ok: false, reason: 'Could not tell which service serves this page (no gateway health check, no secrets or scheduler API answered).' };
}

/** Reads what a probe of the origin answered: pure, so the decision is unit-tested. */
export function reachFromProbes(probes: {
  readonly gateway?: { status: number; text: string };
  readonly sealStatus?: { status: number; text: string };
  readonly leader?: { status: number; text: string };
}): Reach {
  if (probes.gateway?.status === 200 && probes.gateway.text.trim() === 'ok') return { mode: 'gateway' };
  const json = (text: string): unknown => {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      return undefined;
    }
  };
  const seal = probes.sealStatus ? json(probes.sealStatus.text) : undefined;
  if (seal && typeof seal === 'object' && typeof (seal as { sealed?: unknown }).sealed === 'boolean') return { mode: 'single', service: 'secrets' };
  // Nomad's /v1/status/leader answers a JSON string ("127.0.0.1:4647"); with ACLs it may be 403 text.
  if (probes.leader && (typeof json(probes.leader.text) === 'string' || probes.leader.status === 403)) return { mode: 'single', service: 'scheduler' };
  return { mode: 'unknown' };
}

async function probe(path: string): Promise<{ status: number; text: string } | undefined> {
  try {
    const res = await fetch(path, { headers: { Accept: 'application/json, text/plain' }, cache: 'no-store' });
    return { status: res.status, text: await res.text() };
  } catch {
    return undefined;
  }
}

export async function detectReach(): Promise<Reach> {
  const gateway = await probe('/_gateway/health');
  if (gateway?.status === 200) return reachFromProbes({ gateway });
  const [sealStatus, leader] = await Promise.all([probe('/v1/sys/seal-status'), probe('/v1/status/leader')]);
  return reachFromProbes({ gateway, sealStatus, leader });
}
