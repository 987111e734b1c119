// `read`, `write`, `delete`, `list`: any API path, as the Vault CLI's generic commands
// (what a user reaches for when no helper exists, e.g. approle roles and secret IDs).
import type { Command } from 'commander';
import { action, expectArgs, sub, type Runner } from '../command-kit';
import { parseKeyValues, type CliContext } from '../cli-context';
import { ApiError } from '../api-client';
import { json, kvTable, table } from '../format';
import { encodePath } from './kv';

function printResponse(ctx: CliContext, body: unknown, path: string): void {
  if (body === null) {
    ctx.out(`Success! Data written to: ${path}`);
    return;
  }
  if (ctx.format === 'json') {
    ctx.out(json(body));
    return;
  }
  const b = body as { data?: Record<string, unknown> | null; auth?: Record<string, unknown> | null; warnings?: string[] | null };
  const parts: string[] = [];
  if (b.warnings && b.warnings.length > 0) parts.push(`WARNING! The following warnings were returned from the server.\n${b.warnings.map((w) => `* ${w}`).join('\n')}\n`);
  if (b.auth) parts.push(kvTable(b.auth));
  else if (b.data) parts.push(kvTable(b.data));
  ctx.out(parts.join('\n'));
}

export function registerGeneric(program: Command, runner: Runner): void {
  sub(program, 'read', 'Read any path: read PATH').action(
    action(runner, async (ctx, args) => {
      expectArgs(args, 1);
      try {
        const r = await (await ctx.client()).request('GET', encodePath(args[0] as string));
        printResponse(ctx, r.body, args[0] as string);
      } catch (err) {
        if (err instanceof ApiError && err.status === 404 && err.errors.length === 0) {
          ctx.io.stderr(`No value found at ${args[0]}\n`);
          ctx.exitCode = 2;
          return;
        }
        throw err;
      }
    }),
  );
  sub(program, 'write', 'Write to any path: write PATH key=value ...').action(
    action(runner, async (ctx, args) => {
      expectArgs(args, 1, Number.MAX_SAFE_INTEGER);
      const data = await parseKeyValues(args.slice(1), ctx.io);
      const r = await (await ctx.client()).request('PUT', encodePath(args[0] as string), { body: data });
      printResponse(ctx, r.body, args[0] as string);
    }),
  );
  sub(program, 'delete', 'Delete any path: delete PATH').action(
    action(runner, async (ctx, args) => {
      expectArgs(args, 1);
      await (await ctx.client()).request('DELETE', encodePath(args[0] as string));
      ctx.out(`Success! Data deleted (if it existed) at: ${args[0]}`);
    }),
  );
  sub(program, 'list', 'List any path: list PATH').action(
    action(runner, async (ctx, args) => {
      expectArgs(args, 1);
      const path = (args[0] as string).replace(/\/?$/, '/');
      const r = await (await ctx.client()).request('LIST', encodePath(path), { allow: [404] });
      const keys = (r.body as { data?: { keys?: string[] } } | null)?.data?.keys;
      if (!keys) {
        ctx.io.stderr(`No value found at ${path}\n`);
        ctx.exitCode = 2;
        return;
      }
      ctx.out(ctx.format === 'json' ? json(keys) : table(['Keys'], keys.map((k) => [k])));
    }),
  );
}
