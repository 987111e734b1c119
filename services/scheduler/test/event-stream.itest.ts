// GET /v1/event/stream (issue 27; spec "Events"; reference §6) over real sockets against
// the real app, Postgres and Redis: heartbeats and headers, backlog replay then live
// events, resume by index with no gap and no repeat, topic and namespace filters, bad
// parameters, slow consumers, a second process on the same database and bus, shutdown,
// retention, and the ACL matrix with expiring and deleted tokens.
import request from 'supertest';
import { startTestListener, waitFor, type TestListener } from '@selfstack/testing';
import type { Express } from 'express';
import { buildApp } from '../src/app';
import { composeScheduler } from '../src/compose';
import { createLogger } from '@selfstack/logger';
import { BASE_CONFIG, expectPlain, minimalJob, registerJob, registerNode, startHarness, type Harness } from './harness';
import { openStream, type StreamClient, type StreamLine } from './event-stream-client';

jest.setTimeout(60_000);

// The last line of an ended stream may wait for its slow reader (endGraceMs) longer than any test.
const SETTINGS = { heartbeatMs: 400, slowConsumerMs: 1500, revalidateMs: 300, endGraceMs: 60_000 };

/** Frames as (index -> event keys) for comparisons. */
const shape = (lines: StreamLine[]) => lines.filter((l) => l.Events).map((l) => `${l.Index}:${(l.Events ?? []).map((e) => `${e.Topic}/${e.Key}`).join(',')}`);

