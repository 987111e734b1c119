// `login` (token, userpass, approle) and `token create|lookup|renew|revoke` (reference §5).
import type { Command } from 'commander';
import { action, boolValue, expectArgs, intValue, repeatable, sub, type Runner } from '../command-kit';
import { parseKeyValues, type CliContext } from '../cli-context';
import { json, kvTable, UsageError } from '../format';

interface AuthBlock {
  client_token: string;
  accessor: string;
  policies: string[] | null;
  token_policies: string[] | null;
  metadata: Record<string, string> | null;
  lease_duration: number;
  renewable: boolean;
}

/** Go's Duration.String() for whole seconds, as the Vault CLI prints token_duration. */
export function goDuration(seconds: number): string {
  if (seconds <= 0) return '∞';
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  return h > 0 ? `${h}h${m}m${s}s` : m > 0 ? `${m}m${s}s` : `${s}s`;
}

function authTable(a: AuthBlock): string {
  const rows: Record<string, unknown> = {
    token: a.client_token,
    token_accessor: a.accessor,
    token_duration: goDuration(a.lease_duration),
    token_renewable: a.renewable,
    token_policies: a.token_policies ?? a.policies ?? [],
    identity_policies: [],
    policies: a.policies ?? [],
  };
  for (const [k, v] of Object.entries(a.metadata ?? {})) rows[`token_meta_${k}`] = v;
  return kvTable(rows, true);
}

function printAuth(ctx: CliContext, body: unknown): void {
  const auth = (body as { auth?: AuthBlock | null }).auth;
  if (ctx.format === 'json' || !auth) {
    ctx.out(json(body));
    return;
  }
  ctx.out(authTable(auth));
}

function lookupToAuth(id: string, data: Record<string, unknown>): AuthBlock {
  return {
    client_token: id,
    accessor: String(data.accessor ?? ''),
    policies: (data.policies as string[] | null) ?? [],
    token_policies: (data.policies as string[] | null) ?? [],
    metadata: (data.meta as Record<string, string> | null) ?? null,
    lease_duration: Number(data.ttl ?? 0),
    renewable: data.renewable === true,
  };
}

