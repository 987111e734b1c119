import { decodeMetadata, encodeMetadata, MetadataFormatError, type KeyMetadata } from './kv-layout';

const T0 = 1_764_000_000_000;

function tenVersions(): KeyMetadata {
  const versions: KeyMetadata['versions'] = {};
  for (let n = 101; n <= 110; n++) versions[String(n)] = { created_ms: T0 + n * 1000, deletion_ms: null, destroyed: false };
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

describe('KV metadata encoding', () => {
  it('round-trips every field, deletion times and destroyed flags included', () => {
    const meta = tenVersions();
    meta.cas_required = true;
    meta.max_versions = 12;
    meta.delete_version_after = 3600;
    meta.custom_metadata = { owner: 'ops', 'Ünïcode "quoted"': 'v;1' };
    (meta.versions['103'] as KeyMetadata['versions'][string]).deletion_ms = T0 + 5;
    (meta.versions['104'] as KeyMetadata['versions'][string]).destroyed = true;
    // A version created before the key's own creation time (another replica's clock).
    (meta.versions['105'] as KeyMetadata['versions'][string]).created_ms = T0 - 250;
    const decoded = decodeMetadata(encodeMetadata(meta));
    expect(decoded).toEqual(meta);
    expect(Object.keys(decoded.versions)).toEqual(Object.keys(meta.versions));
  });

  it('a key with settings and no versions yet', () => {
    const meta: KeyMetadata = { ...tenVersions(), versions: {}, current_version: 0, oldest_version: 0 };
    expect(decodeMetadata(encodeMetadata(meta))).toEqual(meta);
  });

  it('is a quarter of the size of the earlier encoding at 10 versions', () => {
    const meta = tenVersions();
    const compact = encodeMetadata(meta).length;
    const earlier = Buffer.from(JSON.stringify(meta)).length;
    expect(compact).toBeLessThan(260);
    expect(earlier).toBeGreaterThan(880);
  });

  it('still reads the earlier encoding (the KeyMetadata object as JSON)', () => {
    const meta = tenVersions();
    (meta.versions['110'] as KeyMetadata['versions'][string]).deletion_ms = T0 + 120_000;
    expect(decodeMetadata(Buffer.from(JSON.stringify(meta)))).toEqual(meta);
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
    expect(() => decodeMetadata(Buffer.from('[1,'))).toThrow(SyntaxError);
  });
});
