// Password hashing for userpass (issue 28, item 5): argon2id (RFC 9106, memory-hard) at
// OWASP's baseline (19 MiB, t=2, p=1), in the PHC string format, which carries its own
// parameters, so hashes made before a change of defaults keep verifying.
//
// `@node-rs/argon2` (napi-rs, prebuilt binaries as optional dependencies: no install
// script) runs each hash on libuv's thread pool. hash-wasm (what services/boxes uses)
// computes on the calling thread: ~40 ms of a blocked event loop per login here, during
// which no other request of the process moves. Both write the same PHC strings.
import { hash, verify } from '@node-rs/argon2';

/** @node-rs/argon2's Algorithm.Argon2id (a const enum the isolated-module build cannot inline). */
const ARGON2ID = 2;

export interface PasswordHashParams {
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
    hash: (password) => hash(password, { algorithm: ARGON2ID, memoryCost: params.memoryKiB, timeCost: params.iterations, parallelism: params.parallelism }),
    async verify(password, encoded) {
      if (!encoded.startsWith('$argon2id$')) return false;
      try {
        return await verify(encoded, password);
      } catch {
        return false;
      }
    },
  };
}
