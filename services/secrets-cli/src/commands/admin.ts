// `secrets enable|disable|list`, `auth enable|disable|list`, `policy write|read|list|delete`
// and `namespace create|list|delete` (reference §4.7, §4.8, §4.10). The namespace commands
// use the anchor's `sys/namespaces/<path>` routes (issue 28, item 1), relative to the
// namespace of `-namespace` / SECRETS_NAMESPACE / VAULT_NAMESPACE.
import type { Command } from 'commander';
import { readFile } from 'node:fs/promises';
import { action, expectArgs, intValue, sub, type Runner } from '../command-kit';
import { ApiError } from '../api-client';
import { json, table, UsageError } from '../format';
import { encodePath } from './kv';
import { withoutUndefined } from './token';

const trimSlashes = (p: string): string => p.replace(/^\/+|\/+$/g, '');

function mountRows(data: Record<string, Record<string, unknown>>, detailed: boolean): string {
  const header = detailed ? ['Path', 'Type', 'Accessor', 'Version', 'Description'] : ['Path', 'Type', 'Accessor', 'Description'];
  const rows = Object.keys(data)
    .sort()
    .map((path) => {
      const m = data[path] ?? {};
      const version = ((m.options as { version?: string } | null) ?? {}).version ?? 'n/a';
      const base = [path, String(m.type ?? ''), String(m.accessor ?? '')];
      return detailed ? [...base, version, String(m.description ?? '') || 'n/a'] : [...base, String(m.description ?? '') || 'n/a'];
    });
  return table(header, rows);
}

