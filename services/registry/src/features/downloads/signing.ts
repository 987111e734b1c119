// Signed, short-lived archive URLs (issue 6 item 5; reference B.3: go-getter downloads
// the archive with no registry token, hashicorp/terraform#28659). The download endpoint
// (which does see the token) hands out a URL carrying an HS256 JWT bound to one module
// version; the archive endpoint checks it. Deleting and re-publishing a version gives it
// a new id, so old URLs stop working.
import jwt from 'jsonwebtoken';

const AUDIENCE = 'registry-archive';

export interface ArchiveSigner {
  sign(versionId: string): string;
  /** True when `token` is a valid, unexpired signature for `versionId`. */
  verify(token: string, versionId: string): boolean;
  readonly ttlSeconds: number;
}

export function createArchiveSigner(options: { key: string; ttlSeconds: number; clock?: () => Date }): ArchiveSigner {
  const clock = options.clock ?? (() => new Date());
  const nowSeconds = () => Math.floor(clock().getTime() / 1000);
  return {
    ttlSeconds: options.ttlSeconds,
    sign(versionId) {
      const iat = nowSeconds();
      return jwt.sign({ sub: versionId, aud: AUDIENCE, iat, exp: iat + options.ttlSeconds }, options.key, { algorithm: 'HS256', noTimestamp: true });
    },
    verify(token, versionId) {
      try {
        jwt.verify(token, options.key, { algorithms: ['HS256'], audience: AUDIENCE, subject: versionId, clockTimestamp: nowSeconds() });
        return true;
      } catch {
        return false;
      }
    },
  };
}
