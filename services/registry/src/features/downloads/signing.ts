// Signed, short-lived archive URLs (issue 6 item 5; reference B.3: go-getter downloads
// the archive with no registry token, hashicorp/terraform#28659). The download endpoint
// (which does see the token) hands out a URL carrying an HS256 JWT bound to one module
// version; the archive endpoint checks it. Deleting and re-publishing a version gives it
// a new id, so old URLs stop working.
import { createHmac } from 'node:crypto';
import jwt from 'jsonwebtoken';

const AUDIENCE = 'registry-archive';
/** base64url of `{"alg":"HS256","typ":"JWT"}`, the header jsonwebtoken writes for HS256. */
const HS256_HEADER = Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'JWT' })).toString('base64url');

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
      // The JWS written directly (RFC 7515 compact form; the same bytes jsonwebtoken.sign
      // produces with noTimestamp, which leaves `iat` out): jsonwebtoken validates its
      // options and claims through generic schema code on every call, several times the
      // HMAC itself on the download path.
      const payload = Buffer.from(JSON.stringify({ sub: versionId, aud: AUDIENCE, exp: nowSeconds() + options.ttlSeconds })).toString('base64url');
      const input = `${HS256_HEADER}.${payload}`;
      return `${input}.${createHmac('sha256', options.key).update(input).digest('base64url')}`;
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
