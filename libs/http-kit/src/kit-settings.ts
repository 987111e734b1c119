import type { Request } from 'express';
import type { ErrorFlavour } from '@selfstack/errors';
import type { Logger } from '@selfstack/logger';

/** App-wide settings that routes find at request time through `req.app.locals`. */
export interface KitSettings {
  service: string;
  flavour: ErrorFlavour;
  logger: Logger;
  maxRequestBytes: number;
  jsonWithoutContentType: boolean;
  /** Nesting levels a JSON request body may have (json-policy.ts). */
  maxBodyDepth?: number;
}

export const KIT_SETTINGS_KEY = 'selfstackKit';
export const DEFAULT_MAX_REQUEST_BYTES = 33554432; // Vault's max_request_size default (reference 8.3)

export function kitSettingsOf(req: Request): KitSettings | undefined {
  const locals = req.app?.locals as Record<string, unknown> | undefined;
  return locals?.[KIT_SETTINGS_KEY] as KitSettings | undefined;
}
