// How the agent knows a request comes from a server (issue 26 item 5): the server holds
// only the sha256 of the node's SecretID, so it signs each forwarded request with it:
// `X-Scheduler-Agent-Auth: <unix ms>.<hex HMAC-SHA256(key = sha256(SecretID),
// "<unix ms>\n<METHOD>\n<path and query>")>`. The agent, which knows the SecretID,
// recomputes it and accepts the request within a minute of its timestamp. No secret
// crosses the wire, and a captured signature is good for one path for a minute only.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

export const AGENT_AUTH_HEADER = 'x-scheduler-agent-auth';
const SKEW_MS = 60_000;

export function signAgentRequest(secretHash: string, method: string, url: string, nowMs = Date.now()): string {
  const mac = createHmac('sha256', secretHash).update(`${nowMs}\n${method.toUpperCase()}\n${url}`).digest('hex');
  return `${nowMs}.${mac}`;
}

export function verifyAgentRequest(secret: string, header: string | undefined, method: string, url: string, nowMs = Date.now()): boolean {
  if (!header) return false;
  const dot = header.indexOf('.');
  const ts = Number(header.slice(0, dot));
  if (dot <= 0 || !Number.isFinite(ts) || Math.abs(nowMs - ts) > SKEW_MS) return false;
  const want = Buffer.from(signAgentRequest(createHash('sha256').update(secret).digest('hex'), method, url, ts));
  const got = Buffer.from(header);
  return want.length === got.length && timingSafeEqual(want, got);
}
