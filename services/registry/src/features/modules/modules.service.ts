// Reading the registry: the endpoints of spec part B (list, search, versions, download,
// latest, one version, download latest, downloads summary) and the archive itself.
import type { Readable } from 'node:stream';
import { NotFoundError, UnauthorizedError } from '@selfstack/errors';
import type { BlobStore } from '@selfstack/blob';
import { ARCHIVE_CONTENT_TYPES } from '../archive/archive';
import type { ArchiveFormat } from '../archive/archive.types';
import type { ModulePart } from '../analysis/analysis.types';
import type { ArchiveSigner } from '../downloads/signing';
import { compareVersionsDesc } from './names';
import type { ModuleStore } from './modules.store';
import type {
  DownloadsSummary,
  ModuleDetail,
  ModuleFilter,
  ModuleList,
  ModulePartView,
  ModuleRecord,
  ModuleSummary,
  VersionRecord,
  VersionRequirements,
  VersionsResponse,
} from './modules.types';
import { PAGE_RULES, paginationMeta, resolvePage } from './pagination';
import { toSearchQuery } from './search';

/** Where the request came from, for `next_url` (the path and query the client sent). */
export interface RequestUrl {
  path: string;
  query: [string, string][];
}

export interface ListParams {
  namespace?: string;
  provider?: string;
  verified?: string;
  limit?: number;
  offset?: number;
}

export interface ArchiveDownload {
  stream: Readable;
  size: number;
  sha256: string;
  contentType: string;
  filename: string;
}

/** A response body serialised once: the JSON text and its length in bytes. */
export interface JsonText {
  text: string;
  bytes: number;
}

/** Versions responses held per process (the hot set of `terraform init`); oldest read go first. */
export const VERSIONS_CACHE_ENTRIES = 4096;

/** List and search answers held per process (keyed by path and query). */
export const CATALOG_CACHE_ENTRIES = 1024;
/**
 * A held list or search answer is confirmed only while its snapshot is younger than this;
 * older ones are read again. catalog_changes rows are kept for twice as long (prune).
 */
export const CATALOG_HELD_MS = 5 * 60_000;
/** How often the service notes the current snapshot's xmin (and prunes catalog_changes). */
export const CATALOG_PRUNE_EVERY_MS = 60_000;

export interface ModuleService {
  list(params: ListParams, url: RequestUrl): Promise<ModuleList>;
  search(q: string, params: ListParams, url: RequestUrl): Promise<ModuleList>;
  /**
   * `list` and `search`, serialised. Every call asks the database: an answer already built
   * is reused (not read, parsed nor serialised again) when PostgreSQL confirms that no
   * change to modules or namespaces committed since the snapshot it was built in.
   */
  listJson(params: ListParams, url: RequestUrl): Promise<JsonText>;
  searchJson(q: string, params: ListParams, url: RequestUrl): Promise<JsonText>;
  latestForAllProviders(namespace: string, name: string, params: ListParams, url: RequestUrl): Promise<ModuleList>;
  versions(namespace: string, name: string, provider: string): Promise<VersionsResponse>;
  /**
   * The versions response, serialised. Every call asks the database; a response already
   * built for the module's current set of versions is reused (not parsed, sorted nor
   * serialised again).
   */
  versionsJson(namespace: string, name: string, provider: string): Promise<JsonText>;
  /** `version` undefined: the latest version. */
  detail(namespace: string, name: string, provider: string, version?: string): Promise<ModuleDetail>;
  /** The X-Registry-Get location (relative to the download URL); records a download unless `record` is false. */
  downloadLocation(namespace: string, name: string, provider: string, version: string, record?: boolean): Promise<string>;
  latestVersion(namespace: string, name: string, provider: string): Promise<string>;
  downloadsSummary(namespace: string, name: string, provider: string): Promise<DownloadsSummary>;
  /**
   * Opens the archive of a version. Allowed with a valid signature from the download
   * endpoint, with `authorized` (a valid registry token), or always when archives are
   * public by configuration.
   */
  openArchive(
    address: { namespace: string; name: string; provider: string; version: string; format: ArchiveFormat },
    access: { signature: string | undefined; authorized: boolean },
  ): Promise<ArchiveDownload>;
}

export interface ModuleServiceDeps {
  store: ModuleStore;
  blobs: BlobStore;
  signer: ArchiveSigner;
  publicArchives: boolean;
  /** Monotonic milliseconds (tests); performance.now by default. */
  now?: () => number;
}

