import { createMemoryBus } from '@selfstack/bus';
import { StatusResponse } from '../../core/errors';
import { goDuration, rfc3339 } from '../../core/duration';
import { RawJson, stringifyWithRaw } from '../../core/json';
import { createMemoryStores } from '../../../test/memory-store';
import { createBarrier } from '../barrier/barrier.service';
import { hmacHex } from '../barrier/salt';
import { childrenOf, createKvService, mergePatch, subkeysOf, validateCustomMetadata } from './kv.service';

describe('KV helpers', () => {
  it('mergePatch follows RFC 7396', () => {
    expect(mergePatch({ a: 1, b: { c: 2, d: 3 }, e: [1] }, { a: null, b: { c: null, x: 1 }, e: [2], f: 'n' })).toEqual({ b: { d: 3, x: 1 }, e: [2], f: 'n' });
    expect(mergePatch({ a: 1 }, 'scalar')).toBe('scalar');
    expect(mergePatch('scalar', { a: 1 })).toEqual({ a: 1 });
  });
  it('childrenOf lists direct children, folders with a slash, sorted', () => {
    expect(childrenOf(['p/a', 'p/b/c', 'p/b/d', 'p/b', 'p/z/y/x'], 'p/')).toEqual(['a', 'b', 'b/', 'z/']);
    expect(childrenOf([], 'p/')).toEqual([]);
  });
  it('subkeysOf replaces leaves with null and honours depth', () => {
    const v = { a: 1, b: { c: { d: 1 } }, e: [1, 2] };
    expect(subkeysOf(v, 0)).toEqual({ a: null, b: { c: { d: null } }, e: null });
    expect(subkeysOf(v, 2)).toEqual({ a: null, b: { c: null }, e: null });
  });
  it('validates custom metadata', () => {
    expect(validateCustomMetadata({ a: 'b' })).toEqual({ a: 'b' });
    expect(() => validateCustomMetadata({ ['k'.repeat(129)]: 'v' })).toThrow(/length of key/);
    expect(() => validateCustomMetadata({ k: 'v'.repeat(513) })).toThrow(/length of value/);
    expect(() => validateCustomMetadata({ k: 1 as unknown as string })).toThrow(/must be a string/);
    expect(() => validateCustomMetadata({ k: 'a\u0000b' })).toThrow(/unprintable/);
  });
  it('formats durations and times as Go does', () => {
    expect(goDuration(0)).toBe('0s');
    expect(goDuration(45)).toBe('45s');
    expect(goDuration(60)).toBe('1m0s');
    expect(goDuration(12319)).toBe('3h25m19s');
    expect(rfc3339(Date.UTC(2026, 0, 2, 3, 4, 5, 120))).toBe('2026-01-02T03:04:05.12Z');
    expect(rfc3339(Date.UTC(2026, 0, 2, 3, 4, 5, 0))).toBe('2026-01-02T03:04:05Z');
  });
  it('splices raw JSON verbatim', () => {
    expect(stringifyWithRaw({ a: new RawJson('{"z":1,"a":2}'), b: [new RawJson('3')] })).toBe('{"a":{"z":1,"a":2},"b":[3]}');
    expect(JSON.stringify({ a: new RawJson('{"x":1}') })).toBe('{"a":{"x":1}}');
  });
});

describe('KV v2 service over the barrier (in-memory store)', () => {
  async function setup() {
    const stores = createMemoryStores();
    const barrier = createBarrier(stores);
    const salt = Buffer.alloc(32, 7);
    const { keys } = await barrier.initialize(1, 1, async (tx) => tx.put('core/salt', salt));
    await barrier.submitUnsealKey(keys[0] as Buffer);
    let now = 1_000_000;
    const kv = createKvService({ storage: barrier, clock: { now: () => now }, bus: createMemoryBus(), hash: (v) => hmacHex(salt, v) });
    return { kv, stores, advance: (ms: number) => (now += ms), barrier };
  }

  it('writes versions, prunes at max_versions, reads old versions', async () => {
    const { kv } = await setup();
    await kv.writeMetadata('m/', 'k', { max_versions: 2 }, false);
    for (let i = 1; i <= 3; i++) expect((await kv.write('m/', 'k', { i }, undefined)).version).toBe(i);
    expect(await kv.read('m/', 'k', 1).catch((e: { status: number }) => e.status)).toBe(404);
    const v2 = await kv.read('m/', 'k', 2);
    expect(v2).not.toBeInstanceOf(StatusResponse);
    if (!(v2 instanceof StatusResponse)) expect(JSON.parse(v2.data.text)).toEqual({ i: 2 });
    const meta = await kv.readMetadata('m/', 'k');
    expect(meta).toMatchObject({ current_version: 3, oldest_version: 2 });
  });

  it('delete_version_after: a future deletion time still reads; a past one is deleted', async () => {
    const { kv, advance } = await setup();
    await kv.writeMetadata('m/', 'k', { delete_version_after: 60 }, false);
    const info = await kv.write('m/', 'k', { a: 1 }, undefined);
    expect(info.deletion_time).not.toBe('');
    expect(await kv.read('m/', 'k', 0)).not.toBeInstanceOf(StatusResponse);
    advance(61_000);
    const after = await kv.read('m/', 'k', 0);
    expect(after).toBeInstanceOf(StatusResponse);
    expect((after as StatusResponse).status).toBe(404);
  });

  it('stores only ciphertext, with the key name hashed in version paths', async () => {
    const { kv, stores } = await setup();
    await kv.write('m/', 'secret-name', { password: 'hunter2' }, undefined);
    for (const [path, value] of stores.entries) {
      expect(value.includes(Buffer.from('hunter2'))).toBe(false);
      if (path.startsWith('m/ver/')) expect(path.includes('secret-name')).toBe(false);
    }
  });

  it('sealing drops access to storage', async () => {
    const { kv, barrier } = await setup();
    await kv.write('m/', 'k', { a: 1 }, undefined);
    barrier.seal();
    await expect(kv.read('m/', 'k', 0)).rejects.toMatchObject({ status: 503 });
  });
});
