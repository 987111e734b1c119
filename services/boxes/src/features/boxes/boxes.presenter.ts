// Records -> wire JSON (spec "Resources and their fields", reference A.3 and A.6).
// `base` is the public base URL of the service, without a trailing slash.
import { sortVersionsDescending } from '../../shared/version-order';
import type { BoxJson, BoxRecord, CatalogJson, ProviderJson, ProviderRecord, VersionJson, VersionRecord } from './boxes.types';

const enc = encodeURIComponent;

export function boxApiPath(username: string, name: string): string {
  return `/api/v1/box/${enc(username)}/${enc(name)}`;
}

export function versionApiPath(username: string, name: string, version: string): string {
  return `${boxApiPath(username, name)}/version/${enc(version)}`;
}

export function providerApiPath(username: string, name: string, version: string, provider: string): string {
  return `${versionApiPath(username, name, version)}/provider/${enc(provider)}`;
}

/** Where clients download a provider's image (served by this service, reference A.3 shape). */
export function downloadPath(username: string, name: string, version: string, provider: string): string {
  return `/${enc(username)}/boxes/${enc(name)}/versions/${enc(version)}/providers/${enc(provider)}.box`;
}

/** A provider can be installed once it has an external URL or an uploaded image. */
export function isUsable(provider: ProviderRecord): boolean {
  return provider.url !== null || provider.blobKey !== null;
}

/** The declared checksum, else the sha256 computed on upload (so clients always verify hosted images). */
export function effectiveChecksum(provider: ProviderRecord): { checksum: string | null; checksum_type: string | null } {
  if (provider.checksum !== null && provider.checksumType !== null) return { checksum: provider.checksum, checksum_type: provider.checksumType };
  if (provider.blobKey !== null && provider.sha256 !== null) return { checksum: provider.sha256, checksum_type: 'sha256' };
  return { checksum: null, checksum_type: null };
}

export function toProviderJson(base: string, box: { username: string; name: string }, version: string, p: ProviderRecord): ProviderJson {
  return {
    name: p.name,
    hosted: p.hosted,
    hosted_token: null,
    original_url: p.url,
    download_url: base + downloadPath(box.username, box.name, version, p.name),
    created_at: p.createdAt.toISOString(),
    updated_at: p.updatedAt.toISOString(),
    ...effectiveChecksum(p),
  };
}

export function toVersionJson(base: string, box: { username: string; name: string }, v: VersionRecord): VersionJson {
  const path = versionApiPath(box.username, box.name, v.version);
  return {
    version: v.version,
    number: v.version,
    status: v.status,
    description_html: v.descriptionHtml,
    description_markdown: v.descriptionMarkdown,
    created_at: v.createdAt.toISOString(),
    updated_at: v.updatedAt.toISOString(),
    release_url: `${base}${path}/release`,
    revoke_url: `${base}${path}/revoke`,
    providers: v.providers.map((p) => toProviderJson(base, box, v.version, p)),
  };
}

/** Newest active version (reference A.4: `current_version`), or null. */
export function currentVersion(box: BoxRecord): VersionRecord | null {
  return sortVersionsDescending(box.versions.filter((v) => v.status === 'active'))[0] ?? null;
}

export function toBoxJson(base: string, box: BoxRecord, options: { withVersions: boolean }): BoxJson {
  const ref = { username: box.owner.username, name: box.name };
  const current = currentVersion(box);
  const json: BoxJson = {
    created_at: box.createdAt.toISOString(),
    updated_at: box.updatedAt.toISOString(),
    tag: `${box.owner.username}/${box.name}`,
    name: box.name,
    username: box.owner.username,
    short_description: box.shortDescription,
    description_html: box.descriptionHtml,
    description_markdown: box.descriptionMarkdown,
    private: box.isPrivate,
    downloads: box.downloads,
    current_version: current ? toVersionJson(base, ref, current) : null,
  };
  if (options.withVersions) json.versions = sortVersionsDescending(box.versions).map((v) => toVersionJson(base, ref, v));
  return json;
}

/** What `vagrant box add user/box` reads (reference A.6): active versions, usable providers. */
export function toCatalogJson(base: string, box: BoxRecord): CatalogJson {
  const ref = { username: box.owner.username, name: box.name };
  return {
    name: `${box.owner.username}/${box.name}`,
    description: box.shortDescription,
    short_description: box.shortDescription,
    versions: sortVersionsDescending(box.versions.filter((v) => v.status === 'active')).map((v) => ({
      version: v.version,
      status: v.status,
      description_html: v.descriptionHtml,
      description_markdown: v.descriptionMarkdown,
      providers: v.providers.filter(isUsable).map((p) => ({
        name: p.name,
        url: base + downloadPath(ref.username, ref.name, v.version, p.name),
        ...effectiveChecksum(p),
      })),
    })),
  };
}

// Serialised forms of one box record, per form and base URL. The box reads hand out the
// same record object while the box is unchanged (box-reads.store.ts confirms it against
// PostgreSQL on every read), and records are never mutated, so each form is serialised
// once per (record, base) instead of once per response; a WeakMap lets them go with the
// record. A few bases per record at most (BOXES_PUBLIC_URL, or the Host a client sent):
// past that the record's forms start over.
const MAX_FORMS_PER_RECORD = 16;
const forms = new WeakMap<BoxRecord, Map<string, string>>();

function serialised(box: BoxRecord, key: string, make: () => unknown): string {
  let m = forms.get(box);
  if (!m) {
    m = new Map();
    forms.set(box, m);
  }
  let text = m.get(key);
  if (text === undefined) {
    text = JSON.stringify(make());
    if (m.size >= MAX_FORMS_PER_RECORD) m.clear();
    m.set(key, text);
  }
  return text;
}

/** JSON text of toCatalogJson(base, box). */
export function catalogText(base: string, box: BoxRecord): string {
  return serialised(box, `c${base}`, () => toCatalogJson(base, box));
}

/** JSON text of toBoxJson(base, box, { withVersions }). */
export function boxText(base: string, box: BoxRecord, options: { withVersions: boolean }): string {
  return serialised(box, `${options.withVersions ? 'v' : 's'}${base}`, () => toBoxJson(base, box, options));
}

const lists = new WeakMap<readonly BoxRecord[], Map<string, string>>();

function listText(base: string, boxes: readonly BoxRecord[]): string {
  let text = '{"boxes":[';
  for (let i = 0; i < boxes.length; i++) text += (i === 0 ? '' : ',') + boxText(base, boxes[i] as BoxRecord, { withVersions: false });
  return `${text}]}`;
}

/**
 * JSON text of `{boxes: [toBoxJson(base, box, {withVersions: false})]}`. The box reads hand
 * out the same array for a search answer PostgreSQL confirmed unchanged: its text is made
 * once per base (`cache`: false for an array made for one response).
 */
export function boxListText(base: string, boxes: readonly BoxRecord[], cache: boolean): string {
  if (!cache) return listText(base, boxes);
  let m = lists.get(boxes);
  if (!m) {
    m = new Map();
    lists.set(boxes, m);
  }
  let text = m.get(base);
  if (text === undefined) {
    text = listText(base, boxes);
    if (m.size >= MAX_FORMS_PER_RECORD) m.clear();
    m.set(base, text);
  }
  return text;
}
