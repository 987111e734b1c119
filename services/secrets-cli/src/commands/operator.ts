// `status`, `operator init|unseal|seal` (reference §4.1-4.4).
import type { Command } from 'commander';
import { action, expectArgs, intValue, sub, type Runner } from '../command-kit';
import type { CliContext } from '../cli-context';
import { json, kvTable } from '../format';

interface SealStatus {
  type: string;
  initialized: boolean;
  sealed: boolean;
  t: number;
  n: number;
  progress: number;
  nonce: string;
  version: string;
  build_date?: string;
  storage_type?: string;
  cluster_name?: string;
  cluster_id?: string;
}

function sealTable(s: SealStatus): string {
  const rows: Record<string, unknown> = {
    'Seal Type': s.type,
    Initialized: s.initialized,
    Sealed: s.sealed,
    'Total Shares': s.n,
    Threshold: s.t,
  };
  if (s.sealed) {
    rows['Unseal Progress'] = `${s.progress}/${s.t}`;
    rows['Unseal Nonce'] = s.nonce || 'n/a';
  }
  rows.Version = s.version;
  if (s.build_date) rows['Build Date'] = s.build_date;
  if (s.storage_type) rows['Storage Type'] = s.storage_type;
  if (!s.sealed) {
    rows['Cluster Name'] = s.cluster_name ?? 'n/a';
    rows['Cluster ID'] = s.cluster_id ?? 'n/a';
  }
  rows['HA Enabled'] = false;
  return kvTable(rows, true);
}

function printStatus(ctx: CliContext, s: SealStatus): void {
  ctx.out(ctx.format === 'json' ? json(s) : sealTable(s));
  // The Vault CLI: 0 unsealed, 2 sealed, 1 error.
  if (s.sealed) ctx.exitCode = 2;
}

export function registerOperator(program: Command, runner: Runner): void {
  sub(program, 'status', 'Print the seal status (exit code 0 unsealed, 2 sealed, 1 error).').action(
    action(runner, async (ctx, args) => {
      expectArgs(args, 0);
      const r = await (await ctx.client()).request('GET', 'sys/seal-status');
      printStatus(ctx, r.body as SealStatus);
    }),
  );

  const operator = program.command('operator').description('Initialise, unseal and seal the server.');
  sub(operator, 'init', 'Initialise the server: prints the unseal keys and the initial root token.')
    .option('--key-shares <n>', 'Number of key shares to split the root key into', '5')
    .option('--key-threshold <n>', 'Number of key shares needed to unseal', '3')
    .action(
      action(runner, async (ctx, args, opts) => {
        expectArgs(args, 0);
        const shares = intValue(opts.keyShares, 'key-shares') as number;
        const threshold = intValue(opts.keyThreshold, 'key-threshold') as number;
        const r = await (await ctx.client()).request('PUT', 'sys/init', { body: { secret_shares: shares, secret_threshold: threshold } });
        const b = r.body as { keys: string[]; keys_base64: string[]; root_token: string };
        if (ctx.format === 'json') {
          ctx.out(
            json({
              unseal_keys_b64: b.keys_base64,
              unseal_keys_hex: b.keys,
              unseal_shares: shares,
              unseal_threshold: threshold,
              recovery_keys_b64: [],
              recovery_keys_hex: [],
              recovery_keys_shares: 0,
              recovery_keys_threshold: 0,
              root_token: b.root_token,
            }),
          );
          return;
        }
        const lines = b.keys_base64.map((k, i) => `Unseal Key ${i + 1}: ${k}`);
        lines.push('', `Initial Root Token: ${b.root_token}`, '', `Server initialized with ${shares} key shares and a key threshold of ${threshold}.`);
        lines.push('Unseal it with "secrets operator unseal" and that many keys; keep them and the root token safe.');
        ctx.out(lines.join('\n'));
      }),
    );
  sub(operator, 'unseal', 'Submit one unseal key share (argument, or "-" to read it from standard input).')
    .option('--reset', 'Discard the key shares submitted so far')
    .action(
      action(runner, async (ctx, args, opts) => {
        const client = await ctx.client();
        if (opts.reset === true) {
          expectArgs(args, 0);
          printStatus(ctx, (await client.request('PUT', 'sys/unseal', { body: { reset: true } })).body as SealStatus);
          return;
        }
        expectArgs(args, 1);
        const key = args[0] === '-' ? (await ctx.io.readStdin()).trim() : (args[0] as string);
        printStatus(ctx, (await client.request('PUT', 'sys/unseal', { body: { key } })).body as SealStatus);
      }),
    );
  sub(operator, 'seal', 'Seal the server (needs root or sudo on sys/seal).').action(
    action(runner, async (ctx, args) => {
      expectArgs(args, 0);
      await (await ctx.client()).request('PUT', 'sys/seal');
      ctx.out('Success! Server is sealed.');
    }),
  );
}
