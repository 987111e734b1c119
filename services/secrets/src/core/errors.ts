// Errors in Vault's wire shape (reference §9), built on @selfstack/errors so the kit's
// `vault` error flavour renders them as `{"errors":[...]}\n` with `Cache-Control: no-store`.
// Messages that Vault wraps in go-multierror use `multierror()` so clients that match the
// exact text keep working.
import { AppError } from '@selfstack/errors';

export { AppError };

/** go-multierror's text: "1 error occurred:\n\t* x\n\n". */
export function multierror(...messages: string[]): string {
  const head = messages.length === 1 ? '1 error occurred:' : `${messages.length} errors occurred:`;
  return `${head}\n${messages.map((m) => `\t* ${m}`).join('\n')}\n\n`;
}

/** Kept as a named alias: services throw `new SecretsError(status, messages)`. */
export class SecretsError extends AppError {
  constructor(status: number, messages: readonly string[]) {
    super(status, messages);
  }
}

export const badRequest = (message: string): AppError => new AppError(400, [message]);
export const notFound = (): AppError => new AppError(404, []);
export const permissionDenied = (): AppError => new AppError(403, [multierror('permission denied')]);
export const invalidToken = (): AppError => new AppError(403, [multierror('permission denied', 'invalid token')]);
export const missingToken = (): AppError => new AppError(403, ['permission denied']);
export const unsupportedPath = (): AppError => new AppError(404, [multierror('unsupported path')]);
export const unsupportedOperation = (): AppError => new AppError(405, [multierror('unsupported operation')]);
export const sealedError = (): AppError => new AppError(503, ['Vault is sealed']);
export const notInitializedError = (): AppError => new AppError(501, ['Vault is not initialized']);
