import { BarrierDecryptError, newKey, open, seal, termOf } from './barrier-crypto';

describe('barrier AES-256-GCM', () => {
  const key = newKey();
  it('round-trips and records the key term', () => {
    const ct = seal(key, 7, 'logical/x/kv/a', Buffer.from('{"a":1}'));
    expect(termOf(ct)).toBe(7);
    expect(open(key, 'logical/x/kv/a', ct).toString()).toBe('{"a":1}');
    expect(ct.includes(Buffer.from('{"a":1}'))).toBe(false);
  });
  it('never stores the same bytes twice (what lets a conditional write\'s guard compare bytes: no ABA)', () => {
    const a = seal(key, 3, 'p', Buffer.from('same'));
    const b = seal(key, 3, 'p', Buffer.from('same'));
    // The same plaintext, path and term twice: a new random nonce each time.
    expect(a.equals(b)).toBe(false);
    expect(a.subarray(0, 17).equals(b.subarray(0, 17))).toBe(false);
  });
  it('refuses a ciphertext moved to another path (AAD)', () => {
    const ct = seal(key, 1, 'path/one', Buffer.from('secret'));
    expect(() => open(key, 'path/two', ct)).toThrow(BarrierDecryptError);
  });
  it('refuses a tampered ciphertext and a wrong key', () => {
    const ct = seal(key, 1, 'p', Buffer.from('secret'));
    const tampered = Buffer.from(ct);
    tampered[tampered.length - 20] = (tampered[tampered.length - 20] ?? 0) ^ 1;
    expect(() => open(key, 'p', tampered)).toThrow(BarrierDecryptError);
    expect(() => open(newKey(), 'p', ct)).toThrow(BarrierDecryptError);
    expect(() => open(key, 'p', Buffer.alloc(10))).toThrow(BarrierDecryptError);
  });
  it('uses a fresh nonce per encryption', () => {
    const a = seal(key, 1, 'p', Buffer.from('same'));
    const b = seal(key, 1, 'p', Buffer.from('same'));
    expect(a.equals(b)).toBe(false);
  });
  it('never hands out a nonce twice, across refills of the nonce pool (341 per refill)', () => {
    const nonces = new Set<string>();
    const n = 341 * 3 + 7;
    for (let i = 0; i < n; i++) {
      const ct = seal(key, 1, 'p', Buffer.from(`v${i}`));
      nonces.add(ct.subarray(5, 17).toString('hex'));
      // Each still opens with its own nonce after the pool moved on.
      if (i % 100 === 0) expect(open(key, 'p', ct).toString()).toBe(`v${i}`);
    }
    expect(nonces.size).toBe(n);
  });
});
