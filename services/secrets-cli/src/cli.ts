// The `secrets` command (issue 28, item 6): a Vault-style CLI over the HTTP API.
//
// Arguments are parsed by commander (tj/commander.js: the most used Node CLI parser,
// maintained, typed, nested subcommands such as `kv metadata get`, generated help, strict
// unknown-option errors). The Vault CLI's flags are Go-style, one dash (`-format=json`);
// `normaliseArgs` turns each such flag into commander's `--format=json` before parsing,
// so both spellings work, and flags may come before or after the positional arguments.
//
// Exit codes as the Vault CLI documents them (hashicorp/vault website/.../commands/index:
// "Local errors such as incorrect flags, failed validations, or wrong numbers of arguments
// return an exit code of 1. Any remote errors such as API failures, bad TLS, or incorrect
// API parameters return an exit status of 2"): 0 success, 1 local/usage, 2 remote.
import { Command, CommanderError, Option } from 'commander';
import { ApiError, TransportError } from './api-client';
import type { CliIo } from './cli-context';
import type { Runner } from './command-kit';
import { UsageError } from './format';
import { registerAdmin } from './commands/admin';
import { registerGeneric } from './commands/generic';
import { registerKv } from './commands/kv';
import { registerOperator } from './commands/operator';
import { registerToken } from './commands/token';

export const EXIT_OK = 0;
export const EXIT_LOCAL = 1;
export const EXIT_REMOTE = 2;

/** `-flag`, `-flag=value` (Go style) -> `--flag`, `--flag=value`; `-h` and `--x` unchanged; nothing after `--`. */
export function normaliseArgs(argv: readonly string[]): string[] {
  const out: string[] = [];
  let rest = false;
  for (const arg of argv) {
    if (rest) out.push(arg);
    else if (arg === '--') {
      rest = true;
      out.push(arg);
    } else if (/^-[A-Za-z][A-Za-z0-9_-]+(=[\s\S]*)?$/.test(arg)) out.push(`-${arg}`);
    else out.push(arg);
  }
  return out;
}

export function buildProgram(runner: Runner): Command {
  const program = new Command('secrets')
    .description('Command-line client of the secrets service (a Vault-compatible API).')
    .exitOverride()
    .configureOutput({ writeOut: (s) => runner.io.stdout(s), writeErr: (s) => runner.io.stderr(s) })
    .option('--address <url>', 'Server address (env SECRETS_ADDR or VAULT_ADDR; default https://127.0.0.1:8200)')
    .option('--token <token>', 'Client token (env SECRETS_TOKEN or VAULT_TOKEN; default: the token stored by login)')
    .option('--namespace <path>', 'Namespace of the request (env SECRETS_NAMESPACE or VAULT_NAMESPACE)')
    .addOption(new Option('--ns <path>', 'Alias of -namespace').hideHelp())
    .option('--ca-cert <file>', 'PEM file of the CA that signed the server certificate (env SECRETS_CACERT or VAULT_CACERT)')
    .option('--tls-skip-verify', 'Do not verify the server certificate: insecure (env SECRETS_SKIP_VERIFY or VAULT_SKIP_VERIFY)')
    .option('--format <format>', 'Output: table or json (env SECRETS_FORMAT or VAULT_FORMAT)');
  registerOperator(program, runner);
  registerToken(program, runner);
  registerKv(program, runner);
  registerAdmin(program, runner);
  registerGeneric(program, runner);
  const configure = (cmd: Command): void => {
    cmd.exitOverride().configureOutput({ writeOut: (s) => runner.io.stdout(s), writeErr: (s) => runner.io.stderr(s) });
    for (const c of cmd.commands) configure(c);
  };
  for (const c of program.commands) configure(c);
  return program;
}

/** Runs one command line; resolves with the exit code (never exits the process itself). */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  const runner: Runner = { io, last: undefined };
  const program = buildProgram(runner);
  try {
    await program.parseAsync(normaliseArgs(argv), { from: 'user' });
    return runner.last?.exitCode ?? EXIT_OK;
  } catch (err) {
    if (err instanceof CommanderError) {
      // Help asked for: success; any parse error (already printed by commander): local.
      return err.code === 'commander.helpDisplayed' || err.code === 'commander.version' ? EXIT_OK : EXIT_LOCAL;
    }
    if (err instanceof UsageError) {
      io.stderr(`Error: ${err.message}\n`);
      return EXIT_LOCAL;
    }
    if (err instanceof ApiError) {
      io.stderr(`Error: ${err.message}\n`);
      return EXIT_REMOTE;
    }
    if (err instanceof TransportError) {
      io.stderr(`Error: ${err.message}\n`);
      return EXIT_REMOTE;
    }
    io.stderr(`Error: ${err instanceof Error ? err.message : String(err)}\n`);
    return EXIT_LOCAL;
  }
}
