// One-statement reads of boxes with their owner, versions and providers (the box routes,
// the catalog, the organization page and search: the hot paths). Postgres builds the
// nested document with json_agg (through Prisma's `include` it was one query per
// relation). Plain SQL text for the prepared statements of box-reads.store.ts; `b` is a
// boxes row and `a` its owner's accounts row. Only stores import this module.
import type { BoxRecord, ProviderRecord, VersionRecord } from './boxes.types';

// Column lists of the JSON documents; keys are the record field names.
const PROVIDER_JSON = `json_build_object(
  'id', p.id, 'versionId', p.version_id, 'name', p.name, 'url', p.url, 'checksum', p.checksum,
  'checksumType', p.checksum_type, 'hosted', p.hosted, 'blobKey', p.blob_key, 'size', p.size,
  'md5', p.md5, 'sha1', p.sha1, 'sha256', p.sha256, 'sha384', p.sha384, 'sha512', p.sha512,
  'createdAt', p.created_at, 'updatedAt', p.updated_at)`;

const VERSION_JSON = `json_build_object(
  'id', v.id, 'boxId', v.box_id, 'version', v.version, 'descriptionMarkdown', v.description_markdown,
  'descriptionHtml', v.description_html, 'status', v.status, 'createdAt', v.created_at, 'updatedAt', v.updated_at,
  'providers', COALESCE((SELECT json_agg(${PROVIDER_JSON} ORDER BY p.created_at, p.id) FROM "boxes"."providers" p WHERE p.version_id = v.id), '[]'::json))`;

export const BOX_DOCUMENT = `json_build_object(
  'id', b.id, 'ownerId', b.owner_id, 'name', b.name, 'shortDescription', b.short_description,
  'descriptionMarkdown', b.description_markdown, 'descriptionHtml', b.description_html,
  'isPrivate', b.is_private, 'downloads', b.downloads, 'createdAt', b.created_at, 'updatedAt', b.updated_at,
  'owner', json_build_object('id', a.id, 'username', a.username, 'billingState', a.billing_state),
  'versions', COALESCE((SELECT json_agg(${VERSION_JSON} ORDER BY v.created_at, v.id) FROM "boxes"."versions" v WHERE v.box_id = b.id), '[]'::json))`;

/**
 * The version of a box document: the box id and the `xmin` (writing transaction) of every
 * row the document is built from: the box, its owner, its versions and their providers,
 * grouped per version and in id order. A tuple never changes once written: an update
 * writes a new tuple with the updating transaction's id, an insert adds one, a delete
 * removes one. Any tuple a later state holds that an earlier state did not was written by
 * a transaction that committed after the earlier read, so its xmin is not among the earlier
 * ones: equal versions mean the same tuples, hence the same document (up to transaction-id
 * wraparound, 2^32 transactions; the raw xmin survives freezing).
 */
export const BOX_DOCUMENT_VERSION = `(b.id || ':' || b.xmin::text || ':' || a.xmin::text || ':' || COALESCE((
  SELECT string_agg(v.xmin::text || '(' || COALESCE((SELECT string_agg(p.xmin::text, ',' ORDER BY p.id) FROM "boxes"."providers" p WHERE p.version_id = v.id), '') || ')', ',' ORDER BY v.id)
    FROM "boxes"."versions" v WHERE v.box_id = b.id), ''))`;

type Json = Record<string, unknown>;

// json_build_object renders timestamp(3) without time zone as "2026-11-22T04:02:53.588";
// Prisma stores UTC there, so the string is read as UTC.
function date(value: unknown): Date {
  const s = String(value);
  return new Date(/[zZ]|[+-]\d\d:?\d\d$/.test(s) ? s : `${s}Z`);
}

const str = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));

function provider(j: Json): ProviderRecord {
  return {
    id: String(j.id),
    versionId: String(j.versionId),
    name: String(j.name),
    url: str(j.url),
    checksum: str(j.checksum),
    checksumType: str(j.checksumType),
    hosted: j.hosted === true,
    blobKey: str(j.blobKey),
    size: j.size === null || j.size === undefined ? null : BigInt(j.size as number | string),
    md5: str(j.md5),
    sha1: str(j.sha1),
    sha256: str(j.sha256),
    sha384: str(j.sha384),
    sha512: str(j.sha512),
    createdAt: date(j.createdAt),
    updatedAt: date(j.updatedAt),
  };
}

function version(j: Json): VersionRecord {
  return {
    id: String(j.id),
    boxId: String(j.boxId),
    version: String(j.version),
    descriptionMarkdown: String(j.descriptionMarkdown),
    descriptionHtml: String(j.descriptionHtml),
    status: String(j.status),
    createdAt: date(j.createdAt),
    updatedAt: date(j.updatedAt),
    providers: (j.providers as Json[]).map(provider),
  };
}

export function boxFromDocument(j: Json): BoxRecord {
  const owner = j.owner as Json;
  return {
    id: String(j.id),
    ownerId: String(j.ownerId),
    name: String(j.name),
    shortDescription: String(j.shortDescription),
    descriptionMarkdown: String(j.descriptionMarkdown),
    descriptionHtml: String(j.descriptionHtml),
    isPrivate: j.isPrivate === true,
    downloads: Number(j.downloads),
    createdAt: date(j.createdAt),
    updatedAt: date(j.updatedAt),
    owner: { id: String(owner.id), username: String(owner.username), billingState: String(owner.billingState) },
    versions: (j.versions as Json[]).map(version),
  };
}
