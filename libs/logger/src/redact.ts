// Secrets never reach the logs (shared ARCHITECTURE "Configuration, logging, security").
// Values are replaced by key name, case-insensitively, at any depth.

export const REDACTED = '[REDACTED]';

/**
 * Keys whose values are secret. Substring matches catch the many spellings
 * (`client_token`, `X-Vault-Token`, `db_password`, `secret_id`, `Set-Cookie`...); the exact
 * names cover unseal material (`key`, `keys`, `keys_base64`).
 */
export const DEFAULT_REDACT_PATTERN =
  /token|passw(or)?d|passphrase|secret|authorization|cookie|api[-_]?key|private[-_]?key|credential|signature|^(key|keys|keys_base64|unseal_keys?|otp|hmac_key)$/i;

const MAX_DEPTH = 12;

function redactValue(value: unknown, pattern: RegExp, seen: WeakSet<object>, depth: number): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (seen.has(value)) return '[Circular]';
  if (depth >= MAX_DEPTH) return '[Truncated]';
  seen.add(value);
  try {
    if (Array.isArray(value)) return value.map((item) => redactValue(item, pattern, seen, depth + 1));
    if (value instanceof Error) {
      const out: Record<string, unknown> = { name: value.name, message: value.message, stack: value.stack };
      for (const [k, v] of Object.entries(value)) out[k] = pattern.test(k) ? REDACTED : redactValue(v, pattern, seen, depth + 1);
      return out;
    }
    if (value instanceof Date || Buffer.isBuffer(value) || value instanceof Map || value instanceof Set) return value;
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = pattern.test(k) ? REDACTED : redactValue(v, pattern, seen, depth + 1);
    return out;
  } finally {
    seen.delete(value);
  }
}

/**
 * Returns a redacted copy of `value` (the input is never mutated: callers often log live
 * objects such as request headers).
 */
export function redact<T>(value: T, pattern: RegExp = DEFAULT_REDACT_PATTERN): T {
  return redactValue(value, pattern, new WeakSet(), 0) as T;
}

/**
 * Redacts the own enumerable properties of a winston info object in place (the info object
 * is created per log call, so mutating it is safe; its nested values are copied).
 */
export function redactInfo(info: Record<string, unknown>, pattern: RegExp = DEFAULT_REDACT_PATTERN): void {
  for (const key of Object.keys(info)) {
    if (key === 'level' || key === 'message') continue;
    const v = info[key];
    if (pattern.test(key)) info[key] = REDACTED;
    else if (typeof v === 'object' && v !== null) info[key] = redactValue(v, pattern, new WeakSet(), 0);
  }
}
