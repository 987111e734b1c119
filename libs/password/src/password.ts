// Password hashing for every service that keeps passwords (boxes accounts, secrets
// userpass): argon2id (RFC 9106, memory-hard) in the PHC string format
// ($argon2id$v=19$m=...,t=...,p=...$salt$hash), which carries its own parameters, so hashes
// made with other parameters keep verifying after the defaults change.
//
// `@node-rs/argon2` (napi-rs; prebuilt binaries as optional dependencies, no install
// script) computes each hash on libuv's thread pool. hash-wasm, used before, computed on
// the calling thread: at the default parameters ~40 ms of a blocked event loop per hash,
// during which no other request of the process moved. Both produce and read the same PHC
// strings, so stored hashes stay valid.
import { hash, verify } from '@node-rs/argon2';

/** @node-rs/argon2's `Algorithm.Argon2id` (a const enum an isolated-module build cannot inline). */
const ARGON2ID = 2;

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
