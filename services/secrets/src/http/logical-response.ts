// What a logical handler returns (reference §1): data plus optional warnings, auth block,
// lease duration. `injectTopLevel` marks Vault's "injector" sys routes whose data keys are
// duplicated at the top level of the JSON (reference §0.9, §4).

export interface LogicalResponseInit {
  data?: unknown;
  warnings?: string[];
  auth?: Record<string, unknown> | null;
  leaseDuration?: number;
  renewable?: boolean;
  injectTopLevel?: boolean;
  /** The whole body, written as JSON without the envelope (Vault's HTTPRawBody, as
   * sys/internal/specs/openapi answers). */
  rawBody?: unknown;
}

export class LogicalResponse {
  constructor(readonly init: LogicalResponseInit) {}
}

export const respondWith = (init: LogicalResponseInit): LogicalResponse => new LogicalResponse(init);
