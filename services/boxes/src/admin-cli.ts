// Admin command-line tool (issue 5 item 1; docs/boxes.md "Admin CLI"):
//   npx tsx services/boxes/src/admin-cli.ts <command> [options]
// Reads DATABASE_URL (and the rest of the service's configuration) from the environment.
import { parseArgs } from 'node:util';
import { createBlobStoreFromConfig } from '@selfstack/blob';
import { ConfigError } from '@selfstack/config';
import { createPrismaClient } from '@selfstack/db';
import { createLogger } from '@selfstack/logger';
import { composeBoxes } from './compose';
import { createBoxReadPool } from './features/boxes/box-reads.store';
import { loadBoxesConfig } from './config';
import { AdminError, type AdminService } from './features/admin/admin.service';

export const USAGE = `Usage: admin-cli <command> [options]

Commands:
  create-user --username U --password P [--email E] [--admin] [--phone N]
  create-org --username ORG [--owner USER] [--profile MARKDOWN]
  add-member --org ORG --user USER [--role member|owner]
  remove-member --org ORG --user USER
  list-members --org ORG
  set-billing --username U --state ok|delinquent
  set-admin --username U true|false
  set-password --username U --password P
  two-factor --username U (--phone N | --disable)
  create-token --username U [--description D]     prints a new API token
  maintenance on [--message M] | off | status
  outbox --username U                            two-factor messages queued for U
`;

export interface CliIo {
  out(line: string): void;
  err(line: string): void;
}

function need(values: Record<string, unknown>, name: string): string {
  const v = values[name];
  if (typeof v !== 'string' || v === '') throw new AdminError(`--${name} is required`);
  return v;
}

