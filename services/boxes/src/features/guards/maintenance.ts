// Maintenance mode (spec "Errors": 503 "temporary maintenance mode"). Switched by the
// admin CLI through boxes.settings; every replica re-reads the flag at most every
// `cacheMs`, so a switch takes effect within that delay without a restart.
import { ServiceUnavailableError } from '@selfstack/errors';

export const MAINTENANCE_KEY = 'maintenance';

export interface MaintenanceState {
  enabled: boolean;
  message: string;
}

export interface MaintenanceGate {
  current(): Promise<MaintenanceState>;
  /** Throws 503 while maintenance mode is on. */
  check(): Promise<void>;
}

export function parseMaintenance(value: string | null): MaintenanceState {
  if (value === null) return { enabled: false, message: '' };
  try {
    const parsed = JSON.parse(value) as { message?: unknown };
    return { enabled: true, message: typeof parsed.message === 'string' ? parsed.message : '' };
  } catch {
    return { enabled: true, message: '' };
  }
}

export function createMaintenanceGate(options: { read: () => Promise<string | null>; cacheMs: number; now?: () => number }): MaintenanceGate {
  const now = options.now ?? Date.now;
  let cached: { state: MaintenanceState; at: number } | undefined;
  let inflight: Promise<MaintenanceState> | undefined;
  const current = async (): Promise<MaintenanceState> => {
    if (cached && now() - cached.at < options.cacheMs) return cached.state;
    inflight ??= options
      .read()
      .then((v) => {
        const state = parseMaintenance(v);
        cached = { state, at: now() };
        return state;
      })
      .finally(() => {
        inflight = undefined;
      });
    return inflight;
  };
  return {
    current,
    async check() {
      const state = await current();
      if (state.enabled) {
        throw new ServiceUnavailableError(state.message || 'The service is in maintenance mode; try again later', { headers: { 'Retry-After': '60' } });
      }
    },
  };
}
