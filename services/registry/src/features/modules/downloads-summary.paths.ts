// {module_v2_base_url} = /v2/modules/: the downloads summary (spec part B, reference
// B.4): week, month, year and total from the recorded download events.
import { z } from 'zod';
import type { AnyPathSpec } from '@selfstack/http-kit';
import type { RegistryExtra } from '../auth/auth.service';
import { def } from './modules.paths';
import type { ModuleService } from './modules.service';

export function downloadsSummaryPaths(deps: { modules: ModuleService }): AnyPathSpec<RegistryExtra>[] {
  const seg = (d: string) => ({ in: 'path' as const, schema: z.string().min(1).max(256), description: d, required: true as const });
  return [
    def({
      pattern: ':namespace/:name/:provider/downloads/summary',
      summary: 'Download counts of a module: last 7, 30, 365 days and all time',
      fields: { namespace: seg('Module namespace'), name: seg('Module name'), provider: seg('Provider') },
      operations: {
        read(ctx) {
          return deps.modules.downloadsSummary(ctx.params.namespace, ctx.params.name, ctx.params.provider);
        },
      },
    }),
  ];
}
