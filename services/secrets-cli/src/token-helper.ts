// Where `secrets login` keeps the token for later commands: a file in the home directory,
// readable by its owner only, as the Vault CLI's default token helper keeps ~/.vault-token.
import { chmod, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export const TOKEN_FILE_NAME = '.secrets-token';

export interface TokenHelper {
  readonly path: string;
  get(): Promise<string>;
  store(token: string): Promise<void>;
  erase(): Promise<void>;
}

export function createTokenHelper(home: string): TokenHelper {
  const path = join(home, TOKEN_FILE_NAME);
  return {
    path,
    async get() {
      try {
        return (await readFile(path, 'utf8')).trim();
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return '';
        throw err;
      }
    },
    async store(token) {
      await writeFile(path, token, { mode: 0o600 });
      // writeFile's mode applies only to a new file: an existing one is narrowed too.
      await chmod(path, 0o600);
    },
    async erase() {
      await rm(path, { force: true });
    },
  };
}