describe('event stream (ACLs off)', () => {
  let h: Harness;
  let server: TestListener;
  let url = '';
  const open: StreamClient[] = [];
  const stream = async (path: string, headers: Record<string, string> = {}) => {
    const c = await openStream(url, path, headers);
    open.push(c);
    return c;
  };

  beforeAll(async () => {
    h = await startHarness({ eventStream: SETTINGS });
    server = await startTestListener(h.app);
    url = server.url;
  });
  afterEach(() => {
    for (const c of open.splice(0)) c.close();
  });
  afterAll(async () => {
    await server.close();
    await h.close();
  });

  it('answers 200 ndjson, uncompressed and uncached, with a heartbeat at once and on a timer', async () => {
    const c = await stream('/v1/event/stream', { 'Accept-Encoding': 'gzip' });
    expect(c.status).toBe(200);
    expect(c.headers['content-type']).toBe('application/json');
    expect(c.headers['cache-control']).toBe('no-cache');
    expect(c.headers['content-encoding']).toBeUndefined();
    expect(c.headers['x-accel-buffering']).toBe('no');
    await c.waitFor('first heartbeat', (x) => x.lines.length >= 1);
    expect(c.lines[0]).toEqual({});
    await c.waitFor('a timed heartbeat', (x) => x.lines.filter((l) => Object.keys(l).length === 0).length >= 2);
  });

  it('replays the backlog from index 0, then follows live writes, in the anchor envelope', async () => {
    const first = await registerJob(h.app, minimalJob('ev-backlog'));
    const c = await stream('/v1/event/stream?topic=Job&topic=Evaluation:ev-backlog');
    const replayed = await c.waitFor('the backlog', (x) => x.events().find((e) => e.Topic === 'Job' && e.Key === 'ev-backlog'));
    expect(replayed).toMatchObject({ Type: 'JobRegistered', Namespace: 'default', Index: first['Index'], Payload: { Job: { ID: 'ev-backlog' } } });
    const frame = c.frames().find((l) => l.Index === first['Index']);
    expect(Object.keys(frame ?? {})).toEqual(['Index', 'Events']);
    // The evaluation of that write, keyed by its ID, found through FilterKeys [JobID, ...].
    expect(frame?.Events?.find((e) => e.Topic === 'Evaluation')).toMatchObject({ Type: 'JobRegistered', FilterKeys: ['ev-backlog', ''], Payload: { Evaluation: { JobID: 'ev-backlog' } } });
    expect(Object.keys(replayed)).toEqual(['Topic', 'Type', 'Key', 'Namespace', 'FilterKeys', 'Index', 'Payload']);

    // Live: a node is not on the topics followed, a job is; an evaluation of another job is not.
    await registerNode(h.app);
    const live = await registerJob(h.app, minimalJob('ev-live'));
    await c.waitFor('the live job', (x) => x.events().find((e) => e.Key === 'ev-live'));
    expect(c.events().some((e) => e.Topic === 'Node')).toBe(false);
    expect(c.events().filter((e) => e.Topic === 'Evaluation').every((e) => (e.FilterKeys ?? []).includes('ev-backlog'))).toBe(true);
    // Frames arrive in index order, each once.
    const indexes = c.frames().map((l) => l.Index as number);
    expect(indexes).toEqual([...new Set(indexes)].sort((a, b) => a - b));
    expect(indexes).toContain(live['Index']);
  });

  it('resumes from the index after the last one seen with no gap and no repeat', async () => {
    for (let i = 0; i < 5; i++) await registerJob(h.app, minimalJob(`ev-resume-${i}`));
    const all = await stream('/v1/event/stream');
    const head = await h.state.currentIndex([]);
    await all.waitFor('everything so far', (x) => (x.frames().at(-1)?.Index ?? 0) >= head - 1 || undefined);
    const firstPart = all.frames();
    all.close();
    const last = firstPart.at(-1)?.Index as number;
    for (let i = 5; i < 8; i++) await registerJob(h.app, minimalJob(`ev-resume-${i}`));
    const resumed = await stream(`/v1/event/stream?index=${last + 1}`);
    await resumed.waitFor('the three later jobs', (x) => x.events().filter((e) => e.Topic === 'Job' && e.Key.startsWith('ev-resume-')).length === 3 || undefined);
    const expected = (await h.state.eventsAfter(0, { limit: 10_000 })).reduce<StreamLine[]>((frames, e) => {
      const lastFrame = frames.at(-1);
      const ev = { Topic: e.topic, Key: e.key } as never;
      if (lastFrame?.Index === e.index) lastFrame.Events?.push(ev);
      else frames.push({ Index: e.index, Events: [ev] });
      return frames;
    }, []);
    expect([...shape(firstPart), ...shape(resumed.frames())]).toEqual(shape(expected));
  });

  it('filters by namespace: the one asked for (default: default), or * for all', async () => {
    await request(h.app).put('/v1/namespace/ev-prod').send({}).expect(200);
    await registerJob(h.app, minimalJob('ev-ns-default'));
    await registerJob(h.app, minimalJob('ev-ns-prod', { Namespace: 'ev-prod' }));
    const jobsOf = (c: StreamClient) => c.events().filter((e) => e.Topic === 'Job' && e.Key.startsWith('ev-ns-')).map((e) => `${e.Namespace}/${e.Key}`);
    const dflt = await stream('/v1/event/stream?topic=Job');
    const prod = await stream('/v1/event/stream?topic=Job&namespace=ev-prod');
    const all = await stream('/v1/event/stream?topic=Job&namespace=*');
    await all.waitFor('both jobs', (x) => jobsOf(x).length === 2 || undefined);
    await dflt.waitFor('the default job', (x) => jobsOf(x).length === 1 || undefined);
    await prod.waitFor('the prod job', (x) => jobsOf(x).length === 1 || undefined);
    expect(jobsOf(dflt)).toEqual(['default/ev-ns-default']);
    expect(jobsOf(prod)).toEqual(['ev-prod/ev-ns-prod']);
    expect(jobsOf(all).sort()).toEqual(['default/ev-ns-default', 'ev-prod/ev-ns-prod']);
  });

  it('delivers node and drain events on their topics', async () => {
    const nodes = await stream('/v1/event/stream?topic=Node');
    const drains = await stream('/v1/event/stream?topic=NodeDrain');
    const id = await registerNode(h.app);
    await request(h.app).put(`/v1/node/${id}/drain`).send({ DrainSpec: { Deadline: 60_000_000_000 } }).expect(200);
    await nodes.waitFor('registration and drain', (x) => x.events().filter((e) => e.Key === id).length === 2 || undefined);
    expect(nodes.events().filter((e) => e.Key === id).map((e) => `${e.Topic}:${e.Type}`)).toEqual(['Node:NodeRegistration', 'NodeDrain:NodeDrain']);
    const drain = await drains.waitFor('the drain', (x) => x.events().find((e) => e.Key === id));
    expect(drain).toMatchObject({ Topic: 'NodeDrain', Type: 'NodeDrain', Namespace: '', FilterKeys: null, Payload: { Node: { ID: id, Drain: true } } });
    expect(drains.events().some((e) => e.Type === 'NodeRegistration')).toBe(false);
  });

  it.each([
    ['topic=Job:a:b', 'Invalid topic query: error parsing topics: Invalid key value pair for topic, topic: Job:a:b'],
    ['topic=Jbo', 'Invalid topic query: unknown topic "Jbo" (known: ACLToken, ACLPolicy, ACLRole, Allocation, Job, Evaluation, Deployment, Node, NodeDrain, Service)'],
    ['index=-1', 'Invalid index'],
    ['index=abc', 'Invalid index'],
  ])('answers %s with a 400 before any data', async (query, message) => {
    expectPlain(await request(h.app).get(`/v1/event/stream?${query}`), 400, message);
  });

  it('ends a consumer that stops reading with an error line naming the index to resume from', async () => {
    const big = 'x'.repeat(192 * 1024);
    const slow = await stream('/v1/event/stream?topic=Job:ev-slow');
    await slow.waitFor('heartbeat', (x) => x.lines.length >= 1);
    slow.pause();
    // ~7 MB of events: more than the socket buffers on both sides hold.
    for (let i = 0; i < 40; i++) await registerJob(h.app, minimalJob('ev-slow', { Meta: { big, n: String(i) } }));
    // The server gives up after slowConsumerMs without a drain and closes the stream's tail
    // (this process's state store: the only stream open in this test); then the reader
    // takes what was written, ending with the error line.
    await waitFor('the server to give up on the reader', async () => (h.state.eventTailCount() === 0 ? true : undefined), 60_000, 50);
    slow.resume();
    await slow.ended;
    const end = slow.lines.at(-1) as StreamLine;
    expect(end.Error).toMatch(/^event stream consumer too slow: resume with index=\d+$/);
    expect(end.Error).toBe(`event stream consumer too slow: resume with index=${end.Index}`);
    const got = slow.events().map((e) => e.Payload['Job']?.['Meta'] as { n: string });
    expect(got.length).toBeGreaterThan(0);
    expect(got.length).toBeLessThan(40);
    const lastDelivered = slow.frames().at(-1)?.Index as number;
    expect(end.Index).toBe(lastDelivered + 1);
    // Resuming there delivers the rest: every version exactly once overall.
    const rest = await stream(`/v1/event/stream?topic=Job:ev-slow&index=${end.Index}`);
    await rest.waitFor('the rest', (x) => got.length + x.events().length >= 40 || undefined, 30_000);
    const ns = [...got, ...rest.events().map((e) => e.Payload['Job']?.['Meta'] as { n: string })].map((m) => Number(m.n));
    expect(ns).toEqual(Array.from({ length: 40 }, (_, i) => i));
  });

  it('sees writes made through another process on the same database and bus', async () => {
    const other = await h.sibling();
    const otherServer = await startTestListener(other.app);
    try {
      const c = await openStream(otherServer.url, '/v1/event/stream?topic=Job:ev-cross');
      open.push(c);
      await c.waitFor('heartbeat', (x) => x.lines.length >= 1);
      for (let i = 0; i < 5; i++) await registerJob(h.app, minimalJob('ev-cross', { Meta: { n: String(i) } }));
      await c.waitFor('five versions', (x) => x.events().length === 5 || undefined);
      expect(c.events().map((e) => (e.Payload['Job']?.['Meta'] as { n: string }).n)).toEqual(['0', '1', '2', '3', '4']);
    } finally {
      await otherServer.close();
      await other.close();
    }
  });

  it('starts at the oldest retained event when the index asked for was pruned', async () => {
    await registerJob(h.app, minimalJob('ev-pruned'));
    await registerJob(h.app, minimalJob('ev-kept'));
    await h.state.pruneEvents({ keepEvents: 2, maxAgeMs: 0 });
    const oldest = (await h.state.oldestEventIndex()) as number;
    const c = await stream('/v1/event/stream?index=1');
    await c.waitFor('the kept job', (x) => x.events().find((e) => e.Key === 'ev-kept'));
    expect(c.frames()[0]?.Index).toBe(oldest);
    expect(c.events().some((e) => e.Key === 'ev-pruned')).toBe(false);
  });

  it('ends open streams with an error line when the server starts shutting down', async () => {
    const stopping = new AbortController();
    const logger = createLogger({ service: 'scheduler-test', silent: true });
    const app: Express = buildApp(composeScheduler({ prisma: h.prisma, state: h.state, logger, readPool: h.readPool }, { ...BASE_CONFIG, eventStream: SETTINGS }, { stopping: stopping.signal }));
    const s = await startTestListener(app);
    try {
      const c = await openStream(s.url, '/v1/event/stream?topic=Job');
      await c.waitFor('heartbeat', (x) => x.lines.length >= 1);
      stopping.abort();
      await c.ended;
      expect(c.lines.at(-1)?.Error).toMatch(/^server shutting down: resume with index=\d+$/);
    } finally {
      await s.close();
    }
  });
});

