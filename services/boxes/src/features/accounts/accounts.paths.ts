// GET /api/v1/user/:username (spec "Organization or user"; reference A.3: the CLI finds
// boxes in this list before reading them, so it must list every box the caller may see).
import { z } from 'zod';
import { definePath, type AnyPathSpec } from '@selfstack/http-kit';
import type { BoxesExtra } from '../../shared/request-context';
import type { BoxService } from '../boxes/boxes.service';

export function createAccountPaths(deps: { boxService: BoxService }): AnyPathSpec<BoxesExtra>[] {
  return [
    definePath({
      pattern: 'user/:username',
      summary: 'Read a user or organization and its boxes',
      fields: { username: { in: 'path', schema: z.string(), required: true, description: 'Username of the user or organization' } },
      operations: {
        read: (ctx) => deps.boxService.readOrganization(ctx.extra.caller, ctx.params.username),
      },
    }),
  ];
}
