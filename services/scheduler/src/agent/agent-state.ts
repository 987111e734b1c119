// The agent's state directory (the anchor's client state DB, as files): the node identity
// (`client-id`, `secret-id`, as the anchor's data_dir/client keeps them) and one JSON file
// per allocation (AllocRecord), written atomically (temp file + rename) so a SIGKILL at
// any moment leaves either the old or the new record.
import { randomUUID } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AllocRecord } from './alloc-runner';

export interface NodeIdentity {
  id: string;
  secret: string;
}

function writeAtomic(path: string, text: string): void {
  writeFileSync(`${path}.tmp`, text, { mode: 0o600 });
  renameSync(`${path}.tmp`, path);
}

function readText(path: string): string | null {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return null;
  }
}

export function createAgentState(stateDir: string) {
  const allocs = join(stateDir, 'allocs');
  mkdirSync(allocs, { recursive: true, mode: 0o700 });
  return {
    /** The node's ID and SecretID: made once, kept across restarts. */
    identity(): NodeIdentity {
      const id = readText(join(stateDir, 'client-id'));
      const secret = readText(join(stateDir, 'secret-id'));
      if (id && secret) return { id, secret };
      const fresh = { id: randomUUID(), secret: randomUUID() };
      writeAtomic(join(stateDir, 'secret-id'), fresh.secret);
      writeAtomic(join(stateDir, 'client-id'), fresh.id);
      return fresh;
    },
    saveAlloc(r: AllocRecord): void {
      writeAtomic(join(allocs, `${r.ID}.json`), JSON.stringify(r));
    },
    removeAlloc(id: string): void {
      rmSync(join(allocs, `${id}.json`), { force: true });
    },
    loadAllocs(): AllocRecord[] {
      const out: AllocRecord[] = [];
      for (const f of readdirSync(allocs)) {
        if (!f.endsWith('.json')) continue;
        try {
          out.push(JSON.parse(readFileSync(join(allocs, f), 'utf8')) as AllocRecord);
        } catch {
          // a torn temp file never has the .json name; anything unreadable is skipped
        }
      }
      return out;
    },
  };
}

export type AgentState = ReturnType<typeof createAgentState>;
