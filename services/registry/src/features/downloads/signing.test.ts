import jwt from 'jsonwebtoken';
import { createArchiveSigner } from './signing';

describe('archive URL signing', () => {
  let now = new Date('2026-11-22T00:00:00Z');
  const signer = createArchiveSigner({ key: 'k'.repeat(32), ttlSeconds: 300, clock: () => now });

  it('accepts its own signature for the same version until it expires', () => {
    now = new Date('2026-11-22T00:00:00Z');
    const t = signer.sign('v1');
    expect(signer.verify(t, 'v1')).toBe(true);
    now = new Date('2026-11-22T00:04:59Z');
    expect(signer.verify(t, 'v1')).toBe(true);
    now = new Date('2026-11-22T00:05:01Z');
    expect(signer.verify(t, 'v1')).toBe(false);
  });

  it('refuses another version, another key, alg none and garbage', () => {
    now = new Date('2026-11-22T00:00:00Z');
    const t = signer.sign('v1');
    expect(signer.verify(t, 'v2')).toBe(false);
    const other = createArchiveSigner({ key: 'x'.repeat(32), ttlSeconds: 300, clock: () => now });
    expect(other.verify(t, 'v1')).toBe(false);
    const none = jwt.sign({ sub: 'v1', aud: 'registry-archive' }, '', { algorithm: 'none' });
    expect(signer.verify(none, 'v1')).toBe(false);
    expect(signer.verify('not-a-jwt', 'v1')).toBe(false);
    expect(signer.verify('', 'v1')).toBe(false);
  });

  it('writes exactly the token jsonwebtoken writes for the same claims', () => {
    now = new Date('2026-11-22T00:00:00Z');
    const iat = Math.floor(now.getTime() / 1000);
    const expected = jwt.sign({ sub: 'v1', aud: 'registry-archive', iat, exp: iat + 300 }, 'k'.repeat(32), { algorithm: 'HS256', noTimestamp: true });
    expect(signer.sign('v1')).toBe(expected);
    expect(jwt.verify(signer.sign('v1'), 'k'.repeat(32), { algorithms: ['HS256'], audience: 'registry-archive', subject: 'v1', clockTimestamp: iat })).toMatchObject({ sub: 'v1', exp: iat + 300 });
  });
});
