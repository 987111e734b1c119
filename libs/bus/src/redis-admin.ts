// Operational helper: drop Redis connections by CLIENT SETNAME. Redis' CLIENT KILL has no
// NAME filter, so we look the ids up in CLIENT LIST. Used by tests to simulate a network
// failure of the bus subscriber; also handy from a REPL when a pod misbehaves.
import { Redis } from 'ioredis';

export async function killRedisClientsByName(url: string, name: string): Promise<number> {
  const admin = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await admin.connect();
    const list = (await admin.call('CLIENT', 'LIST')) as string;
    const ids = list
      .split('\n')
      .map((line) => Object.fromEntries(line.trim().split(' ').map((kv) => kv.split('=', 2) as [string, string])))
      .filter((fields) => fields['name'] === name && fields['id'] !== undefined)
      .map((fields) => fields['id'] as string);
    for (const id of ids) await admin.call('CLIENT', 'KILL', 'ID', id);
    return ids.length;
  } finally {
    admin.disconnect();
  }
}
