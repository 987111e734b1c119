// Remote service discovery (spec part B "Service discovery", reference B.1):
// GET /.well-known/terraform.json answers 200 application/json with the service URLs.
// We advertise `modules.v1` (what Terraform uses; it must end with "/") and the v2 base
// for the downloads summary as `modules.v2`. Terraform only errors when `modules.v2` is
// advertised WITHOUT `modules.v1` (ErrVersionNotSupported), so both are safe together.
import type { AnyPathSpec } from '@selfstack/http-kit';
import type { RegistryExtra } from '../auth/auth.service';
import { def } from '../modules/modules.paths';

export const DISCOVERY_DOCUMENT = { 'modules.v1': '/v1/modules/', 'modules.v2': '/v2/modules/' } as const;

export function discoveryPaths(): AnyPathSpec<RegistryExtra>[] {
  return [
    def({
      pattern: 'terraform.json',
      summary: 'Terraform remote service discovery document',
      operations: {
        read() {
          return DISCOVERY_DOCUMENT;
        },
      },
    }),
  ];
}
