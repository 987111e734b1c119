import { decodeMetadata, encodeMetadata, findVersion, MetadataFormatError, type KeyMetadata, type VersionMeta } from './kv-layout';

const T0 = 1_764_000_000_000;

function tenVersions(): KeyMetadata {
  const versions: VersionMeta[] = [];
  for (let n = 101; n <= 110; n++) versions.push({ n, created_ms: T0 + n * 1000, deletion_ms: null, destroyed: false });
  return {
    created_ms: T0,
    updated_ms: T0 + 110_000,
    current_version: 110,
    oldest_version: 101,
    max_versions: 0,
    cas_required: false,
    delete_version_after: 0,
    custom_metadata: null,
    versions,
  };
}

/** The same metadata in the encoding written before 2026-11-25: an object, versions keyed by number. */
function earlierEncoding(meta: KeyMetadata): Buffer {
  const versions: Record<string, Omit<VersionMeta, 'n'>> = {};
  for (const { n, ...rest } of meta.versions) versions[String(n)] = rest;
  return Buffer.from(JSON.stringify({ ...meta, versions }));
}

const version = (meta: KeyMetadata, n: number): VersionMeta => {
  const v = findVersion(meta, n);
  if (!v) throw new Error(`no version ${n}`);
  return v;
};

describe('KV metadata encoding', () => {
  it('round-trips every field, deletion times and destroyed flags included', () => {
    const meta = tenVersions();
    meta.cas_required = true;
    meta.max_versions = 12;
    meta.delete_version_after = 3600;
    meta.custom_metadata = { owner: 'ops', 'Ünïcode "quoted"': 'v;1' };
    version(meta, 103).deletion_ms = T0 + 5;
    version(meta, 104).destroyed = true;
    // A version created before the key's own creation time (another replica's clock).
    version(meta, 105).created_ms = T0 - 250;
    const decoded = decodeMetadata(encodeMetadata(meta));
    expect(decoded).toEqual(meta);
    expect(decoded.versions.map((v) => v.n)).toEqual([101, 102, 103, 104, 105, 106, 107, 108, 109, 110]);
  });

  it('a key with settings and no versions yet', () => {
    const meta: KeyMetadata = { ...tenVersions(), versions: [], current_version: 0, oldest_version: 0 };
    expect(decodeMetadata(encodeMetadata(meta))).toEqual(meta);
  });

  it('is a quarter of the size of the earlier encoding at 10 versions', () => {
    const meta = tenVersions();
    const compact = encodeMetadata(meta).length;
    const earlier = earlierEncoding(meta).length;
    expect(compact).toBeLessThan(260);
    expect(earlier).toBeGreaterThan(880);
  });

  it('still reads the earlier encoding (the KeyMetadata object as JSON)', () => {
    const meta = tenVersions();
    version(meta, 110).deletion_ms = T0 + 120_000;
    expect(decodeMetadata(earlierEncoding(meta))).toEqual(meta);
  });

  it('finds a version by number, newest first, and nothing where none is recorded', () => {
    const meta = tenVersions();
    expect(findVersion(meta, 110)?.created_ms).toBe(T0 + 110_000);
    expect(findVersion(meta, 101)?.created_ms).toBe(T0 + 101_000);
    for (const n of [0, 100, 111, -1, 105.5]) expect(findVersion(meta, n)).toBeUndefined();
    expect(findVersion({ ...meta, versions: [] }, 1)).toBeUndefined();
  });

  it('refuses what it cannot read rather than guessing', () => {
    const good = JSON.parse(encodeMetadata(tenVersions()).toString('utf8')) as unknown[];
    const bad = (mutate: (a: unknown[]) => void): Buffer => {
      const copy = structuredClone(good);
      mutate(copy);
      return Buffer.from(JSON.stringify(copy));
    };
    expect(() => decodeMetadata(bad((a) => (a[0] = 2)))).toThrow(new MetadataFormatError('format 2'));
    expect(() => decodeMetadata(bad((a) => (a[3] = '110')))).toThrow(MetadataFormatError);
    expect(() => decodeMetadata(bad((a) => (a[9] = (a[9] as unknown[]).slice(1))))).toThrow(MetadataFormatError);
    expect(() => decodeMetadata(bad((a) => ((a[9] as unknown[])[3] = true)))).toThrow(/bad version entry at 0/);
    expect(() => decodeMetadata(bad((a) => ((a[9] as unknown[])[6] = 'soon')))).toThrow(/bad version entry at 1/);
    // Versions are written ascending, each once.
    expect(() => decodeMetadata(bad((a) => ((a[9] as unknown[])[4] = 101)))).toThrow(/version entry at 1 out of order/);
    expect(() => decodeMetadata(bad((a) => ((a[9] as unknown[])[8] = 102)))).toThrow(/version entry at 2 out of order/);
    expect(() => decodeMetadata(Buffer.from('[1,'))).toThrow(SyntaxError);
  });
});
