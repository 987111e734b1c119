// The glue between commander and the commands: one wrapper turns a command function into
// a commander action (context from the global flags, positional arguments checked by the
// command), and the argument-count messages are the Vault CLI's.
import { Command, Option } from 'commander';
import { createCliContext, type CliContext, type CliIo, type GlobalFlags } from './cli-context';
import { UsageError } from './format';

export type CommandFn = (ctx: CliContext, args: string[], opts: Record<string, unknown>) => Promise<void>;

export interface Runner {
  io: CliIo;
  /** The context of the command that ran (its exitCode is the process's). */
  last: CliContext | undefined;
}

export function action(runner: Runner, fn: CommandFn): (...a: unknown[]) => Promise<void> {
  return async (...a: unknown[]) => {
    const cmd = a[a.length - 1] as Command;
    const ctx = createCliContext(cmd.optsWithGlobals<GlobalFlags>(), runner.io);
    runner.last = ctx;
    await fn(ctx, [...cmd.args], cmd.opts());
  };
}

export function expectArgs(args: readonly string[], min: number, max = min): void {
  if (args.length < min) throw new UsageError(`Not enough arguments (expected ${min === max ? min : `${min}-${max}`}, got ${args.length})`);
  if (args.length > max) throw new UsageError(`Too many arguments (expected ${min === max ? max : `${min}-${max}`}, got ${args.length})`);
}

/** A subcommand taking any positional arguments (counted by the command itself). */
export function sub(parent: Command, name: string, description: string): Command {
  return parent.command(name).description(description).argument('[args...]').allowExcessArguments(true);
}

/** A repeatable string option (`-policy=a -policy=b`). */
export function repeatable(flags: string, description: string): Option {
  return new Option(flags, description).argParser((value: string, previous: string[] | undefined) => [...(previous ?? []), value]);
}

/** An integer option value, refused as a usage error when it is not one. */
export function intValue(value: unknown, name: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n)) throw new UsageError(`Invalid value for -${name}: ${JSON.stringify(value)} is not an integer`);
  return n;
}

/** Vault's CLI booleans: `-flag`, `-flag=true`, `-flag=false`. */
export function boolValue(value: unknown, name: string): boolean | undefined {
  if (value === undefined || typeof value === 'boolean') return value;
  if (['1', 't', 'true', 'TRUE', 'True'].includes(String(value))) return true;
  if (['0', 'f', 'false', 'FALSE', 'False'].includes(String(value))) return false;
  throw new UsageError(`Invalid value for -${name}: ${JSON.stringify(value)} is not a boolean`);
}
