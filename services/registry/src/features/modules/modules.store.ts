// Persistence of modules, versions and download events (prisma/schema/registry.prisma).
// The only place that talks to Prisma for this feature.
import { randomUUID } from 'node:crypto';
import { Prisma, createPgPool, jsonValue, namedQuery, type PrismaClient } from '@selfstack/db';
import type { Pool } from 'pg';
import type { ArchiveFormat } from '../archive/archive.types';
import type { ModuleAnalysis } from '../analysis/analysis.types';
import { latestVersion } from './names';
import type {
  DownloadCounts,
  ModuleFilter,
  ModuleRecord,
  NewVersion,
  VersionDetailRecord,
  VersionRecord,
  VersionRequirements,
} from './modules.types';
import type { Page } from './pagination';

/**
 * `web`: websearch_to_tsquery syntax (plain words ANDed, "quoted phrase", `or`, `-word`);
 * `prefix`: words that each match as a prefix (`vp` finds `vpc`), built by search.ts.
 */
export type SearchQuery = { kind: 'web'; text: string } | { kind: 'prefix'; tsquery: string };

/** Thrown by createVersion when the version already exists (unique constraint). */
export class VersionExistsError extends Error {
  override readonly name = 'VersionExistsError';
}

/** Thrown by createVersion when the namespace row is missing (foreign key). */
export class NamespaceMissingError extends Error {
  override readonly name = 'NamespaceMissingError';
}

/**
 * The versions endpoint's rows for one address as stored (JSON text, `[{version, root,
 * submodules}]`), with the version of that set, `id:versions_revision`. `rows` is null when
 * the caller already holds this version (`held`): versions are immutable and only
 * published or deleted in a transaction that raises its module's versions_revision
 * (refreshLatest), and a module deleted and published again has a new id. null altogether:
 * no such module.
 */
export interface VersionRowsRead {
  stamp: string;
  rows: string | null;
}

export interface CatalogPage {
  modules: ModuleRecord[];
  hasMore: boolean;
  snapshot: string | null;
}

export interface ModuleStore {
  /** `snapshot`: the snapshot the rows were read in (pg_snapshot text), null when no row came back. */
  list(filter: ModuleFilter, page: Page): Promise<CatalogPage>;
  search(query: SearchQuery, filter: ModuleFilter, page: Page): Promise<CatalogPage>;
  /**
   * Whether no transaction that changed registry.modules or registry.namespaces committed
   * between `snapshot` and the statement's own snapshot (returned: equivalent to `snapshot`
   * for every catalog read when `unchanged`). Rows of catalog_changes the answer depends on
   * are those with xid >= xmin(snapshot): see pruneCatalogChanges.
   */
  catalogUnchangedSince(snapshot: string): Promise<{ unchanged: boolean; snapshot: string }>;
  /** Deletes catalog_changes rows of transactions older than `xmin` (a snapshot's xmin); returns how many. */
  pruneCatalogChanges(xmin: string): Promise<number>;
  listByName(namespace: string, name: string, page: Page): Promise<{ modules: ModuleRecord[]; hasMore: boolean }>;
  find(namespace: string, name: string, provider: string): Promise<ModuleRecord | null>;
  providersOf(namespace: string, name: string): Promise<string[]>;
  versionStrings(moduleId: string): Promise<string[]>;
  versionRequirements(moduleId: string): Promise<{ version: string; requirements: VersionRequirements }[]>;
  /** Versions and requirements by address in one query; empty when the module does not exist. */
  versionRequirementsByAddress(namespace: string, name: string, provider: string): Promise<{ version: string; requirements: VersionRequirements }[]>;
  /** The versions endpoint's rows unless `held` is still their version; null: no module. */
  versionRowsByAddress(namespace: string, name: string, provider: string, held: string): Promise<VersionRowsRead | null>;
  findVersion(moduleId: string, version: string): Promise<VersionRecord | null>;
  findVersionDetail(moduleId: string, version: string): Promise<VersionDetailRecord | null>;
  versionExists(namespace: string, name: string, provider: string, version: string): Promise<boolean>;
  createVersion(input: NewVersion): Promise<{ module: ModuleRecord; version: VersionRecord }>;
  /** Deletes a version; returns its archive key, or null when it did not exist. */
  deleteVersion(namespace: string, name: string, provider: string, version: string): Promise<string | null>;
  setVerified(namespace: string, name: string, provider: string, verified: boolean): Promise<boolean>;
  /**
   * The version at this address, its download recorded (an event and the module's counter)
   * when `record`, in one statement; null when the module or the version does not exist.
   */
  versionForDownload(namespace: string, name: string, provider: string, version: string, record: boolean): Promise<VersionRecord | null>;
  downloadCounts(moduleId: string): Promise<DownloadCounts>;
  /** Liveness of the database, for /readyz. */
  ping(): Promise<boolean>;
}