describe('event stream ACLs (spec "Required ACL per topic")', () => {
  let h: Harness;
  let server: TestListener;
  let url = '';
  let root = '';
  const tokens: Record<string, string> = {};
  const as = (t: string) => ({ 'X-Nomad-Token': t });

  const policy = async (name: string, rules: string) =>
    request(h.app).put(`/v1/acl/policy/${name}`).set(as(root)).send({ Name: name, Rules: rules }).expect(200);
  const token = async (name: string, policies: string[], extra: Record<string, unknown> = {}) => {
    const r = await request(h.app).put('/v1/acl/token').set(as(root)).send({ Name: name, Type: 'client', Policies: policies, ...extra });
    expect(r.status).toBe(200);
    return r.body as { SecretID: string; AccessorID: string };
  };

  beforeAll(async () => {
    h = await startHarness({ aclEnabled: true, eventStream: SETTINGS });
    server = await startTestListener(h.app);
    url = server.url;
    root = (await request(h.app).put('/v1/acl/bootstrap')).body.SecretID as string;
    await request(h.app).put('/v1/namespace/acl-prod').set(as(root)).send({}).expect(200);
    await policy('job-reader', 'namespace "default" { capabilities = ["read-job"] }');
    await policy('job-lister', 'namespace "default" { capabilities = ["list-jobs"] }');
    await policy('all-reader', 'namespace "*" { policy = "read" }');
    await policy('node-reader', 'node { policy = "read" }');
    tokens.jobReader = (await token('jr', ['job-reader'])).SecretID;
    tokens.jobLister = (await token('jl', ['job-lister'])).SecretID;
    tokens.allReader = (await token('ar', ['all-reader'])).SecretID;
    tokens.nodeReader = (await token('nr', ['node-reader'])).SecretID;
  });
  afterAll(async () => {
    await server.close();
    await h.close();
  });

  // caller, query -> status. 403s carry the anchor's plain text and no stream data.
  const matrix: Array<[string, string, number]> = [
    ['anonymous', '', 403],
    ['anonymous', 'topic=Job', 403],
    ['management', '', 200],
    ['management', 'topic=ACLToken', 200],
    ['management', 'topic=Job&namespace=*', 200],
    ['jobReader', 'topic=Job', 200],
    ['jobReader', 'topic=Allocation&topic=Evaluation&topic=Deployment&topic=Service', 200],
    ['jobReader', 'topic=Job&namespace=acl-prod', 403],
    ['jobReader', 'topic=Job&namespace=*', 403],
    ['jobReader', '', 403],
    ['jobReader', 'topic=*', 403],
    ['jobReader', 'topic=Node', 403],
    ['jobReader', 'topic=ACLToken', 403],
    ['jobReader', 'topic=ACLPolicy', 403],
    ['jobLister', 'topic=Job', 403],
    ['allReader', 'topic=Job&namespace=*', 200],
    ['allReader', 'topic=Job&namespace=acl-prod', 200],
    ['allReader', 'topic=Node', 403],
    ['nodeReader', 'topic=Node', 200],
    ['nodeReader', 'topic=NodeDrain', 200],
    ['nodeReader', 'topic=Job', 403],
  ];
  it.each(matrix)('%s with ?%s -> %i', async (caller, query, status) => {
    const secret = caller === 'anonymous' ? '' : caller === 'management' ? root : (tokens[caller] as string);
    const c = await openStream(url, `/v1/event/stream?${query}`, secret ? as(secret) : {});
    try {
      expect(c.status).toBe(status);
      if (status === 403) {
        await c.ended;
        expect(c.headers['content-type']).toMatch(/^text\/plain/);
        expect(c.text).toBe('Permission denied');
        expect(c.lines).toEqual([]);
      } else {
        await c.waitFor('heartbeat', (x) => x.lines.length >= 1);
      }
    } finally {
      c.close();
    }
  });

  it('an unknown token is refused with the anchor text', async () => {
    const c = await openStream(url, '/v1/event/stream?topic=Job', as('00000000-0000-0000-0000-000000000000'));
    await c.ended;
    expect(c.status).toBe(403);
    expect(c.text).toBe('ACL token not found');
  });

  it('namespace=* never shows a namespace the token is denied', async () => {
    await policy('all-but-secret', 'namespace "*" { policy = "read" }\nnamespace "acl-secret" { policy = "deny" }');
    const t = (await token('abs', ['all-but-secret'])).SecretID;
    await request(h.app).put('/v1/namespace/acl-secret').set(as(root)).send({}).expect(200);
    const c = await openStream(url, '/v1/event/stream?topic=Job&namespace=*', as(t));
    try {
      await registerJob(h.app, minimalJob('hidden', { Namespace: 'acl-secret' }), as(root));
      await registerJob(h.app, minimalJob('shown', { Namespace: 'acl-prod' }), as(root));
      await c.waitFor('the shown job', (x) => x.events().find((e) => e.Key === 'shown'));
      expect(c.events().some((e) => e.Key === 'hidden')).toBe(false);
    } finally {
      c.close();
    }
  });

  it('ends the stream when its token expires', async () => {
    const t = await token('short', ['job-reader'], { ExpirationTTL: '1500ms' });
    const c = await openStream(url, '/v1/event/stream?topic=Job', as(t.SecretID));
    expect(c.status).toBe(200);
    await c.ended;
    expect(c.lines.at(-1)?.Error).toBe('ACL token expired');
  });

  it('ends the stream when its token is deleted, or its policy no longer allows the topic', async () => {
    const t = await token('doomed', ['job-reader']);
    const c = await openStream(url, '/v1/event/stream?topic=Job', as(t.SecretID));
    await c.waitFor('heartbeat', (x) => x.lines.length >= 1);
    await request(h.app).delete(`/v1/acl/token/${t.AccessorID}`).set(as(root)).expect(200);
    await c.ended;
    expect(c.lines.at(-1)?.Error).toBe('ACL token not found');

    await policy('narrowing', 'namespace "default" { capabilities = ["read-job"] }');
    const n = await token('narrowed', ['narrowing']);
    const d = await openStream(url, '/v1/event/stream?topic=Job', as(n.SecretID));
    await d.waitFor('heartbeat', (x) => x.lines.length >= 1);
    await policy('narrowing', 'namespace "default" { capabilities = ["list-jobs"] }');
    await d.ended;
    expect(d.lines.at(-1)?.Error).toBe('Permission denied');
  });
});