export const ARCHIVE_FILENAMES: Record<ArchiveFormat, string> = { 'tar.gz': 'archive.tar.gz', zip: 'archive.zip' };

/** Spec: "ISO 8601 UTC timestamp with microseconds" (JS dates carry milliseconds). */
export function microsecondTimestamp(d: Date): string {
  // toISOString is always `...sss` + `Z` for the years a module can be published in.
  return `${d.toISOString().slice(0, -1)}000Z`;
}

function filterOf(params: ListParams, namespace?: string): ModuleFilter {
  const f: ModuleFilter = { verifiedOnly: params.verified === 'true' };
  const ns = namespace ?? params.namespace;
  if (ns !== undefined) f.namespace = ns;
  if (params.provider !== undefined) f.provider = params.provider;
  return f;
}

export function summaryOf(m: ModuleRecord, v?: Pick<VersionRecord, 'version' | 'description' | 'source' | 'publishedAt'>): ModuleSummary {
  const version = v?.version ?? m.latestVersion;
  return {
    id: `${m.namespace}/${m.name}/${m.provider}/${version}`,
    owner: m.owner,
    namespace: m.namespace,
    name: m.name,
    version,
    provider: m.provider,
    description: v?.description ?? m.description,
    source: v?.source ?? m.source,
    published_at: microsecondTimestamp(v?.publishedAt ?? m.publishedAt),
    downloads: m.downloads,
    verified: m.verified,
  };
}

function partView(p: ModulePart): ModulePartView {
  return {
    path: p.path,
    readme: p.readme,
    empty: p.empty,
    inputs: p.inputs.map((i) => ({ name: i.name, type: i.type, description: i.description, default: i.default, required: i.required })),
    outputs: p.outputs,
    dependencies: p.dependencies,
    provider_dependencies: p.providers.map((r) => {
      // `hashicorp/aws` or `registry.terraform.io/hashicorp/aws`: the namespace is the
      // second-to-last segment.
      const segments = r.source.split('/');
      return { name: r.name, namespace: segments.length >= 2 ? (segments[segments.length - 2] ?? '') : '', source: r.source, version: r.version };
    }),
    resources: p.resources,
  };
}

function versionsResponse(namespace: string, name: string, provider: string, rows: ({ version: string } & VersionRequirements)[]): VersionsResponse {
  rows.sort((a, b) => compareVersionsDesc(a.version, b.version));
  return { modules: [{ source: `${namespace}/${name}/${provider}`, versions: rows.map((r) => ({ version: r.version, root: r.root, submodules: r.submodules })) }] };
}

/** The xmin of a pg_snapshot text (`xmin:xmax:xip,...`). */
function snapshotXmin(snapshot: string): string {
  return snapshot.slice(0, snapshot.indexOf(':'));
}

/**
 * List and search answers, each with the snapshot it was built in (catalogUnchangedSince
 * confirms it), and the pruning of catalog_changes: every CATALOG_PRUNE_EVERY_MS the
 * current snapshot's xmin is noted, and rows older than the xmin noted at least
 * 2 x CATALOG_HELD_MS ago are deleted. A held answer is only confirmed while younger than
 * CATALOG_HELD_MS, so its snapshot came after that note; snapshot xmins only grow, so every
 * row its confirmation needs (xid >= its xmin) is still there, whichever replica pruned.
 */
function createCatalogAnswers(store: ModuleStore, now: () => number) {
  const held = new Map<string, { snapshot: string; at: number; body: JsonText }>();
  const notes: { at: number; xmin: string }[] = [];
  let lastNote = -Infinity;
  let pruning = false;

  function keep(key: string, snapshot: string, at: number, body: JsonText): void {
    held.delete(key);
    held.set(key, { snapshot, at, body });
    if (held.size > CATALOG_CACHE_ENTRIES) held.delete(held.keys().next().value as string);
    if (at - lastNote >= CATALOG_PRUNE_EVERY_MS) {
      lastNote = at;
      notes.push({ at, xmin: snapshotXmin(snapshot) });
      prune(at);
    }
  }

  function prune(at: number): void {
    let horizon: string | undefined;
    while (notes.length > 0 && (notes[0] as { at: number }).at <= at - 2 * CATALOG_HELD_MS) horizon = (notes.shift() as { xmin: string }).xmin;
    if (horizon === undefined || pruning) return;
    pruning = true;
    // Not awaited by the request; a failure leaves the rows for the next note.
    store
      .pruneCatalogChanges(horizon)
      .catch(() => undefined)
      .finally(() => {
        pruning = false;
      });
  }

  return {
    async answer(key: string, build: () => Promise<{ body: JsonText; snapshot: string | null }>): Promise<JsonText> {
      const at = now();
      const entry = held.get(key);
      if (entry && at - entry.at < CATALOG_HELD_MS) {
        const check = await store.catalogUnchangedSince(entry.snapshot);
        if (check.unchanged) {
          keep(key, check.snapshot, at, entry.body);
          return entry.body;
        }
      }
      const built = await build();
      if (built.snapshot === null) held.delete(key);
      else keep(key, built.snapshot, at, built.body);
      return built.body;
    },
  };
}

