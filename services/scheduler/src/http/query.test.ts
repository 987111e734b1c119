// The scheduler's field kinds and query conventions as the kit applies them: what a
// handler gets for each wire value, and Nomad's exact answer to a bad one (reference §0.1,
// §1.3), through a real kit app (the same dispatcher, decode and invalid hooks as /v1).
import request from 'supertest';
import { z } from 'zod';
import { createKitApp, mountPaths, requestToken } from '@selfstack/http-kit';
import { createLogger } from '@selfstack/logger';
import { V1_MOUNT } from '../app';
import { goBool, jsonMember, stringList } from './fields';
import { DEFAULT_WAIT_MS, LIST_QUERY, listQuery, MAX_WAIT_MS, readOptions, WRITE_QUERY } from './query';
import { schedulerPath, TOKEN_HEADERS, type RequestExtra } from './request-context';

const probe = schedulerPath({
  pattern: 'probe',
  summary: 'echoes what its handlers get',
  fields: {
    ...LIST_QUERY,
    purge: goBool('a Nomad boolean'),
    task_states: goBool('a Nomad boolean that defaults to true', true),
  },
  operations: {
    read(ctx) {
      const { signal: _signal, ...blocking } = readOptions(ctx);
      return { list: listQuery(ctx), blocking, purge: ctx.query.purge, taskStates: ctx.query.task_states, stale: ctx.query.stale, pretty: ctx.query.pretty };
    },
  },
});

const write = schedulerPath({
  pattern: 'write',
  summary: 'a write with typed JSON members',
  fields: {
    ...WRITE_QUERY,
    Pause: jsonMember(z.boolean(), 'DeploymentPauseRequest.Pause', 'bool', 'pause'),
    Groups: jsonMember(stringList, 'DeploymentPromoteRequest.Groups', '[]string', 'groups'),
  },
  operations: {
    read(ctx) {
      return { data: ctx.data };
    },
    update(ctx) {
      return { body: ctx.body };
    },
  },
});

const app = createKitApp({ service: 'scheduler', logger: createLogger({ service: 't', silent: true }), errorFlavour: 'nomad', metrics: false, jsonWithoutContentType: true }, (a) => {
  mountPaths<RequestExtra>(a, [probe, write], { ...V1_MOUNT, extra: () => ({ identity: { acl: {} as never, token: null } }) });
});

async function get(query: string, headers: Record<string, string> = {}) {
  return request(app).get(`/v1/probe${query}`).set(headers);
}

function expectPlain(res: request.Response, status: number, text: string): void {
  expect(res.status).toBe(status);
  expect(res.headers['content-type']).toMatch(/^text\/plain/);
  expect(res.text).toBe(text);
}

