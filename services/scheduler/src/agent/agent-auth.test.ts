// Request signing between servers and agents (agent-auth.ts) and the display durations
// of task events (task-events.ts).
import { createHash } from 'node:crypto';
import { signAgentRequest, verifyAgentRequest } from './agent-auth';
import { goDuration, newTaskState, pushEvent, taskEvent } from './task-events';

const SECRET = '5a0c4bde-1f6e-4c53-9d8e-3f0f1c2b7a11';
const HASH = createHash('sha256').update(SECRET).digest('hex');
const NOW = 1_800_000_000_000;

describe('agent request signatures', () => {
  const url = '/v1/client/fs/logs/abc?task=t&type=stdout';

  it('accepts what a server signs with the secret hash, within a minute', () => {
    const sig = signAgentRequest(HASH, 'GET', url, NOW);
    expect(verifyAgentRequest(SECRET, sig, 'GET', url, NOW)).toBe(true);
    expect(verifyAgentRequest(SECRET, sig, 'get', url, NOW + 59_000)).toBe(true);
  });

  it.each([
    ['another secret', (sig: string) => verifyAgentRequest('other', sig, 'GET', url, NOW)],
    ['another path', (sig: string) => verifyAgentRequest(SECRET, sig, 'GET', '/v1/client/fs/cat/abc?path=/', NOW)],
    ['another method', (sig: string) => verifyAgentRequest(SECRET, sig, 'POST', url, NOW)],
    ['too old', (sig: string) => verifyAgentRequest(SECRET, sig, 'GET', url, NOW + 61_000)],
    ['from the future', (sig: string) => verifyAgentRequest(SECRET, sig, 'GET', url, NOW - 61_000)],
    ['no header', () => verifyAgentRequest(SECRET, undefined, 'GET', url, NOW)],
    ['garbage', () => verifyAgentRequest(SECRET, 'x.y', 'GET', url, NOW)],
    ['the secret itself', () => verifyAgentRequest(SECRET, SECRET, 'GET', url, NOW)],
    ['a signature with the raw secret as key', () => verifyAgentRequest(SECRET, signAgentRequest(SECRET, 'GET', url, NOW), 'GET', url, NOW)],
  ])('refuses %s', (_what, check) => {
    expect(check(signAgentRequest(HASH, 'GET', url, NOW))).toBe(false);
  });
});

describe('task events', () => {
  it.each([
    [0, '0s'],
    [500, '500ms'],
    [15_000, '15s'],
    [90_000, '1m30s'],
    [30 * 60_000, '30m0s'],
    [24 * 3600_000, '24h0m0s'],
    [1_500, '1.5s'],
  ])('%i ms displays as %s', (ms, text) => {
    expect(goDuration(ms)).toBe(text);
  });

  it('carries the anchor fields, details of what was set, and keeps the last 10 events', () => {
    const ev = taskEvent('Terminated', { ExitCode: 3, Signal: 0 }, 'Exit Code: 3');
    expect(ev).toMatchObject({ Type: 'Terminated', ExitCode: 3, Signal: 0, DisplayMessage: 'Exit Code: 3', FailsTask: false, KillTimeout: 0 });
    expect(ev.Details).toEqual({ exit_code: '3' });
    const state = newTaskState();
    for (let i = 0; i < 12; i++) pushEvent(state, taskEvent(`e${i}`));
    expect(state.Events.map((e) => e.Type)).toEqual(['e2', 'e3', 'e4', 'e5', 'e6', 'e7', 'e8', 'e9', 'e10', 'e11']);
  });
});
