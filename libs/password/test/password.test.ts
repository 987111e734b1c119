import { createPasswordHasher } from '../src';

describe('password hasher', () => {
  const hasher = createPasswordHasher({ memoryKiB: 1024, iterations: 1, parallelism: 1 });

  it('hashes with argon2id in PHC format and verifies', async () => {
    const encoded = await hasher.hash('s3cret pass');
    expect(encoded).toMatch(/^\$argon2id\$v=19\$m=1024,t=1,p=1\$[A-Za-z0-9+/]+\$[A-Za-z0-9+/]+$/);
    expect(await hasher.verify('s3cret pass', encoded)).toBe(true);
    expect(await hasher.verify('s3cret pasS', encoded)).toBe(false);
  });

  it('salts every hash', async () => {
    expect(await hasher.hash('same')).not.toBe(await hasher.hash('same'));
  });

  it('rejects malformed hashes without throwing', async () => {
    expect(await hasher.verify('x', '')).toBe(false);
    expect(await hasher.verify('x', '$argon2id$garbage')).toBe(false);
    expect(await hasher.verify('x', '$2b$10$abcdefghijklmnopqrstuv')).toBe(false);
  });

  it('verifies hashes made with other parameters (the defaults)', async () => {
    const strong = createPasswordHasher();
    const encoded = await strong.hash('pw');
    expect(encoded).toContain('m=19456,t=2,p=1');
    expect(await hasher.verify('pw', encoded)).toBe(true);
  });

  it('hashes off the event loop: other callbacks run while a hash is computed', async () => {
    const order: string[] = [];
    setImmediate(() => order.push('event loop turn'));
    await createPasswordHasher().hash('pw').then(() => order.push('hashed'));
    expect(order).toEqual(['event loop turn', 'hashed']);
  });
});
