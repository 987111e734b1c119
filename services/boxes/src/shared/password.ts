// Password hashing with argon2id (memory-hard; RFC 9106), via hash-wasm's WebAssembly
// build so no native module is needed. Stored in the PHC string format
// ($argon2id$v=19$m=...,t=...,p=...$salt$hash), which carries its own parameters: hashes
// made with other parameters keep verifying after the defaults change.
import { argon2id, argon2Verify } from 'hash-wasm';
import { randomBytes } from 'node:crypto';

export interface PasswordHashParams {
  /** KiB of memory per hash. OWASP's argon2id baseline is 19 MiB with t=2. */
  memoryKiB: number;
  iterations: number;
  parallelism: number;
}

export const DEFAULT_PASSWORD_PARAMS: PasswordHashParams = { memoryKiB: 19456, iterations: 2, parallelism: 1 };

export interface PasswordHasher {
  hash(password: string): Promise<string>;
  /** False for a wrong password or a malformed hash; never throws on bad input. */
  verify(password: string, encoded: string): Promise<boolean>;
}

export function createPasswordHasher(params: PasswordHashParams = DEFAULT_PASSWORD_PARAMS): PasswordHasher {
  return {
    async hash(password: string): Promise<string> {
      return argon2id({
        password,
        salt: randomBytes(16),
        parallelism: params.parallelism,
        iterations: params.iterations,
        memorySize: params.memoryKiB,
        hashLength: 32,
        outputType: 'encoded',
      });
    },
    async verify(password: string, encoded: string): Promise<boolean> {
      if (!encoded.startsWith('$argon2id$')) return false;
      try {
        return await argon2Verify({ password, hash: encoded });
      } catch {
        return false;
      }
    },
  };
}