// The search document: weighted tsvector (namespace, name, provider: A; description: B)
// stored as text in modules.search_document and searched through the GIN index
// "modules_search_idx" on `search_document::tsvector` (migration 20261122004000_registry).
const SEARCH_VECTOR_TEXT = '(m."search_document"::tsvector)';
const SEARCH_DOCUMENT_SQL = Prisma.sql`(setweight(to_tsvector('english'::regconfig, "namespace" || ' ' || "name" || ' ' || "provider"), 'A') || setweight(to_tsvector('english'::regconfig, "description"), 'B'))::text`;

type ModuleRow = {
  id: string;
  namespace: string;
  name: string;
  provider: string;
  verified: boolean;
  downloads: number;
  latestVersion: string;
  description: string;
  source: string;
  publishedAt: Date;
  ns: { owner: string };
};

const moduleSelect = {
  id: true,
  namespace: true,
  name: true,
  provider: true,
  verified: true,
  downloads: true,
  latestVersion: true,
  description: true,
  source: true,
  publishedAt: true,
  ns: { select: { owner: true } },
} as const;

function toModule({ ns, ...row }: ModuleRow): ModuleRecord {
  return rawModule({ ...row, owner: ns.owner });
}

/** A module row with its namespace's owner, as the read statements select it (READ_COLUMNS). */
type RawModuleRow = Omit<ModuleRow, 'ns'> & { owner: string };

const versionSelect = {
  id: true,
  moduleId: true,
  version: true,
  description: true,
  source: true,
  archiveKey: true,
  archiveFormat: true,
  archiveSize: true,
  archiveSha256: true,
  publishedAt: true,
} as const;

function toVersion(row: Omit<VersionRecord, 'archiveFormat'> & { archiveFormat: string }): VersionRecord {
  return { ...row, archiveFormat: row.archiveFormat === 'zip' ? 'zip' : 'tar.gz' } as VersionRecord;
}

function isUniqueViolation(err: unknown): boolean {
  return err instanceof Prisma.PrismaClientKnownRequestError && err.code === 'P2002';
}

function isForeignKeyViolation(err: unknown): boolean {
  if (err instanceof Prisma.PrismaClientKnownRequestError && err.code === 'P2003') return true;
  // Raw statements surface the driver error: SQLSTATE 23503.
  const text = err instanceof Error ? err.message : '';
  return /23503|foreign key constraint/i.test(text);
}

// The hot reads (issue 30) run as prepared statements on a node-postgres pool: through
// Prisma's $queryRaw each cost 350-600 µs of CPU in this process, several times the
// statement itself (docs/registry.md, "Performance"). One statement name per text: the
// filters a request may combine give one statement each, so every one keeps a plan that
// fits it (a generic plan over optional filters would scan the whole list index).
const READ_COLUMNS = `m."id"::text AS "id", m."namespace", m."name", m."provider", m."verified", m."downloads",
       m."latest_version" AS "latestVersion", m."description", m."source", m."published_at" AS "publishedAt", n."owner"`;
const READ_FROM = `"registry"."modules" m JOIN "registry"."namespaces" n ON n."name" = m."namespace"`;
/** The statement's snapshot, with the rows of a catalog read (CatalogPage.snapshot). */
const SNAPSHOT_COLUMN = `pg_current_snapshot()::text AS "snapshot"`;

/** Filter conditions on m, numbered from $1, and the name suffix of their statement. */
function filterSql(filter: ModuleFilter, first: number): { where: string[]; values: unknown[]; key: string } {
  const where: string[] = [];
  const values: unknown[] = [];
  let key = '';
  if (filter.namespace !== undefined) {
    values.push(filter.namespace);
    where.push(`m."namespace" = $${first + values.length - 1}`);
    key += 'n';
  }
  if (filter.provider !== undefined) {
    values.push(filter.provider);
    where.push(`m."provider" = $${first + values.length - 1}`);
    key += 'p';
  }
  if (filter.verifiedOnly) {
    where.push('m."verified"');
    key += 'v';
  }
  return { where, values, key };
}