describe('query conventions', () => {
  it('applies the defaults', async () => {
    const res = await get('');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      list: { namespace: 'default', allNamespaces: false, prefix: '', filter: '', perPage: 0, nextToken: '', reverse: false },
      blocking: { minIndex: 0, waitMs: DEFAULT_WAIT_MS },
      purge: false,
      taskStates: true,
      stale: false,
      pretty: false,
    });
  });

  it('parses wait as a Go duration, capped at 10 minutes', async () => {
    expect((await get('?wait=10s')).body.blocking.waitMs).toBe(10_000);
    expect((await get('?wait=1m30s')).body.blocking.waitMs).toBe(90_000);
    expect((await get('?wait=300000ms')).body.blocking.waitMs).toBe(300_000);
    expect((await get('?wait=0')).body.blocking.waitMs).toBe(0);
    expect((await get('?wait=1h')).body.blocking.waitMs).toBe(MAX_WAIT_MS);
    for (const bad of ['10', 'soon', '', '%2010s', '-1s']) expectPlain(await get(`?wait=${bad}`), 400, 'Invalid wait time');
  });

  it('validates index, stale and per_page with Nomad\'s texts, the first bad one answering', async () => {
    expect((await get('?index=42')).body.blocking.minIndex).toBe(42);
    expectPlain(await get('?index=-1'), 400, 'Invalid index');
    expectPlain(await get('?index='), 400, 'Invalid index');
    expectPlain(await get('?index=99999999999999999999'), 400, 'Invalid index');
    for (const q of ['?stale', '?stale=', '?stale=true']) expect((await get(q)).body.stale).toBe(true);
    expect((await get('?stale=false')).body.stale).toBe(false);
    expectPlain(await get('?stale=yes'), 400, 'Expect `true` or `false` for `stale` query string parameter');
    expectPlain(await get('?stale=1'), 400, 'Expect `true` or `false` for `stale` query string parameter');
    expect((await get('?per_page=25')).body.list.perPage).toBe(25);
    for (const bad of ['ten', '-1', '2147483648', '1e3', '']) expectPlain(await get(`?per_page=${bad}`), 400, 'Expect a number for `per_page` query string parameter');
    // wait, index, stale, per_page: Nomad's order.
    expectPlain(await get('?per_page=x&stale=x&index=x&wait=x'), 400, 'Invalid wait time');
    expectPlain(await get('?per_page=x&stale=x&index=x'), 400, 'Invalid index');
    expectPlain(await get('?per_page=x&stale=x&purge=x'), 400, 'Expect `true` or `false` for `stale` query string parameter');
  });

  it('reads pretty, reverse, namespace (with its headers) and the first of repeated values', async () => {
    expect((await get('?pretty')).body.pretty).toBe(true);
    expect((await get('?pretty=false')).body.pretty).toBe(true);
    expect((await get('?pretty=0')).body.pretty).toBe(false);
    expect((await get('?reverse=true')).body.list.reverse).toBe(true);
    expect((await get('?reverse=1')).body.list.reverse).toBe(false);
    expect((await get('?namespace=*')).body.list).toMatchObject({ namespace: '*', allNamespaces: true });
    expect((await get('', { 'X-Nomad-Namespace': 'prod' })).body.list.namespace).toBe('prod');
    expect((await get('', { 'X-Scheduler-Namespace': 'a', 'X-Nomad-Namespace': 'b' })).body.list.namespace).toBe('a');
    expect((await get('?namespace=q', { 'X-Nomad-Namespace': 'prod' })).body.list.namespace).toBe('q');
    expect((await get('?namespace=', { 'X-Nomad-Namespace': 'prod' })).body.list.namespace).toBe('default');
    expect((await get('?prefix=a&prefix=b&next_token=10.x')).body.list).toMatchObject({ prefix: 'a', nextToken: '10.x' });
  });

  it("answers a bad boolean flag as Nomad's parseBool does: empty is the default, a bad value a plain 500", async () => {
    for (const [q, v] of [['purge=true', true], ['purge=1', true], ['purge=T', true], ['purge=False', false], ['purge=', false]] as const) {
      expect((await get(`?${q}`)).body.purge).toBe(v);
    }
    expect((await get('?task_states=')).body.taskStates).toBe(true);
    expect((await get('?task_states=false')).body.taskStates).toBe(false);
    expectPlain(await get('?purge=maybe'), 500, 'Failed to parse value of "purge" (maybe) as a bool: strconv.ParseBool: parsing "maybe": invalid syntax');
  });
});

describe('JSON members', () => {
  it('are decoded strictly, null as unset, a wrong kind answered with Go\'s UnmarshalTypeError text', async () => {
    const ok = await request(app).put('/v1/write').send({ Pause: true, Groups: ['web'], Other: 1 });
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ body: { Pause: true, Groups: ['web'] } });
    expect((await request(app).put('/v1/write').send({ Pause: null })).body).toEqual({ body: {} });
    expectPlain(await request(app).put('/v1/write').send({ Pause: 'true' }), 400, 'json: cannot unmarshal string into Go struct field DeploymentPauseRequest.Pause of type bool');
    expectPlain(await request(app).put('/v1/write').send({ Groups: 'web' }), 400, 'json: cannot unmarshal string into Go struct field DeploymentPromoteRequest.Groups of type []string');
    expectPlain(await request(app).put('/v1/write').send({ Groups: [{ a: 1 }] }), 400, 'json: cannot unmarshal array into Go struct field DeploymentPromoteRequest.Groups of type []string');
  });

  it('are not read from the query string of a read', async () => {
    const res = await request(app).get('/v1/write?Pause=zz&pretty=0');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: { pretty: false } });
  });
});

describe('the request token', () => {
  it('is X-Scheduler-Token, then X-Nomad-Token, then a Bearer token', () => {
    const token = (headers: Record<string, string>) => requestToken(headers, TOKEN_HEADERS);
    expect(token({ 'x-scheduler-token': ' a ', 'x-nomad-token': 'b' })).toBe('a');
    expect(token({ 'x-nomad-token': 'b', authorization: 'Bearer c' })).toBe('b');
    expect(token({ authorization: 'bearer c' })).toBe('c');
    expect(token({ authorization: 'Basic c' })).toBeUndefined();
    expect(token({})).toBeUndefined();
  });
});