/** Runs one command; returns the process exit code (0 ok, 1 failed, 2 usage). */
export async function runAdminCommand(admin: AdminService, argv: string[], io: CliIo): Promise<number> {
  const [command, ...rest] = argv;
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args: rest,
      allowPositionals: true,
      options: {
        username: { type: 'string' },
        password: { type: 'string' },
        email: { type: 'string' },
        admin: { type: 'boolean' },
        phone: { type: 'string' },
        disable: { type: 'boolean' },
        owner: { type: 'string' },
        profile: { type: 'string' },
        org: { type: 'string' },
        user: { type: 'string' },
        role: { type: 'string' },
        state: { type: 'string' },
        description: { type: 'string' },
        message: { type: 'string' },
      },
    });
  } catch (err) {
    io.err(`${err instanceof Error ? err.message : String(err)}\n\n${USAGE}`);
    return 2;
  }
  const v = parsed.values as Record<string, unknown>;
  try {
    switch (command) {
      case 'create-user': {
        const a = await admin.createUser({
          username: need(v, 'username'),
          password: need(v, 'password'),
          email: v.email as string | undefined,
          admin: v.admin === true,
          phone: v.phone as string | undefined,
        });
        io.out(`created user ${a.username}${a.isAdmin ? ' (admin)' : ''}`);
        return 0;
      }
      case 'create-org': {
        const o = await admin.createOrganization({ username: need(v, 'username'), owner: v.owner as string | undefined, profile: v.profile as string | undefined });
        io.out(`created organization ${o.username}`);
        return 0;
      }
      case 'add-member': {
        const role = (v.role as string | undefined) ?? 'member';
        if (role !== 'member' && role !== 'owner') throw new AdminError('--role must be member or owner');
        await admin.addMember({ org: need(v, 'org'), user: need(v, 'user'), role });
        io.out(`${String(v.user)} is now ${role} of ${String(v.org)}`);
        return 0;
      }
      case 'remove-member':
        await admin.removeMember({ org: need(v, 'org'), user: need(v, 'user') });
        io.out(`${String(v.user)} removed from ${String(v.org)}`);
        return 0;
      case 'list-members':
        for (const m of await admin.listMembers(need(v, 'org'))) io.out(`${m.username}\t${m.role}`);
        return 0;
      case 'set-billing': {
        const state = need(v, 'state');
        if (state !== 'ok' && state !== 'delinquent') throw new AdminError('--state must be ok or delinquent');
        const a = await admin.setBilling(need(v, 'username'), state);
        io.out(`billing state of ${a.username}: ${a.billingState}`);
        return 0;
      }
      case 'set-admin': {
        const flag = parsed.positionals[0];
        if (flag !== 'true' && flag !== 'false') throw new AdminError('set-admin takes true or false');
        const a = await admin.setAdmin(need(v, 'username'), flag === 'true');
        io.out(`${a.username} admin: ${a.isAdmin}`);
        return 0;
      }
      case 'set-password':
        await admin.setPassword(need(v, 'username'), need(v, 'password'));
        io.out(`password of ${String(v.username)} changed`);
        return 0;
      case 'two-factor': {
        if (v.disable !== true && typeof v.phone !== 'string') throw new AdminError('--phone N or --disable is required');
        const a = await admin.setTwoFactor(need(v, 'username'), v.disable === true ? null : (v.phone as string));
        io.out(`two-factor for ${a.username}: ${a.twoFactorEnabled ? `sms to ${a.twoFactorPhone ?? ''}` : 'disabled'}`);
        return 0;
      }
      case 'create-token': {
        const t = await admin.createToken(need(v, 'username'), (v.description as string | undefined) ?? 'created with admin-cli');
        io.out(t.token);
        return 0;
      }
      case 'maintenance': {
        const mode = parsed.positionals[0] ?? 'status';
        if (mode !== 'on' && mode !== 'off' && mode !== 'status') throw new AdminError('maintenance takes on, off or status');
        const state = mode === 'status' ? await admin.maintenance() : await admin.setMaintenance(mode === 'on', v.message as string | undefined);
        io.out(`maintenance: ${state.enabled ? 'on' : 'off'}${state.message ? ` (${state.message})` : ''}`);
        return 0;
      }
      case 'outbox':
        for (const m of await admin.outbox(need(v, 'username'))) io.out(`${m.createdAt.toISOString()}\t${m.deliveryMethod}\t${m.destination}\t${m.message}`);
        return 0;
      case undefined:
      case 'help':
      case '--help':
        io.out(USAGE);
        return command === undefined ? 2 : 0;
      default:
        io.err(`unknown command ${command}\n\n${USAGE}`);
        return 2;
    }
  } catch (err) {
    if (err instanceof AdminError) {
      io.err(`Error: ${err.message}`);
      return 1;
    }
    throw err;
  }
}

async function main(): Promise<number> {
  const config = loadBoxesConfig(process.env);
  if (!config.databaseUrl) throw new ConfigError('invalid configuration (1 problem):', [{ where: 'DATABASE_URL', message: 'is required' }]);
  const logger = createLogger({ service: 'boxes-admin', level: 'warn' });
  const prisma = createPrismaClient({ url: config.databaseUrl });
  // Opens connections only if a command reads boxes.
  const readPool = createBoxReadPool(config.databaseUrl, { max: 1 });
  try {
    const { admin } = composeBoxes(
      { prisma, readPool, blobs: createBlobStoreFromConfig(config.blob), logger },
      { signingKey: config.signingKey ?? 'unused-by-the-cli', uploadUrlTtlMs: config.uploadUrlTtlMs, maxUploadBytes: config.maxUploadBytes },
    );
    return await runAdminCommand(admin, process.argv.slice(2), {
      out: (line) => process.stdout.write(`${line}\n`),
      err: (line) => process.stderr.write(`${line}\n`),
    });
  } finally {
    await readPool.end();
    await prisma.$disconnect();
  }
}

if (require.main === module) {
  main().then(
    (code) => process.exit(code),
    (err: unknown) => {
      process.stderr.write(`Error: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(err instanceof ConfigError ? 2 : 1);
    },
  );
}
