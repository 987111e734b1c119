// The user's own tokens, one per API, kept in the browser's localStorage (as Vault's UI
// does) so a reload or a deep link in a new tab stays signed in. Nothing privileged is
// baked into the console: every token here was typed in or issued to this user.
import type { ApiName } from './api-errors';

const KEY = (api: ApiName) => `selfstack.console.token.${api}`;
type Listener = () => void;
const listeners = new Set<Listener>();

function storage(): Storage | undefined {
  try {
    return globalThis.localStorage;
  } catch {
    return undefined;
  }
}

export function getToken(api: ApiName): string {
  return storage()?.getItem(KEY(api)) ?? '';
}

export function setToken(api: ApiName, token: string): void {
  const s = storage();
  if (token) s?.setItem(KEY(api), token);
  else s?.removeItem(KEY(api));
  for (const l of listeners) l();
}

export function onTokensChanged(listener: Listener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** The header each API reads its token from (docs/<api>.md). */
export function authHeaders(api: ApiName, token: string): Record<string, string> {
  if (!token) return {};
  switch (api) {
    case 'secrets':
      return { 'X-Vault-Token': token };
    case 'scheduler':
      return { 'X-Nomad-Token': token };
    default:
      return { Authorization: `Bearer ${token}` };
  }
}
