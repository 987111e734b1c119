import { createMemoryBus } from '@selfstack/bus';
import { createMemoryStores } from '../../../test/memory-store';
import { createAuthMountService } from '../auth/auth-mounts.service';
import { createMountService } from '../mounts/mounts.service';
import { createPolicyService } from '../policies/policies.service';
import type { TokenService } from '../tokens/tokens.service';
import { createNamespaceService } from './namespaces.service';
import { canonicalNamespacePath, ROOT_NAMESPACE } from './namespaces.types';

describe('canonicalNamespacePath', () => {
  it.each([
    ['', ''],
    ['/', ''],
    ['root', ''],
    ['root/', ''],
    ['ns1', 'ns1/'],
    ['/ns1/ns2/', 'ns1/ns2/'],
    ['ns1//ns2', 'ns1/ns2/'],
    ['ns1/root', 'ns1/root/'],
  ])('%j -> %j', (raw, want) => {
    expect(canonicalNamespacePath(raw)).toBe(want);
  });
});

describe('namespace service', () => {
  const make = () => {
    const mem = createMemoryStores();
    const bus = createMemoryBus();
    const storage = mem.entryStore;
    const revoked: string[] = [];
    const tokens = { revokeByNamespace: async (id: string) => void revoked.push(id) } as unknown as TokenService;
    const root = {
      ns: ROOT_NAMESPACE,
      mounts: createMountService({ storage, bus, now: () => 0, hash: (v) => v }),
      policies: createPolicyService({ storage, bus }),
      auth: createAuthMountService({ storage, bus }),
    };
    const namespaces = createNamespaceService({ storage, bus, tokens, now: () => 0, hash: (v) => v, root });
    return { namespaces, storage, revoked, bus };
  };

  it('resolves the header, then leading path segments naming children, in any split', async () => {
    const { namespaces } = make();
    const ns1 = await namespaces.put(ROOT_NAMESPACE, 'ns1', undefined);
    const ns2 = await namespaces.put(ns1, 'ns2', { a: 'b' });
    expect(ns2).toEqual({ id: expect.stringMatching(/^[A-Za-z0-9]{5}$/), path: 'ns1/ns2/', custom_metadata: { a: 'b' } });
    for (const [header, path] of [
      ['ns1/ns2/', 'secret/x'],
      ['', 'ns1/ns2/secret/x'],
      ['ns1', 'ns2/secret/x'],
      ['/ns1/ns2', 'secret/x'],
    ]) {
      expect(namespaces.resolveCached(header as string, path as string)).toEqual({ ns: ns2, path: 'secret/x' });
    }
    // A last segment is a path, not a namespace; an unknown header is not resolved.
    expect(namespaces.resolveCached('', 'ns1')).toEqual({ ns: ROOT_NAMESPACE, path: 'ns1' });
    expect(namespaces.resolveCached('nope', 'x')).toBeUndefined();
    expect(await namespaces.resolve('nope', 'x')).toBeNull();
  });

  it('refuses reserved and invalid names, and a missing parent', async () => {
    const { namespaces } = make();
    await expect(namespaces.put(ROOT_NAMESPACE, 'sys', undefined)).rejects.toMatchObject({ status: 400 });
    await expect(namespaces.put(ROOT_NAMESPACE, 'a b', undefined)).rejects.toMatchObject({ status: 400 });
    await expect(namespaces.put(ROOT_NAMESPACE, 'x/y', undefined)).rejects.toMatchObject({ status: 400, messages: ['parent namespace "x/" does not exist'] });
    await expect(namespaces.put(ROOT_NAMESPACE, '/', undefined)).rejects.toMatchObject({ status: 400, messages: ['namespace path must not be empty'] });
  });

  it('deletes a namespace with its tables, policies and tokens; refuses one with children', async () => {
    const { namespaces, storage, revoked } = make();
    const a = await namespaces.put(ROOT_NAMESPACE, 'a', undefined);
    await namespaces.put(a, 'b', undefined);
    const scope = await namespaces.scope(a);
    const mount = await scope.mounts.enable('kv', { type: 'kv' });
    await storage.put(`logical/${mount.uuid}/k`, Buffer.from('v'));
    await scope.policies.set('p', 'path "x" { capabilities = ["read"] }');
    await expect(namespaces.delete(ROOT_NAMESPACE, 'a')).rejects.toMatchObject({ status: 400, messages: ['cannot delete namespace "a/" containing child namespaces'] });
    await namespaces.delete(a, 'b');
    await namespaces.delete(ROOT_NAMESPACE, 'a');
    expect(namespaces.list()).toEqual([]);
    expect(await storage.list(`namespaces/${a.id}/`)).toEqual([]);
    expect(await storage.list(`logical/${mount.uuid}/`)).toEqual([]);
    expect(revoked).toContain(a.id);
    expect(namespaces.cachedScope(a)).toBeUndefined();
  });
});
