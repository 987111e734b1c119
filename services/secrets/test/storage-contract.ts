// The storage contract's suite (src/features/barrier/storage.types.ts; issue 31, item 3):
// one `describe` factory that every implementation runs. The in-memory store, the physical
// cache over it and the barrier over it run it as unit tests
// (src/features/barrier/storage-contract.test.ts); the PostgreSQL entry store, the cache
// over it and the barrier over that (the production stack) as integration tests
// (test/storage-contract.itest.ts). Values are opaque bytes; paths are kept under a fresh
// prefix per test, so subjects may share a database.
import { EntryConflictError, TX_ATTEMPTS, type Storage, type StorageTx } from '../src/features/barrier/storage.types';

export interface ContractSubject {
  storage: Storage;
  /**
   * Another handle on the same entries (a second pool, the cache's uncached view, ...):
   * what one writes, the other reads at once.
   */
  other: Storage;
}

const b = (s: string): Buffer => Buffer.from(s);
const text = (v: Buffer | null | undefined): string | null => (v === null || v === undefined ? null : v.toString('utf8'));
const texts = (m: Map<string, Buffer>): Record<string, string> => Object.fromEntries([...m].map(([k, v]) => [k, v.toString('utf8')]));

/** Resolves when `open()` is called: holds a transaction open at a chosen point. */
function gate(): { wait: Promise<void>; open: () => void } {
  let open!: () => void;
  const wait = new Promise<void>((r) => (open = r));
  return { wait, open };
}

let nextPrefix = 0;