export function registerAdmin(program: Command, runner: Runner): void {
  const secrets = program.command('secrets').description('Enable, disable and list secrets engines.');
  sub(secrets, 'enable', 'Enable a secrets engine: secrets enable [-path=P] [-version=2] TYPE')
    .option('--path <path>', 'Where to mount it (default: the type)')
    .option('--description <text>', 'Human-friendly description')
    .option('--version <n>', 'KV version (1 or 2)')
    .option('--default-lease-ttl <duration>', 'Default lease TTL')
    .option('--max-lease-ttl <duration>', 'Maximum lease TTL')
    .action(
      action(runner, async (ctx, args, opts) => {
        expectArgs(args, 1);
        const type = args[0] as string;
        const path = trimSlashes(String(opts.path ?? type));
        const version = intValue(opts.version, 'version');
        const config = withoutUndefined({ default_lease_ttl: opts.defaultLeaseTtl, max_lease_ttl: opts.maxLeaseTtl });
        await (await ctx.client()).request('POST', `sys/mounts/${encodePath(path)}`, {
          body: withoutUndefined({
            type,
            description: opts.description,
            options: version !== undefined ? { version: String(version) } : undefined,
            config: Object.keys(config).length > 0 ? config : undefined,
          }),
        });
        ctx.out(`Success! Enabled the ${type} secrets engine at: ${path}/`);
      }),
    );
  sub(secrets, 'disable', 'Disable a secrets engine and delete its data: secrets disable PATH').action(
    action(runner, async (ctx, args) => {
      expectArgs(args, 1);
      const path = trimSlashes(args[0] as string);
      await (await ctx.client()).request('DELETE', `sys/mounts/${encodePath(path)}`);
      ctx.out(`Success! Disabled the secrets engine (if it existed) at: ${path}/`);
    }),
  );
  sub(secrets, 'list', 'List the enabled secrets engines.')
    .option('--detailed', 'Show the KV version too')
    .action(
      action(runner, async (ctx, args, opts) => {
        expectArgs(args, 0);
        const r = await (await ctx.client()).request('GET', 'sys/mounts');
        const data = (r.body as { data: Record<string, Record<string, unknown>> }).data;
        ctx.out(ctx.format === 'json' ? json(data) : mountRows(data, opts.detailed === true));
      }),
    );

  const auth = program.command('auth').description('Enable, disable and list auth methods.');
  sub(auth, 'enable', 'Enable an auth method: auth enable [-path=P] TYPE (userpass, approle)')
    .option('--path <path>', 'Where to mount it (default: the type)')
    .option('--description <text>', 'Human-friendly description')
    .action(
      action(runner, async (ctx, args, opts) => {
        expectArgs(args, 1);
        const type = args[0] as string;
        const path = trimSlashes(String(opts.path ?? type));
        await (await ctx.client()).request('POST', `sys/auth/${encodePath(path)}`, { body: withoutUndefined({ type, description: opts.description }) });
        ctx.out(`Success! Enabled ${type} auth method at: ${path}/`);
      }),
    );
  sub(auth, 'disable', 'Disable an auth method (its tokens are revoked): auth disable PATH').action(
    action(runner, async (ctx, args) => {
      expectArgs(args, 1);
      const path = trimSlashes(args[0] as string);
      await (await ctx.client()).request('DELETE', `sys/auth/${encodePath(path)}`);
      ctx.out(`Success! Disabled the auth method (if it existed) at: ${path}/`);
    }),
  );
  sub(auth, 'list', 'List the enabled auth methods.').action(
    action(runner, async (ctx, args) => {
      expectArgs(args, 0);
      const r = await (await ctx.client()).request('GET', 'sys/auth');
      const data = (r.body as { data: Record<string, Record<string, unknown>> }).data;
      ctx.out(ctx.format === 'json' ? json(data) : mountRows(data, false));
    }),
  );

  const policy = program.command('policy').description('Write, read, list and delete ACL policies.');
  sub(policy, 'write', 'Upload a policy: policy write NAME FILE (FILE "-" reads standard input)').action(
    action(runner, async (ctx, args) => {
      expectArgs(args, 2);
      const [name, file] = args as [string, string];
      let text: string;
      try {
        text = file === '-' ? await ctx.io.readStdin() : await readFile(file, 'utf8');
      } catch (err) {
        throw new UsageError(`Error opening policy file: ${(err as Error).message}`);
      }
      await (await ctx.client()).request('PUT', `sys/policies/acl/${encodeURIComponent(name)}`, { body: { policy: text } });
      ctx.out(`Success! Uploaded policy: ${name}`);
    }),
  );
  sub(policy, 'read', 'Print a policy: policy read NAME').action(
    action(runner, async (ctx, args) => {
      expectArgs(args, 1);
      const r = await (await ctx.client()).request('GET', `sys/policies/acl/${encodeURIComponent(args[0] as string)}`, { allow: [404] });
      if (r.status === 404) {
        ctx.io.stderr(`No policy named: ${args[0]}\n`);
        ctx.exitCode = 2;
        return;
      }
      const data = (r.body as { data: { name: string; policy: string } }).data;
      ctx.out(ctx.format === 'json' ? json(data) : data.policy);
    }),
  );
  sub(policy, 'list', 'List the policies.').action(
    action(runner, async (ctx, args) => {
      expectArgs(args, 0);
      const r = await (await ctx.client()).request('GET', 'sys/policy');
      const keys = (r.body as { data: { policies: string[] } }).data.policies;
      ctx.out(ctx.format === 'json' ? json(keys) : keys.join('\n'));
    }),
  );
  sub(policy, 'delete', 'Delete a policy: policy delete NAME').action(
    action(runner, async (ctx, args) => {
      expectArgs(args, 1);
      await (await ctx.client()).request('DELETE', `sys/policies/acl/${encodeURIComponent(args[0] as string)}`);
      ctx.out(`Success! Deleted policy: ${args[0]}`);
    }),
  );

  const namespace = program.command('namespace').description('Create, list and delete namespaces (sys/namespaces).');
  sub(namespace, 'create', 'Create a namespace: namespace create PATH').action(
    action(runner, async (ctx, args) => {
      expectArgs(args, 1);
      const path = trimSlashes(args[0] as string);
      const r = await (await ctx.client()).request('POST', `sys/namespaces/${encodePath(path)}`);
      ctx.out(ctx.format === 'json' ? json(r.body) : `Success! Created namespace: ${path}/`);
    }),
  );
  sub(namespace, 'list', 'List the namespaces under the current one.').action(
    action(runner, async (ctx, args) => {
      expectArgs(args, 0);
      let keys: string[];
      try {
        const r = await (await ctx.client()).request('LIST', 'sys/namespaces');
        keys = (r.body as { data: { keys: string[] } }).data.keys;
      } catch (err) {
        // An empty listing is 404 with no errors (reference §0.2); any other 404 is the server's error.
        if (err instanceof ApiError && err.status === 404 && err.errors.length === 0) {
          ctx.io.stderr('No namespaces found\n');
          ctx.exitCode = 2;
          return;
        }
        throw err;
      }
      ctx.out(ctx.format === 'json' ? json(keys) : table(['Keys'], keys.map((k) => [k])));
    }),
  );
  sub(namespace, 'delete', 'Delete a namespace: namespace delete PATH').action(
    action(runner, async (ctx, args) => {
      expectArgs(args, 1);
      const path = trimSlashes(args[0] as string);
      await (await ctx.client()).request('DELETE', `sys/namespaces/${encodePath(path)}`);
      ctx.out(`Success! Namespace deleted at: ${path}/`);
    }),
  );
}
