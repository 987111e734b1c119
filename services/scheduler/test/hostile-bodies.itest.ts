// Issue 29 "Found" (scheduler): job bodies with a NUL, a lone surrogate or 5,000 levels of
// Meta were 500s (PostgreSQL 22P05 / invalid json, Prisma's serialiser overflowing); filters
// with 200 nested parentheses or 600 chained `not` overflowed the bexpr parser. Item 3:
// nanosecond times beyond 2^53 come back exactly as rendered, and a filter on them matches.
import request from 'supertest';
import { DEFAULT_MAX_BODY_DEPTH } from '@selfstack/http-kit';
import { expectPlain, minimalJob, registerJob, startHarness, type Harness } from './harness';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

const f = (e: string) => encodeURIComponent(e);
const putJob = (json: string) => request(h.app).put('/v1/jobs').set('Content-Type', 'application/json').send(json);
/** A job body with `meta` spliced in as raw JSON text (supertest would re-encode it). */
const jobWithMeta = (id: string, meta: string) => JSON.stringify({ Job: minimalJob(id, { Meta: { placeholder: 'x' } }) }).replace('{"placeholder":"x"}', meta);

describe('hostile job bodies', () => {
  it('answers a NUL in job Meta with a 400 naming the field, and stores nothing', async () => {
    const res = await putJob(jobWithMeta('nul-job', '{"owner":"a\\u0000b"}'));
    expectPlain(res, 400, 'failed to parse JSON input: field Job.Meta.owner contains a NUL character (\\u0000), which cannot be stored');
    expect((await request(h.app).get('/v1/job/nul-job')).status).toBe(404);
  });

  it('answers a lone surrogate in a job with a 400 naming the field', async () => {
    const res = await putJob(jobWithMeta('sur-job', '{"k":"\\ud800"}'));
    expectPlain(res, 400, 'failed to parse JSON input: field Job.Meta.k contains a lone UTF-16 surrogate, which is not valid Unicode');
    const name = await putJob(JSON.stringify({ Job: minimalJob('sur-job-2', { Name: 'sur-job-2' }) }).replace('"Name":"sur-job-2"', '"Name":"\\udc00x"'));
    expectPlain(name, 400, 'failed to parse JSON input: field Job.Name contains a lone UTF-16 surrogate, which is not valid Unicode');
    expect((await request(h.app).get('/v1/job/sur-job')).status).toBe(404);
  });

  it('answers 5,000 levels of Meta with a 400 at the kit depth limit', async () => {
    const deep = '{"a":'.repeat(5000) + '"x"' + '}'.repeat(5000);
    const res = await putJob(jobWithMeta('deep-job', deep));
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    expect(res.text).toMatch(new RegExp(`^failed to parse JSON input: field Job\\.Meta\\.a\\.a\\.\\.\\.\\(\\d+ levels\\)\\.\\.\\.a\\.a\\.a\\.a: nesting deeper than ${DEFAULT_MAX_BODY_DEPTH} levels$`));
    expect((await request(h.app).get('/v1/job/deep-job')).status).toBe(404);
  });

  it('keeps __proto__ and constructor keys of job Meta as data', async () => {
    const res = await putJob(jobWithMeta('proto-job', '{"__proto__":"p","constructor":"c","tier":"gold"}'));
    expect(res.status).toBe(200);
    const job = await request(h.app).get('/v1/job/proto-job');
    expect(job.status).toBe(200);
    const meta = job.body.Meta as Record<string, unknown>;
    expect(Object.keys(meta).sort()).toEqual(['__proto__', 'constructor', 'tier']);
    expect([meta['__proto__'], meta['constructor'], meta['tier']]).toEqual(['p', 'c', 'gold']);
    expect(Object.getPrototypeOf(meta)).toBe(Object.prototype);
    const listed = await request(h.app).get(`/v1/jobs?filter=${f('Meta["__proto__"] == "p"')}`);
    expect(listed.status).toBe(200);
    expect(listed.body.map((j: { ID: string }) => j.ID)).toEqual(['proto-job']);
  });
});