/** Statement texts by name, built once per name (the same name always has the same text). */
const statementTexts = new Map<string, string>();
function statement(name: string, build: () => string): string {
  let text = statementTexts.get(name);
  if (text === undefined) {
    text = build();
    statementTexts.set(name, text);
  }
  return text;
}

const VERSION_ROW_STAMP = `(m."id"::text || ':' || m."versions_revision"::text)`;
const READ_SQL = {
  find: `SELECT ${READ_COLUMNS} FROM ${READ_FROM} WHERE m."namespace" = $1 AND m."name" = $2 AND m."provider" = $3`,
  listByName: `SELECT ${READ_COLUMNS} FROM ${READ_FROM} WHERE m."namespace" = $1 AND m."name" = $2 ORDER BY m."provider" LIMIT $3 OFFSET $4`,
  versionRequirements: `SELECT v."version", v."requirements" FROM "registry"."modules" m
      JOIN "registry"."module_versions" v ON v."module_id" = m."id"
     WHERE m."namespace" = $1 AND m."name" = $2 AND m."provider" = $3`,
  // The module row's version and, unless it is $4 (what the caller holds), the rows as one
  // JSON text (no per-row parsing in the driver).
  versionRows: `SELECT ${VERSION_ROW_STAMP} AS "stamp",
      CASE WHEN ${VERSION_ROW_STAMP} = $4 THEN NULL ELSE (
        SELECT COALESCE(json_agg(json_build_object('version', v."version", 'root', v."requirements"->'root', 'submodules', v."requirements"->'submodules')), '[]'::json)::text
          FROM "registry"."module_versions" v WHERE v."module_id" = m."id") END AS "rows"
    FROM "registry"."modules" m WHERE m."namespace" = $1 AND m."name" = $2 AND m."provider" = $3`,
  // A transaction not visible in $1 whose change is visible now: its xid is at least
  // xmin($1) (older ones were all visible in $1) and not visible in $1.
  catalogUnchanged: `SELECT NOT EXISTS (
        SELECT 1 FROM "registry"."catalog_changes" c
         WHERE c."xid" >= pg_snapshot_xmin($1::pg_snapshot)::text::bigint
           AND NOT pg_visible_in_snapshot(c."xid"::text::xid8, $1::pg_snapshot)) AS "unchanged",
      ${SNAPSHOT_COLUMN}`,
  ping: 'SELECT 1',
} as const;

const DOWNLOAD_FOUND = `SELECT v."id"::text AS "id", v."module_id" AS "moduleUuid", v."module_id"::text AS "moduleId", v."version", v."description", v."source",
         v."archive_key" AS "archiveKey", v."archive_format" AS "archiveFormat", v."archive_size" AS "archiveSize",
         v."archive_sha256" AS "archiveSha256", v."published_at" AS "publishedAt"
    FROM "registry"."modules" m
    JOIN "registry"."module_versions" v ON v."module_id" = m."id"
   WHERE m."namespace" = $1 AND m."name" = $2 AND m."provider" = $3 AND v."version" = $4`;
// The data-modifying CTEs run in the statement's snapshot, atomically with the read.
const DOWNLOAD_SQL = {
  record: `WITH "found" AS (${DOWNLOAD_FOUND}),
       "event" AS (INSERT INTO "registry"."downloads" ("module_id", "version") SELECT "moduleUuid", "version" FROM "found"),
       "counter" AS (UPDATE "registry"."modules" SET "downloads" = "downloads" + 1 WHERE "id" IN (SELECT "moduleUuid" FROM "found"))
    SELECT "id", "moduleId", "version", "description", "source", "archiveKey", "archiveFormat", "archiveSize", "archiveSha256", "publishedAt" FROM "found"`,
  look: `SELECT "id", "moduleId", "version", "description", "source", "archiveKey", "archiveFormat", "archiveSize", "archiveSha256", "publishedAt" FROM (${DOWNLOAD_FOUND}) AS "found"`,
} as const;

