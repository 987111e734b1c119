// The presenter's kept serialised forms are exactly JSON.stringify of the objects it builds,
// per base URL, and are made once per record (the box reads hand out the same record while
// the box is unchanged): a changed box is a new record object with its own forms.
import { boxListText, boxText, catalogText, toBoxJson, toCatalogJson } from './boxes.presenter';
import type { BoxRecord } from './boxes.types';

const at = new Date('2026-11-27T10:00:00.000Z');

function box(name: string, downloads: number): BoxRecord {
  return {
    id: `id-${name}`,
    ownerId: 'acct-1',
    name,
    shortDescription: `the ${name} box "quoted" \u2603`,
    descriptionMarkdown: '# hi',
    descriptionHtml: '<h1>hi</h1>\n',
    isPrivate: false,
    downloads,
    createdAt: at,
    updatedAt: at,
    owner: { id: 'acct-1', username: 'alice', billingState: 'ok' },
    versions: [
      {
        id: `v1-${name}`,
        boxId: `id-${name}`,
        version: '1.0.0',
        descriptionMarkdown: '',
        descriptionHtml: '',
        status: 'active',
        createdAt: at,
        updatedAt: at,
        providers: [
          {
            id: `p-${name}`, versionId: `v1-${name}`, name: 'virtualbox', url: 'https://example.com/a.box', checksum: null, checksumType: null,
            hosted: false, blobKey: null, size: null, md5: null, sha1: null, sha256: null, sha384: null, sha512: null, createdAt: at, updatedAt: at,
          },
        ],
      },
      { id: `v2-${name}`, boxId: `id-${name}`, version: '2.0.0.rc1', descriptionMarkdown: '', descriptionHtml: '', status: 'unreleased', createdAt: at, updatedAt: at, providers: [] },
    ],
  };
}

describe('boxes presenter serialised forms', () => {
  const a = box('one', 3);
  const b = box('two', 1);

  it('equal JSON.stringify of the objects, per base', () => {
    for (const base of ['http://localhost:3100', 'https://boxes.example.com']) {
      expect(catalogText(base, a)).toBe(JSON.stringify(toCatalogJson(base, a)));
      expect(boxText(base, a, { withVersions: true })).toBe(JSON.stringify(toBoxJson(base, a, { withVersions: true })));
      expect(boxText(base, a, { withVersions: false })).toBe(JSON.stringify(toBoxJson(base, a, { withVersions: false })));
      const expected = JSON.stringify({ boxes: [a, b].map((x) => toBoxJson(base, x, { withVersions: false })) });
      expect(boxListText(base, [a, b], true)).toBe(expected);
      expect(boxListText(base, [a, b], false)).toBe(expected);
    }
    expect(boxListText('http://x', [], true)).toBe('{"boxes":[]}');
    expect(catalogText('http://a', a)).not.toBe(catalogText('http://b', a));
  });

  it('a changed record (a new object) gets its own text, the held one keeps its own', () => {
    const list = [a, b];
    const first = boxListText('http://once', list, true);
    // Records are never mutated once handed out; a changed copy is a different record.
    const changed = { ...a, downloads: 99 };
    expect(boxText('http://once', changed, { withVersions: false })).toContain('"downloads":99');
    expect(boxListText('http://once', list, true)).toBe(first);
    expect(boxListText('http://once', [changed, b], true)).toContain('"downloads":99');
  });
});