function jsonText(value: unknown): JsonText {
  const text = JSON.stringify(value);
  return { text, bytes: Buffer.byteLength(text) };
}

export function createModuleService(deps: ModuleServiceDeps): ModuleService {
  const { store } = deps;
  const catalog = createCatalogAnswers(store, deps.now ?? (() => performance.now()));
  // The answer is a function of the path and the query (JSON: no two queries share a key).
  const urlKey = (kind: string, url: RequestUrl) => `${kind} ${url.path} ${JSON.stringify(url.query)}`;
  // Address -> the versions response built from the versions at `stamp` (id:versions_revision).
  const versionsHeld = new Map<string, { stamp: string; body: JsonText }>();

  async function requireModule(namespace: string, name: string, provider: string): Promise<ModuleRecord> {
    const m = await store.find(namespace, name, provider);
    if (!m) throw new NotFoundError(`module ${namespace}/${name}/${provider} not found`);
    return m;
  }

  async function requireVersion(m: ModuleRecord, version: string): Promise<VersionRecord> {
    const v = await store.findVersion(m.id, version);
    if (!v) throw new NotFoundError(`module ${m.namespace}/${m.name}/${m.provider} version ${version} not found`);
    return v;
  }

  return {
    async list(params, url) {
      const page = resolvePage(PAGE_RULES.list, params.limit, params.offset);
      const { modules, hasMore } = await store.list(filterOf(params), page);
      return { meta: paginationMeta(page, hasMore, url.path, url.query), modules: modules.map((m) => summaryOf(m)) };
    },

    listJson(params, url) {
      return catalog.answer(urlKey('list', url), async () => {
        const page = resolvePage(PAGE_RULES.list, params.limit, params.offset);
        const { modules, hasMore, snapshot } = await store.list(filterOf(params), page);
        return { snapshot, body: jsonText({ meta: paginationMeta(page, hasMore, url.path, url.query), modules: modules.map((m) => summaryOf(m)) }) };
      });
    },

    searchJson(q, params, url) {
      return catalog.answer(urlKey('search', url), async () => {
        const page = resolvePage(PAGE_RULES.search, params.limit, params.offset);
        const { modules, hasMore, snapshot } = await store.search(toSearchQuery(q), filterOf(params), page);
        return { snapshot, body: jsonText({ meta: paginationMeta(page, hasMore, url.path, url.query), modules: modules.map((m) => summaryOf(m)) }) };
      });
    },

    async search(q, params, url) {
      const page = resolvePage(PAGE_RULES.search, params.limit, params.offset);
      const { modules, hasMore } = await store.search(toSearchQuery(q), filterOf(params), page);
      return { meta: paginationMeta(page, hasMore, url.path, url.query), modules: modules.map((m) => summaryOf(m)) };
    },

    async latestForAllProviders(namespace, name, params, url) {
      const page = resolvePage(PAGE_RULES.latestForAllProviders, params.limit, params.offset);
      const { modules, hasMore } = await store.listByName(namespace, name, page);
      if (modules.length === 0 && page.offset === 0) throw new NotFoundError(`module ${namespace}/${name} not found`);
      return { meta: paginationMeta(page, hasMore, url.path, url.query), modules: modules.map((m) => summaryOf(m)) };
    },

    async versions(namespace, name, provider) {
      const rows = await store.versionRequirementsByAddress(namespace, name, provider);
      if (rows.length === 0) throw new NotFoundError(`module ${namespace}/${name}/${provider} not found`);
      return versionsResponse(namespace, name, provider, rows.map((r) => ({ version: r.version, ...r.requirements })));
    },

    async versionsJson(namespace, name, provider) {
      const key = `${namespace}\0${name}\0${provider}`;
      const held = versionsHeld.get(key);
      const read = await store.versionRowsByAddress(namespace, name, provider, held?.stamp ?? '');
      if (read === null) {
        versionsHeld.delete(key);
        throw new NotFoundError(`module ${namespace}/${name}/${provider} not found`);
      }
      let body: JsonText;
      if (read.rows === null) {
        // The database confirmed the version held (taken before the query: a concurrent
        // read may have replaced the map's entry since).
        if (!held || held.stamp !== read.stamp) throw new Error(`versions of ${key}: no rows at row version ${read.stamp}`);
        body = held.body;
      } else {
        const text = JSON.stringify(versionsResponse(namespace, name, provider, JSON.parse(read.rows) as ({ version: string } & VersionRequirements)[]));
        body = { text, bytes: Buffer.byteLength(text) };
      }
      versionsHeld.delete(key);
      versionsHeld.set(key, { stamp: read.stamp, body });
      if (versionsHeld.size > VERSIONS_CACHE_ENTRIES) versionsHeld.delete(versionsHeld.keys().next().value as string);
      return body;
    },

    async detail(namespace, name, provider, version) {
      const m = await requireModule(namespace, name, provider);
      const wanted = version ?? m.latestVersion;
      const [v, providers, versions] = await Promise.all([store.findVersionDetail(m.id, wanted), store.providersOf(namespace, name), store.versionStrings(m.id)]);
      if (!v) throw new NotFoundError(`module ${namespace}/${name}/${provider} version ${wanted} not found`);
      versions.sort((a, b) => compareVersionsDesc(b, a));
      return {
        ...summaryOf(m, v),
        root: partView(v.analysis.root),
        submodules: v.analysis.submodules.map(partView),
        providers,
        versions,
      };
    },

    async downloadLocation(namespace, name, provider, version, record = true) {
      const found = await store.versionForDownload(namespace, name, provider, version, record);
      // Not found: which of the two is missing decides the message.
      const v = found ?? (await requireVersion(await requireModule(namespace, name, provider), version));
      // Relative to the download URL (spec part B "Download rules"): `./archive.tar.gz`
      // next to `.../<version>/download`, so it keeps working behind a path prefix. The
      // `.tar.gz`/`.zip` suffix makes go-getter unpack it; `checksum=` makes go-getter
      // verify the bytes before unpacking (and is stripped by go-getter before the GET).
      const params = new URLSearchParams();
      if (!deps.publicArchives) params.set('token', deps.signer.sign(v.id));
      params.set('checksum', `sha256:${v.archiveSha256}`);
      return `./${ARCHIVE_FILENAMES[v.archiveFormat]}?${params.toString()}`;
    },

    async latestVersion(namespace, name, provider) {
      return (await requireModule(namespace, name, provider)).latestVersion;
    },

    async downloadsSummary(namespace, name, provider) {
      const m = await requireModule(namespace, name, provider);
      const counts = await store.downloadCounts(m.id);
      return { data: { type: 'module-downloads-summary', id: `${m.namespace}/${m.name}/${m.provider}`, attributes: counts } };
    },

    async openArchive(address, access) {
      const m = await requireModule(address.namespace, address.name, address.provider);
      const v = await requireVersion(m, address.version);
      if (v.archiveFormat !== address.format) {
        throw new NotFoundError(`module ${m.namespace}/${m.name}/${m.provider} version ${v.version} has no ${ARCHIVE_FILENAMES[address.format]} (it is ${ARCHIVE_FILENAMES[v.archiveFormat]})`);
      }
      if (!deps.publicArchives && !access.authorized) {
        if (access.signature === undefined || access.signature === '') {
          throw new UnauthorizedError('archive URL is not signed: get the download location from the version\'s download endpoint');
        }
        if (!deps.signer.verify(access.signature, v.id)) {
          throw new UnauthorizedError('archive URL signature is invalid or expired: get a new download location from the version\'s download endpoint');
        }
      }
      const blob = await deps.blobs.get(v.archiveKey);
      if (!blob) throw new NotFoundError(`archive of ${m.namespace}/${m.name}/${m.provider} ${v.version} is missing from storage`);
      return {
        stream: blob.stream,
        size: blob.info.size,
        sha256: v.archiveSha256,
        contentType: ARCHIVE_CONTENT_TYPES[v.archiveFormat],
        filename: `${m.namespace}-${m.name}-${m.provider}-${v.version}.${v.archiveFormat}`,
      };
    },
  };
}