describe('prototype keys in map[string]string members', () => {
  it('keeps a namespace Meta __proto__ key through validation and storage', async () => {
    const res = await request(h.app).put('/v1/namespace/protons').set('Content-Type', 'application/json').send('{"Name":"protons","Meta":{"__proto__":"p","a":"b"}}');
    expect(res.status).toBe(200);
    const ns = await request(h.app).get('/v1/namespace/protons');
    expect(ns.status).toBe(200);
    const meta = ns.body.Meta as Record<string, unknown>;
    expect(Object.keys(meta).sort()).toEqual(['__proto__', 'a']);
    expect(meta['__proto__']).toBe('p');
    // A non-string value is still the member's type error, not a silent drop.
    const bad = await request(h.app).put('/v1/namespace/protons').set('Content-Type', 'application/json').send('{"Name":"protons","Meta":{"__proto__":{"x":1}}}');
    expect(bad.status).toBe(400);
  });
});

describe('hostile filters', () => {
  it('answers 200 nested parentheses and 600 chained not with the filter 400, not a 500', async () => {
    for (const filter of [`${'('.repeat(200)}ID == "x"${')'.repeat(200)}`, `${'not '.repeat(600)}ID == "x"`, '('.repeat(5000)]) {
      const res = await request(h.app).get(`/v1/jobs?filter=${f(filter)}`);
      expect(res.status).toBe(400);
      expect(res.headers['content-type']).toMatch(/^text\/plain/);
      expect(res.text).toMatch(/^failed to create result paginator: failed to read filter expression: 1:\d+ \(\d+\): rule [\w"]+: (expression nested deeper than 200 rules|max number of expressions parsed)/);
    }
  });
});

describe('int64 fields beyond 2^53 (issue 29 item 3)', () => {
  it('renders SubmitTime exactly and a filter on the returned value matches', async () => {
    await registerJob(h.app, minimalJob('ns-job'));
    const job = await request(h.app).get('/v1/job/ns-job');
    expect(job.status).toBe(200);
    const submitText = /"SubmitTime":(\d+)/.exec(job.text)?.[1] as string;
    expect(BigInt(submitText)).toBeGreaterThan(2n ** 53n);
    // The number as the API wrote it, digit for digit, is what the filter names.
    const hit = await request(h.app).get(`/v1/jobs?filter=${f(`SubmitTime == ${submitText}`)}`);
    expect(hit.status).toBe(200);
    expect(hit.body.map((j: { ID: string }) => j.ID)).toEqual(['ns-job']);
    const miss = await request(h.app).get(`/v1/jobs?filter=${f(`SubmitTime == ${BigInt(submitText) + 1n}`)}`);
    expect(miss.body).toEqual([]);
    // The stub in the list carries the same digits.
    const list = await request(h.app).get('/v1/jobs?prefix=ns-job');
    expect(list.text).toContain(`"SubmitTime":${submitText}`);
  });

  it('keeps an exact int64 from a request body and refuses one a double would round', async () => {
    // A job read back and registered again carries its own times: accepted as sent.
    const body = JSON.stringify({ Job: minimalJob('ns-job-2', { Meta: { k: 'v' } }), EnforceIndex: false }).replace('"EnforceIndex":false', '"EnforceIndex":false,"JobModifyIndex":0');
    expect((await putJob(body.replace('"Meta"', '"SubmitTime":1764244966123000000,"Meta"'))).status).toBe(200);
    const rounded = await putJob(body.replace('"Meta"', '"SubmitTime":1764244966123456789,"Meta"'));
    expectPlain(rounded, 400, 'failed to parse JSON input: number 1764244966123456789 cannot be represented exactly (integers beyond 2^53 must be exact doubles)');
    const index = await putJob(body.replace('"JobModifyIndex":0', '"JobModifyIndex":18446744073709551615'));
    expectPlain(index, 400, 'failed to parse JSON input: number 18446744073709551615 cannot be represented exactly (integers beyond 2^53 must be exact doubles)');
  });
});