function rawModule(r: RawModuleRow): ModuleRecord {
  return {
    id: r.id,
    namespace: r.namespace,
    name: r.name,
    provider: r.provider,
    owner: r.owner,
    verified: r.verified,
    downloads: r.downloads,
    latestVersion: r.latestVersion,
    description: r.description,
    source: r.source,
    publishedAt: r.publishedAt,
  };
}

export function createModuleStore(prisma: PrismaClient, pool: Pool): ModuleStore {
  async function read<R extends Record<string, unknown>>(name: string, text: string, values: unknown[]): Promise<R[]> {
    return (await namedQuery<R>(pool, `registry_${name}`, text, values)).rows;
  }

  // Recomputes the module's latest-version columns from its versions; the caller holds
  // the module row lock. Returns false when no version is left.
  async function refreshLatest(tx: Prisma.TransactionClient, moduleId: string): Promise<boolean> {
    const versions = await tx.registryModuleVersion.findMany({ where: { moduleId }, select: { version: true } });
    const latest = latestVersion(versions.map((v) => v.version));
    if (latest === undefined) return false;
    const row = await tx.registryModuleVersion.findUniqueOrThrow({
      where: { moduleId_version: { moduleId, version: latest } },
      select: { description: true, source: true, publishedAt: true },
    });
    await tx.registryModule.update({
      where: { id: moduleId },
      // versionsRevision: the versions of this module changed (versionRowsByAddress).
      data: { latestVersion: latest, description: row.description, source: row.source, publishedAt: row.publishedAt, versionsRevision: { increment: 1 } },
    });
    await tx.$executeRaw`UPDATE "registry"."modules" SET "search_document" = ${SEARCH_DOCUMENT_SQL} WHERE "id" = ${moduleId}::uuid`;
    return true;
  }

  async function lockModule(tx: Prisma.TransactionClient, namespace: string, name: string, provider: string): Promise<string | null> {
    const rows = await tx.$queryRaw<{ id: string }[]>`
      SELECT id::text AS id FROM "registry"."modules"
       WHERE "namespace" = ${namespace} AND "name" = ${name} AND "provider" = ${provider}
       FOR UPDATE`;
    return rows[0]?.id ?? null;
  }

  return {
    async list(filter, page) {
      // One statement with the owner joined in (Prisma's relation load was a second round trip).
      const f = filterSql(filter, 1);
      const n = f.values.length;
      const text = statement(`list_${f.key}`, () =>
        `SELECT ${READ_COLUMNS}, ${SNAPSHOT_COLUMN} FROM ${READ_FROM}${f.where.length > 0 ? ` WHERE ${f.where.join(' AND ')}` : ''}
          ORDER BY m."namespace", m."name", m."provider" LIMIT $${n + 1} OFFSET $${n + 2}`,
      );
      const rows = await read<RawModuleRow & { snapshot: string }>(`list_${f.key}`, text, [...f.values, page.limit + 1, page.offset]);
      return { modules: rows.slice(0, page.limit).map(rawModule), hasMore: rows.length > page.limit, snapshot: rows[0]?.snapshot ?? null };
    },

    async search(query, filter, page) {
      // websearch_to_tsquery never raises a syntax error; the prefix form is built from
      // letters and digits only (search.ts), so to_tsquery cannot fail on it either.
      const f = filterSql(filter, 2);
      const n = f.values.length + 1;
      const name = `search_${query.kind}_${f.key}`;
      const text = statement(name, () => {
        const tsquery = query.kind === 'web' ? `websearch_to_tsquery('english'::regconfig, $1)` : `to_tsquery('english'::regconfig, $1)`;
        return `SELECT ${READ_COLUMNS}, ${SNAPSHOT_COLUMN} FROM ${READ_FROM}, ${tsquery} AS q(query)
          WHERE ${[`${SEARCH_VECTOR_TEXT} @@ q.query`, ...f.where].join(' AND ')}
          ORDER BY ts_rank(${SEARCH_VECTOR_TEXT}, q.query) DESC, m."downloads" DESC, m."namespace", m."name", m."provider"
          LIMIT $${n + 1} OFFSET $${n + 2}`;
      });
      const rows = await read<RawModuleRow & { snapshot: string }>(name, text, [query.kind === 'web' ? query.text : query.tsquery, ...f.values, page.limit + 1, page.offset]);
      return { modules: rows.slice(0, page.limit).map(rawModule), hasMore: rows.length > page.limit, snapshot: rows[0]?.snapshot ?? null };
    },

    async catalogUnchangedSince(snapshot) {
      const [row] = await read<{ unchanged: boolean; snapshot: string }>('catalog_unchanged', READ_SQL.catalogUnchanged, [snapshot]);
      if (!row) throw new Error('catalog check: no row');
      return row;
    },

    async pruneCatalogChanges(xmin) {
      return (await pool.query('DELETE FROM "registry"."catalog_changes" WHERE "xid" < $1::bigint', [xmin])).rowCount ?? 0;
    },

    async listByName(namespace, name, page) {
      const rows = await read<RawModuleRow>('list_by_name', READ_SQL.listByName, [namespace, name, page.limit + 1, page.offset]);
      return { modules: rows.slice(0, page.limit).map(rawModule), hasMore: rows.length > page.limit };
    },

    async providersOf(namespace, name) {
      const rows = await prisma.registryModule.findMany({ where: { namespace, name }, select: { provider: true }, orderBy: { provider: 'asc' } });
      return rows.map((r) => r.provider);
    },

    async versionStrings(moduleId) {
      const rows = await prisma.registryModuleVersion.findMany({ where: { moduleId }, select: { version: true } });
      return rows.map((r) => r.version);
    },

    async versionRequirements(moduleId) {
      const rows = await prisma.registryModuleVersion.findMany({ where: { moduleId }, select: { version: true, requirements: true } });
      return rows.map((r) => ({ version: r.version, requirements: r.requirements as unknown as VersionRequirements }));
    },

    async versionRequirementsByAddress(namespace, name, provider) {
      // One indexed join. A module always has at least one version (deleting the last one
      // deletes the module), so no rows means no module.
      return read<{ version: string; requirements: VersionRequirements }>('version_requirements', READ_SQL.versionRequirements, [namespace, name, provider]);
    },

    async versionRowsByAddress(namespace, name, provider, held) {
      const [row] = await read<{ stamp: string; rows: string | null }>('version_rows', READ_SQL.versionRows, [namespace, name, provider, held]);
      return row ? { stamp: row.stamp, rows: row.rows } : null;
    },

    async find(namespace, name, provider) {
      const [row] = await read<RawModuleRow>('find', READ_SQL.find, [namespace, name, provider]);
      return row ? rawModule(row) : null;
    },

    async findVersion(moduleId, version) {
      const row = await prisma.registryModuleVersion.findUnique({ where: { moduleId_version: { moduleId, version } }, select: versionSelect });
      return row ? toVersion(row) : null;
    },

    async findVersionDetail(moduleId, version) {
      const row = await prisma.registryModuleVersion.findUnique({
        where: { moduleId_version: { moduleId, version } },
        select: { ...versionSelect, analysis: true },
      });
      if (!row) return null;
      const { analysis, ...rest } = row;
      return { ...toVersion(rest), analysis: analysis as unknown as ModuleAnalysis };
    },

    async versionExists(namespace, name, provider, version) {
      const n = await prisma.registryModuleVersion.count({ where: { version, module: { namespace, name, provider } } });
      return n > 0;
    },

    async createVersion(input) {
      try {
        return await prisma.$transaction(
          async (tx) => {
            // Create the module row if this is its first version. ON CONFLICT waits for a
            // concurrent first publish to commit, then the row lock below serialises
            // every publish/delete of this module, so `latest_version` is always right.
            // A delete of the module's last version can remove the row between the two
            // statements (DO NOTHING saw it, the lock waited for that delete): insert again.
            let moduleId: string | null = null;
            for (let attempt = 0; moduleId === null && attempt < 5; attempt++) {
              await tx.$executeRaw`
                INSERT INTO "registry"."modules" ("id", "namespace", "name", "provider", "latest_version", "description", "source", "published_at")
                VALUES (${randomUUID()}::uuid, ${input.namespace}, ${input.name}, ${input.provider}, ${input.version}, ${input.description}, ${input.source}, now())
                ON CONFLICT ("namespace", "name", "provider") DO NOTHING`;
              moduleId = await lockModule(tx, input.namespace, input.name, input.provider);
            }
            if (moduleId === null) throw new Error('module row vanished inside its own transaction');
            const created = await tx.registryModuleVersion.create({
              data: {
                id: randomUUID(),
                moduleId,
                version: input.version,
                description: input.description,
                source: input.source,
                archiveKey: input.archiveKey,
                archiveFormat: input.archiveFormat,
                archiveSize: input.archiveSize,
                archiveSha256: input.archiveSha256,
                analysis: jsonValue(input.analysis),
                requirements: jsonValue(input.requirements),
                publishedBy: input.publishedBy,
              },
              select: versionSelect,
            });
            await refreshLatest(tx, moduleId);
            const module = await tx.registryModule.findUniqueOrThrow({ where: { id: moduleId }, select: moduleSelect });
            return { module: toModule(module), version: toVersion(created) };
          },
          { maxWait: 10_000, timeout: 20_000 },
        );
      } catch (err) {
        if (isUniqueViolation(err)) throw new VersionExistsError(`${input.namespace}/${input.name}/${input.provider} ${input.version} already exists`);
        if (isForeignKeyViolation(err)) throw new NamespaceMissingError(`namespace ${input.namespace} does not exist`);
        throw err;
      }
    },

    async deleteVersion(namespace, name, provider, version) {
      return prisma.$transaction(
        async (tx) => {
          const moduleId = await lockModule(tx, namespace, name, provider);
          if (moduleId === null) return null;
          const existing = await tx.registryModuleVersion.findUnique({ where: { moduleId_version: { moduleId, version } }, select: { id: true, archiveKey: true } });
          if (!existing) return null;
          await tx.registryModuleVersion.delete({ where: { id: existing.id } });
          if (!(await refreshLatest(tx, moduleId))) {
            // Last version gone: the module disappears from list/search (its download
            // events go with it, ON DELETE CASCADE).
            await tx.registryModule.delete({ where: { id: moduleId } });
          }
          return existing.archiveKey;
        },
        { maxWait: 10_000, timeout: 20_000 },
      );
    },

    async setVerified(namespace, name, provider, verified) {
      const r = await prisma.registryModule.updateMany({ where: { namespace, name, provider }, data: { verified } });
      return r.count > 0;
    },

    async versionForDownload(namespace, name, provider, version, record) {
      // `terraform init` asks this for every module it installs: one round trip finds the
      // version and records the download (the event and the module's counter).
      const [row] = await read<Omit<VersionRecord, 'archiveFormat'> & { archiveFormat: string }>(
        record ? 'download_record' : 'download_look',
        record ? DOWNLOAD_SQL.record : DOWNLOAD_SQL.look,
        [namespace, name, provider, version],
      );
      return row ? toVersion(row) : null;
    },

    async downloadCounts(moduleId) {
      const [counts] = await prisma.$queryRaw<{ week: bigint; month: bigint; year: bigint }[]>`
        SELECT count(*) FILTER (WHERE "created_at" > now() - interval '7 days') AS "week",
               count(*) FILTER (WHERE "created_at" > now() - interval '30 days') AS "month",
               count(*) FILTER (WHERE "created_at" > now() - interval '365 days') AS "year"
          FROM "registry"."downloads"
         WHERE "module_id" = ${moduleId}::uuid AND "created_at" > now() - interval '365 days'`;
      const module = await prisma.registryModule.findUnique({ where: { id: moduleId }, select: { downloads: true } });
      return {
        week: Number(counts?.week ?? 0),
        month: Number(counts?.month ?? 0),
        year: Number(counts?.year ?? 0),
        total: module?.downloads ?? 0,
      };
    },

    async ping() {
      // Both ways this store reaches the database: Prisma (writes) and the read pool.
      await prisma.$queryRaw`SELECT 1`;
      await read('ping', READ_SQL.ping, []);
      return true;
    },
  };
}

export type { ArchiveFormat };

/** The pool behind the hot reads: small (reads are short), its own application name. */
export function createRegistryReadPool(url: string, options: { max?: number; onIdleError?: (err: Error) => void } = {}): Pool {
  return createPgPool({
    url,
    max: options.max ?? 8,
    applicationName: 'selfstack-registry-reads',
    ...(options.onIdleError ? { onIdleError: options.onIdleError } : {}),
  });
}
