// Delivery of two-factor codes (issue 5 item 3). Pluggable: the default "outbox" sender
// stores the message in boxes.two_factor_outbox and logs that it did (never the code),
// for an operator or a relay to deliver; the webhook sender POSTs the message to an HTTP
// endpoint (an SMS gateway adapter) and is the real option.
import { ServiceUnavailableError } from '@selfstack/errors';
import type { Logger } from '@selfstack/logger';
import type { AuthStore } from './auth.store';

export interface TwoFactorMessage {
  accountId: string;
  username: string;
  deliveryMethod: 'sms';
  destination: string;
  code: string;
  /** Human-readable text containing the code. */
  message: string;
  expiresAt: Date;
}

export interface TwoFactorSender {
  readonly kind: string;
  send(message: TwoFactorMessage): Promise<void>;
}

export function createOutboxSender(options: { authStore: AuthStore; logger: Logger }): TwoFactorSender {
  return {
    kind: 'outbox',
    async send(m) {
      const row = await options.authStore.addOutbox({ accountId: m.accountId, deliveryMethod: m.deliveryMethod, destination: m.destination, message: m.message });
      options.logger.info('two-factor code queued in outbox', { outbox_id: row.id, username: m.username, delivery_method: m.deliveryMethod, destination: obfuscate(m.destination) });
    },
  };
}

export interface WebhookSenderOptions {
  url: string;
  /** Sent as `Authorization: Bearer <token>` when set. */
  bearerToken?: string;
  timeoutMs?: number;
  logger: Logger;
  fetchImpl?: typeof fetch;
}

/**
 * POSTs `{"delivery_method","destination","message","code","username","expires_at"}` as
 * JSON; any 2xx is success. Failures surface as 503 so the client may retry.
 */
export function createWebhookSender(options: WebhookSenderOptions): TwoFactorSender {
  const doFetch = options.fetchImpl ?? fetch;
  return {
    kind: 'webhook',
    async send(m) {
      const headers: Record<string, string> = { 'Content-Type': 'application/json' };
      if (options.bearerToken) headers.Authorization = `Bearer ${options.bearerToken}`;
      let status: number;
      try {
        const res = await doFetch(options.url, {
          method: 'POST',
          headers,
          body: JSON.stringify({
            delivery_method: m.deliveryMethod,
            destination: m.destination,
            message: m.message,
            code: m.code,
            username: m.username,
            expires_at: m.expiresAt.toISOString(),
          }),
          signal: AbortSignal.timeout(options.timeoutMs ?? 5000),
        });
        status = res.status;
        await res.arrayBuffer().catch(() => undefined);
      } catch (err) {
        options.logger.warn('two-factor webhook failed', { error: err instanceof Error ? err.message : String(err) });
        throw new ServiceUnavailableError('Could not deliver the two-factor code; try again later');
      }
      if (status < 200 || status >= 300) {
        options.logger.warn('two-factor webhook refused the message', { status });
        throw new ServiceUnavailableError('Could not deliver the two-factor code; try again later');
      }
      options.logger.info('two-factor code sent through webhook', { username: m.username, destination: obfuscate(m.destination) });
    },
  };
}

/** "SMS number ending in 7890" (reference A.2 #4). */
export function obfuscate(destination: string): string {
  const digits = destination.replace(/\D/g, '');
  return `SMS number ending in ${digits.slice(-4)}`;
}