export function describeStorageContract(name: string, setup: () => Promise<ContractSubject & { close?: () => Promise<void> }>): void {
  describe(`storage contract: ${name}`, () => {
    let subject: ContractSubject & { close?: () => Promise<void> };
    let s: Storage;
    let P = '';
    beforeAll(async () => {
      subject = await setup();
      s = subject.storage;
    });
    afterAll(async () => {
      await subject.close?.();
    });
    beforeEach(() => {
      P = `contract-${process.pid}-${Date.now().toString(36)}-${nextPrefix++}/`;
    });

    describe('get, put, delete (Vault logical.Storage)', () => {
      it('reads what was put, replaces it, and forgets it on delete', async () => {
        expect(await s.get(`${P}a`)).toBeNull();
        await s.put(`${P}a`, b('one'));
        expect(text(await s.get(`${P}a`))).toBe('one');
        await s.put(`${P}a`, b('two'));
        expect(text(await s.get(`${P}a`))).toBe('two');
        await s.delete(`${P}a`);
        expect(await s.get(`${P}a`)).toBeNull();
        // Deleting what is not there is no error.
        await s.delete(`${P}a`);
        expect(await s.get(`${P}a`)).toBeNull();
      });

      it('keeps bytes exactly (empty, binary, large) and paths exactly (Unicode, slashes, dots)', async () => {
        const binary = Buffer.from([0, 1, 254, 255, 0]);
        const large = Buffer.alloc(256 * 1024, 7);
        const paths = [`${P}empty`, `${P}é/ü`, `${P}\u{1f600}`, `${P}a.b/./c`, `${P}sp ace`];
        await s.put(paths[0] as string, Buffer.alloc(0));
        await s.put(paths[1] as string, binary);
        await s.put(paths[2] as string, large);
        await s.put(paths[3] as string, b('dots'));
        await s.put(paths[4] as string, b('space'));
        expect((await s.get(paths[0] as string))?.length).toBe(0);
        expect((await s.get(paths[1] as string))?.equals(binary)).toBe(true);
        expect((await s.get(paths[2] as string))?.equals(large)).toBe(true);
        expect(text(await s.get(paths[3] as string))).toBe('dots');
        expect(text(await s.get(paths[4] as string))).toBe('space');
      });

      it('what one handle writes, the other reads at once', async () => {
        await s.put(`${P}x`, b('1'));
        expect(text(await subject.other.get(`${P}x`))).toBe('1');
        await subject.other.put(`${P}x`, b('2'));
        expect(text(await s.get(`${P}x`))).toBe('2');
        await subject.other.delete(`${P}x`);
        expect(await s.get(`${P}x`)).toBeNull();
      });
    });

    describe('list and deletePrefix', () => {
      it('lists every path under the prefix, nested ones too, in byte order; nothing else', async () => {
        const under = ['a', 'b/c', 'b/d/e', 'é', '\u{1f600}', '\uffff', 'z'].map((p) => `${P}d/${p}`);
        for (const p of [...under].reverse()) await s.put(p, b('v'));
        await s.put(`${P}d0`, b('beside'));
        await s.put(`${P}d`, b('the folder name itself'));
        const byteOrder = [...under].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y)));
        // UTF-8 order puts U+FFFF before U+1F600 (JavaScript's UTF-16 order would not).
        expect(byteOrder.indexOf(`${P}d/\uffff`)).toBeLessThan(byteOrder.indexOf(`${P}d/\u{1f600}`));
        expect(await s.list(`${P}d/`)).toEqual(byteOrder);
        expect(await s.list(`${P}d/b/`)).toEqual([`${P}d/b/c`, `${P}d/b/d/e`]);
        expect(await s.list(`${P}nothing/`)).toEqual([]);
      });

      it('deletes everything under a prefix, says how many, and nothing beside it', async () => {
        for (const p of ['k/1', 'k/2', 'k/sub/3', 'k0', 'j/1']) await s.put(`${P}${p}`, b('v'));
        expect(await s.deletePrefix(`${P}k/`)).toBe(3);
        expect(await s.list(P)).toEqual([`${P}j/1`, `${P}k0`]);
        expect(await s.deletePrefix(`${P}k/`)).toBe(0);
      });
    });

    describe('getMany and getWithLast', () => {
      it('getMany answers the paths that exist', async () => {
        await s.put(`${P}1`, b('one'));
        await s.put(`${P}2`, b('two'));
        expect(texts(await s.getMany([`${P}1`, `${P}2`, `${P}3`]))).toEqual({ [`${P}1`]: 'one', [`${P}2`]: 'two' });
        expect((await s.getMany([])).size).toBe(0);
      });

      it('getWithLast answers a path and the greatest path under a prefix, in byte order', async () => {
        const dir = `${P}ver/h/`;
        expect(await s.getWithLast(`${P}meta`, dir)).toEqual({ entry: null, last: null });
        await s.put(`${P}meta`, b('m'));
        expect(text((await s.getWithLast(`${P}meta`, dir)).entry)).toBe('m');
        await s.put(`${dir}0000000000000002`, b('v2'));
        await s.put(`${dir}0000000000000010`, b('v10'));
        await s.put(`${dir}0000000000000009`, b('v9'));
        await s.put(`${P}ver/h0`, b('beside the prefix'));
        const r = await s.getWithLast(`${P}meta`, dir);
        expect({ entry: text(r.entry), last: r.last && { path: r.last.path, value: text(r.last.value) } }).toEqual({
          entry: 'm',
          last: { path: `${dir}0000000000000010`, value: 'v10' },
        });
        await s.delete(`${P}meta`);
        await s.delete(`${dir}0000000000000010`);
        const after = await s.getWithLast(`${P}meta`, dir);
        expect({ entry: after.entry, last: after.last?.path }).toEqual({ entry: null, last: `${dir}0000000000000009` });
      });
    });

    describe('conditional writes (getGuarded, applyIf)', () => {
      it('applies while the path is as read: creates, then updates, deleting and writing the other paths with it', async () => {
        const first = await s.getGuarded(`${P}g`);
        expect(first.value).toBeNull();
        await s.put(`${P}old`, b('o'));
        const created = await s.applyIf(`${P}g`, first.guard, b('g1'), [`${P}old`], [{ path: `${P}new`, value: b('n') }]);
        expect(created).not.toBeNull();
        expect(text(await s.get(`${P}g`))).toBe('g1');
        expect(await s.get(`${P}old`)).toBeNull();
        expect(text(await s.get(`${P}new`))).toBe('n');
        // The guard it returned is the next write's: no read needed.
        const updated = await s.applyIf(`${P}g`, created!, b('g2'), [`${P}new`], [{ path: `${P}newer`, value: b('n2') }]);
        expect(updated).not.toBeNull();
        expect(text(await s.get(`${P}g`))).toBe('g2');
        expect(await s.get(`${P}new`)).toBeNull();
        // A guard taken by a read works the same.
        const read = await s.getGuarded(`${P}g`);
        expect(text(read.value)).toBe('g2');
        expect(await s.applyIf(`${P}g`, read.guard, b('g3'), [], [])).not.toBeNull();
        expect(text(await s.get(`${P}g`))).toBe('g3');
      });

      it('changes nothing when the path changed since (a write, a delete, a creation, another handle)', async () => {
        await s.put(`${P}g`, b('v1'));
        await s.put(`${P}keep`, b('k'));
        const seen = await s.getGuarded(`${P}g`);
        await subject.other.put(`${P}g`, b('v2'));
        expect(await s.applyIf(`${P}g`, seen.guard, b('mine'), [`${P}keep`], [{ path: `${P}put`, value: b('p') }])).toBeNull();
        expect(text(await s.get(`${P}g`))).toBe('v2');
        expect(text(await s.get(`${P}keep`))).toBe('k');
        expect(await s.get(`${P}put`)).toBeNull();

        const present = await s.getGuarded(`${P}g`);
        await s.delete(`${P}g`);
        expect(await s.applyIf(`${P}g`, present.guard, b('mine'), [], [])).toBeNull();
        expect(await s.get(`${P}g`)).toBeNull();

        const absent = await s.getGuarded(`${P}g`);
        await s.put(`${P}g`, b('created meanwhile'));
        expect(await s.applyIf(`${P}g`, absent.guard, b('mine'), [], [])).toBeNull();
        expect(text(await s.get(`${P}g`))).toBe('created meanwhile');

        // A guard that was used is spent: the path now holds what it wrote.
        const once = await s.getGuarded(`${P}g`);
        expect(await s.applyIf(`${P}g`, once.guard, b('w1'), [], [])).not.toBeNull();
        expect(await s.applyIf(`${P}g`, once.guard, b('w2'), [], [])).toBeNull();
        expect(text(await s.get(`${P}g`))).toBe('w1');
      });

      it('a value that merely starts with what the guard saw is a change', async () => {
        await s.put(`${P}g`, b('abc'));
        const seen = await s.getGuarded(`${P}g`);
        await s.put(`${P}g`, b('abcdef'));
        expect(await s.applyIf(`${P}g`, seen.guard, b('mine'), [], [])).toBeNull();
        expect(text(await s.get(`${P}g`))).toBe('abcdef');
      });

      it('refuses a guard of another path and paths named twice, writing nothing', async () => {
        const other = await s.getGuarded(`${P}a`);
        await expect(s.applyIf(`${P}b`, other.guard, b('x'), [], [])).rejects.toThrow(/guard of/);
        const g = await s.getGuarded(`${P}g`);
        await expect(s.applyIf(`${P}g`, g.guard, b('x'), [`${P}g`], [])).rejects.toThrow(/more than once/);
        await expect(s.applyIf(`${P}g`, g.guard, b('x'), [`${P}d`], [{ path: `${P}d`, value: b('y') }])).rejects.toThrow(/more than once/);
        expect(await s.list(P)).toEqual([]);
      });

      it('racing conditional writes from one read: exactly one applies, with its own other paths', async () => {
        await s.put(`${P}g`, b('start'));
        const seen = await s.getGuarded(`${P}g`);
        const n = 12;
        const results = await Promise.all(
          Array.from({ length: n }, (_, i) => (i % 2 === 0 ? s : subject.other).applyIf(`${P}g`, seen.guard, b(`w${i}`), [], [{ path: `${P}by/${i}`, value: b('x') }])),
        );
        const winners = results.flatMap((r, i) => (r === null ? [] : [i]));
        expect(winners).toHaveLength(1);
        expect(text(await s.get(`${P}g`))).toBe(`w${winners[0]}`);
        expect(await s.list(`${P}by/`)).toEqual([`${P}by/${winners[0]}`]);
      });

      it('racing creations of one path: exactly one applies', async () => {
        const absent = await s.getGuarded(`${P}new`);
        const results = await Promise.all(Array.from({ length: 8 }, (_, i) => s.applyIf(`${P}new`, absent.guard, b(`c${i}`), [], [])));
        const winners = results.flatMap((r, i) => (r === null ? [] : [i]));
        expect(winners).toHaveLength(1);
        expect(text(await s.get(`${P}new`))).toBe(`c${winners[0]}`);
      });

      it('read-and-retry writers make progress without losing an update', async () => {
        const writers = 6;
        const each = 3;
        await Promise.all(
          Array.from({ length: writers }, async (_, w) => {
            for (let i = 0; i < each; i++) {
              for (;;) {
                const seen = await (w % 2 === 0 ? s : subject.other).getGuarded(`${P}counter`);
                const next = Number(text(seen.value) ?? '0') + 1;
                if ((await s.applyIf(`${P}counter`, seen.guard, b(String(next)), [], [])) !== null) break;
              }
            }
          }),
        );
        expect(text(await s.get(`${P}counter`))).toBe(String(writers * each));
      });
    });

    describe('transactions', () => {
      it('commits every write together; the others see none of them before', async () => {
        await s.put(`${P}gone`, b('g'));
        await s.put(`${P}tree/1`, b('t'));
        const hold = gate();
        const entered = gate();
        const pending = s.transaction(async (tx) => {
          await tx.put(`${P}a`, b('a'));
          await tx.insert(`${P}b`, b('b'));
          await tx.delete(`${P}gone`);
          await tx.replace([], [{ path: `${P}c`, value: b('c') }]);
          expect(await tx.deletePrefix(`${P}tree/`)).toBe(1);
          // The transaction reads its own writes.
          expect(text(await tx.get(`${P}a`))).toBe('a');
          expect(await tx.get(`${P}gone`)).toBeNull();
          expect(await tx.list(P)).toEqual([`${P}a`, `${P}b`, `${P}c`]);
          entered.open();
          await hold.wait;
          return 'done';
        });
        await entered.wait;
        expect(await s.get(`${P}a`)).toBeNull();
        expect(text(await subject.other.get(`${P}gone`))).toBe('g');
        expect(await s.list(`${P}tree/`)).toEqual([`${P}tree/1`]);
        hold.open();
        expect(await pending).toBe('done');
        expect(await s.list(P)).toEqual([`${P}a`, `${P}b`, `${P}c`]);
        expect(text(await subject.other.get(`${P}c`))).toBe('c');
      });

      it('a transaction that throws leaves nothing: writes, deletes, replaces and prefix deletes undone', async () => {
        await s.put(`${P}kept`, b('k'));
        await s.put(`${P}tree/1`, b('t'));
        await s.put(`${P}old`, b('o'));
        await expect(
          s.transaction(async (tx) => {
            await tx.put(`${P}kept`, b('changed'));
            await tx.put(`${P}new`, b('n'));
            await tx.insert(`${P}inserted`, b('i'));
            await tx.delete(`${P}old`);
            await tx.replace([`${P}tree/1`], [{ path: `${P}r`, value: b('r') }]);
            await tx.deletePrefix(`${P}tree/`);
            throw new Error('rolled back');
          }),
        ).rejects.toThrow('rolled back');
        expect(await s.list(P)).toEqual([`${P}kept`, `${P}old`, `${P}tree/1`]);
        expect(text(await s.get(`${P}kept`))).toBe('k');
        expect(text(await subject.other.get(`${P}old`))).toBe('o');
      });

      it('row locks: concurrent read-modify-write transactions lose no update', async () => {
        await s.put(`${P}n`, b('0'));
        const n = 8;
        await Promise.all(
          Array.from({ length: n }, (_, i) =>
            (i % 2 === 0 ? s : subject.other).transaction(async (tx) => {
              const v = Number(text(await tx.get(`${P}n`, { forUpdate: true })));
              await tx.put(`${P}n`, b(String(v + 1)));
            }),
          ),
        );
        expect(text(await s.get(`${P}n`))).toBe(String(n));
      });

      it('an insert that meets a row written meanwhile runs the transaction again: create-or-increment loses nothing', async () => {
        const n = 6;
        const bump = async (tx: StorageTx): Promise<void> => {
          const v = await tx.get(`${P}c`, { forUpdate: true });
          if (v === null) await tx.insert(`${P}c`, b('1'));
          else await tx.put(`${P}c`, b(String(Number(text(v)) + 1)));
        };
        await Promise.all(Array.from({ length: n }, (_, i) => (i % 2 === 0 ? s : subject.other).transaction(bump)));
        expect(text(await s.get(`${P}c`))).toBe(String(n));
      });

      it('an insert of an existing row throws EntryConflictError: caught, the transaction goes on; not, it is retried, then thrown', async () => {
        await s.put(`${P}x`, b('there'));
        const caught = await s.transaction(async (tx) => {
          const err = await tx.insert(`${P}x`, b('again')).catch((e: unknown) => e);
          return err instanceof EntryConflictError;
        });
        expect(caught).toBe(true);
        let attempts = 0;
        await expect(
          s.transaction(async (tx) => {
            attempts++;
            await tx.put(`${P}side`, b('s'));
            await tx.insert(`${P}x`, b('again'));
          }),
        ).rejects.toBeInstanceOf(EntryConflictError);
        expect(attempts).toBe(TX_ATTEMPTS);
        expect(text(await s.get(`${P}x`))).toBe('there');
        expect(await s.get(`${P}side`)).toBeNull();
      });

      it('replace refuses a path both deleted and written, and the transaction leaves nothing', async () => {
        await expect(
          s.transaction(async (tx) => {
            await tx.put(`${P}a`, b('a'));
            await tx.replace([`${P}x`], [{ path: `${P}x`, value: b('x') }]);
          }),
        ).rejects.toThrow(/both deleted and written/);
        expect(await s.list(P)).toEqual([]);
      });

      it('a conditional write racing a transaction on the same path: one of them wins, never both', async () => {
        await s.put(`${P}g`, b('v0'));
        const seen = await s.getGuarded(`${P}g`);
        const hold = gate();
        const locked = gate();
        const tx = s.transaction(async (t) => {
          await t.get(`${P}g`, { forUpdate: true });
          await t.put(`${P}g`, b('tx'));
          locked.open();
          await hold.wait;
        });
        await locked.wait;
        const cond = s.applyIf(`${P}g`, seen.guard, b('cond'), [], []);
        hold.open();
        await tx;
        expect(await cond).toBeNull();
        expect(text(await s.get(`${P}g`))).toBe('tx');
      });
    });
  });
}