export function registerToken(program: Command, runner: Runner): void {
  sub(program, 'login', 'Authenticate and store the token for later commands: login TOKEN | login -method=userpass username=U [password=P] | login -method=approle role_id=R secret_id=S')
    .option('--method <method>', 'Auth method: token, userpass or approle', 'token')
    .option('--path <path>', 'Mount path of the auth method (default: the method name)')
    .option('--no-store', 'Do not store the token in the token helper')
    .action(
      action(runner, async (ctx, args, opts) => {
        const method = String(opts.method);
        const client = await ctx.client();
        let body: unknown;
        let token = '';
        if (method === 'token') {
          expectArgs(args, 0, 1);
          token = args[0] === undefined || args[0] === '-' ? (await ctx.io.readStdin()).trim() : (args[0] as string);
          if (token === '') throw new UsageError('A token is required: secrets login TOKEN (or - to read it from standard input)');
          const look = await client.request('GET', 'auth/token/lookup-self', { token });
          const data = (look.body as { data: Record<string, unknown> }).data;
          body = { ...(look.body as object), auth: lookupToAuth(token, data) };
        } else if (method === 'userpass' || method === 'approle') {
          const kv = await parseKeyValues(args, ctx.io);
          const path = String(opts.path ?? method).replace(/^\/+|\/+$/g, '');
          if (method === 'userpass') {
            const username = kv.username;
            if (!username) throw new UsageError('Missing username: secrets login -method=userpass username=NAME [password=PASSWORD]');
            const password = kv.password ?? (await ctx.io.readStdin()).replace(/\r?\n$/, '');
            body = (await client.request('POST', `auth/${path}/login/${encodeURIComponent(username)}`, { body: { password }, token: null })).body;
          } else {
            if (!kv.role_id) throw new UsageError('Missing role_id: secrets login -method=approle role_id=ID secret_id=SECRET');
            body = (await client.request('POST', `auth/${path}/login`, { body: { role_id: kv.role_id, secret_id: kv.secret_id }, token: null })).body;
          }
          token = (body as { auth: AuthBlock }).auth.client_token;
        } else {
          throw new UsageError(`Unknown auth method: ${method}. Use "token", "userpass" or "approle".`);
        }
        // commander turns `--no-store` into `store: false`.
        if (opts.store !== false) await ctx.tokens.store(token);
        if (ctx.format === 'table') {
          ctx.out(
            opts.store !== false
              ? 'Success! You are now authenticated. The token information displayed below is already\nstored in the token helper. You do NOT need to run "secrets login" again. Future requests\nwill use this token automatically.\n'
              : 'Success! You are now authenticated. The token was not stored (-no-store).\n',
          );
        }
        printAuth(ctx, body);
      }),
    );

  const token = program.command('token').description('Create, look up, renew and revoke tokens.');
  sub(token, 'create', 'Create a token (a child of the current one unless -orphan).')
    .addOption(repeatable('--policy <name>', 'A policy of the new token (repeatable)'))
    .addOption(repeatable('--metadata <key=value>', 'Metadata of the new token (repeatable)'))
    .option('--ttl <duration>', 'Initial TTL')
    .option('--explicit-max-ttl <duration>', 'Hard cap on the TTL')
    .option('--num-uses <n>', 'Number of uses (0 = unlimited)')
    .option('--display-name <name>', 'Display name')
    .option('--orphan', 'Create a token with no parent')
    .option('--no-default-policy', 'Do not attach the default policy')
    .option('--renewable <bool>', 'Whether the token can be renewed (default true)')
    .option('--id <id>', 'The token value (root only)')
    .action(
      action(runner, async (ctx, args, opts) => {
        expectArgs(args, 0);
        const meta = opts.metadata ? await parseKeyValues(opts.metadata as string[], ctx.io) : undefined;
        const body: Record<string, unknown> = {
          policies: opts.policy,
          meta,
          ttl: opts.ttl,
          explicit_max_ttl: opts.explicitMaxTtl,
          num_uses: intValue(opts.numUses, 'num-uses'),
          display_name: opts.displayName,
          no_default_policy: opts.defaultPolicy === false ? true : undefined,
          renewable: boolValue(opts.renewable, 'renewable'),
          id: opts.id,
        };
        const path = opts.orphan === true ? 'auth/token/create-orphan' : 'auth/token/create';
        printAuth(ctx, (await (await ctx.client()).request('POST', path, { body: withoutUndefined(body) })).body);
      }),
    );
  sub(token, 'lookup', 'Show a token\'s properties (the current token without an argument).')
    .option('--accessor', 'The argument is an accessor')
    .action(
      action(runner, async (ctx, args, opts) => {
        expectArgs(args, 0, 1);
        const client = await ctx.client();
        const r =
          args[0] === undefined
            ? await client.request('GET', 'auth/token/lookup-self')
            : opts.accessor === true
              ? await client.request('POST', 'auth/token/lookup-accessor', { body: { accessor: args[0] } })
              : await client.request('POST', 'auth/token/lookup', { body: { token: args[0] } });
        const data = (r.body as { data?: Record<string, unknown> }).data ?? {};
        ctx.out(ctx.format === 'json' ? json(r.body) : kvTable(data));
      }),
    );
  sub(token, 'renew', 'Renew a token (the current token without an argument).')
    .option('--increment <duration>', 'Requested new TTL')
    .action(
      action(runner, async (ctx, args, opts) => {
        expectArgs(args, 0, 1);
        const client = await ctx.client();
        const increment = opts.increment;
        const r =
          args[0] === undefined
            ? await client.request('POST', 'auth/token/renew-self', { body: withoutUndefined({ increment }) })
            : await client.request('POST', 'auth/token/renew', { body: withoutUndefined({ token: args[0], increment }) });
        printAuth(ctx, r.body);
      }),
    );
  sub(token, 'revoke', 'Revoke a token and its children (-self: the current token; -accessor: by accessor).')
    .option('--self', 'Revoke the current token')
    .option('--accessor', 'The argument is an accessor')
    .option('--mode <mode>', '"orphan" keeps the children as orphans')
    .action(
      action(runner, async (ctx, args, opts) => {
        const client = await ctx.client();
        if (opts.self === true) {
          expectArgs(args, 0);
          await client.request('POST', 'auth/token/revoke-self');
        } else {
          expectArgs(args, 1);
          if (opts.mode !== undefined && opts.mode !== 'orphan') throw new UsageError(`Invalid -mode ${JSON.stringify(opts.mode)}: only "orphan"`);
          if (opts.accessor === true) await client.request('POST', 'auth/token/revoke-accessor', { body: { accessor: args[0] } });
          else await client.request('POST', opts.mode === 'orphan' ? 'auth/token/revoke-orphan' : 'auth/token/revoke', { body: { token: args[0] } });
        }
        ctx.out('Success! Revoked token (if it existed)');
      }),
    );
}

export function withoutUndefined(body: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined));
}
