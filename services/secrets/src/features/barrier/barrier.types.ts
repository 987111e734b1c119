// The barrier row's contract (issue 3, item 2). The entries themselves go through the
// storage contract (storage.types.ts): the physical stores only ever see ciphertext; the
// Barrier encrypts on the way in and decrypts on the way out.
import type { StorageTx } from './storage.types';

/** The barrier row: seal configuration (not secret) and the keyring encrypted by the root key. */
export interface BarrierRecord {
  readonly secretShares: number;
  readonly secretThreshold: number;
  readonly keyring: Buffer;
}

export interface BarrierStore {
  load(): Promise<BarrierRecord | null>;
  /**
   * Creates the barrier row and runs `setup` in the same transaction (on the entries, as
   * stored); throws `AlreadyInitializedError` when another process initialised first.
   */
  create(record: BarrierRecord, setup: (tx: StorageTx) => Promise<void>): Promise<void>;
}

export class AlreadyInitializedError extends Error {
  override readonly name = 'AlreadyInitializedError';
  constructor() {
    super('Vault is already initialized');
  }
}
