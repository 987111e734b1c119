// Boxes, versions, providers, search and the organization read (spec "Endpoints",
// "States and transitions"; reference A.2-A.4, A.7). Handlers in boxes.paths.ts pass the
// caller (`Actor`), the token state and the public base URL; this module decides.
import { ForbiddenError, UnprocessableEntityError } from '@selfstack/errors';
import type { BlobStore } from '@selfstack/blob';
import type { Logger } from '@selfstack/logger';
import { renderMarkdown } from '../../shared/markdown';
import { DuplicateError, type AccountStore } from '../accounts/accounts.store';
import type { Actor, OrganizationJson } from '../accounts/accounts.types';
import { authorizeBoxAccess, canManage, canRead, notFound, requireActor, visibleOwners, type TokenState } from '../accounts/access';
import type { UploadStore } from '../uploads/uploads.store';
import { boxListText, boxText, toBoxJson, toProviderJson, toVersionJson } from './boxes.presenter';
import { GoneError, type BoxStore } from './boxes.store';
import {
  checksumProblem,
  type BoxFields,
  type BoxJson,
  type BoxRecord,
  type ProviderFields,
  type ProviderJson,
  type ProviderRecord,
  type SearchParams,
  type VersionFields,
  type VersionJson,
  type VersionRecord,
} from './boxes.types';

export interface Caller {
  actor: Actor | null;
  tokenState: TokenState;
  /** Public base URL, no trailing slash. */
  base: string;
}

export interface BoxRef {
  username: string;
  name: string;
}

export interface BoxServiceDeps {
  boxStore: BoxStore;
  accountStore: AccountStore;
  uploadStore: UploadStore;
  blobs: BlobStore;
  logger: Logger;
}

export interface BoxService {
  readOrganization(caller: Caller, username: string): Promise<OrganizationJson>;
  /** The JSON text of `{boxes: [box]}` (box objects serialised once per box version). */
  search(caller: Caller, params: SearchParams): Promise<string>;
  /** The JSON text of the box with its versions. */
  readBox(caller: Caller, ref: BoxRef): Promise<string>;
  createBox(caller: Caller, fields: BoxFields): Promise<BoxJson>;
  updateBox(caller: Caller, ref: BoxRef, fields: BoxFields): Promise<BoxJson>;
  deleteBox(caller: Caller, ref: BoxRef): Promise<BoxJson>;
  readVersion(caller: Caller, ref: BoxRef, version: string): Promise<VersionJson>;
  createVersion(caller: Caller, ref: BoxRef, fields: VersionFields): Promise<VersionJson>;
  updateVersion(caller: Caller, ref: BoxRef, version: string, fields: VersionFields): Promise<VersionJson>;
  deleteVersion(caller: Caller, ref: BoxRef, version: string): Promise<VersionJson>;
  releaseVersion(caller: Caller, ref: BoxRef, version: string): Promise<VersionJson>;
  revokeVersion(caller: Caller, ref: BoxRef, version: string): Promise<VersionJson>;
  readProvider(caller: Caller, ref: BoxRef, version: string, provider: string): Promise<ProviderJson>;
  createProvider(caller: Caller, ref: BoxRef, version: string, fields: ProviderFields): Promise<ProviderJson>;
  updateProvider(caller: Caller, ref: BoxRef, version: string, provider: string, fields: ProviderFields): Promise<ProviderJson>;
  deleteProvider(caller: Caller, ref: BoxRef, version: string, provider: string): Promise<ProviderJson>;
  /** Box, version and provider for the upload and download features, access-checked. */
  locateProvider(
    caller: Caller,
    ref: BoxRef,
    version: string,
    provider: string,
    mode: 'read' | 'write',
  ): Promise<{ box: BoxRecord; version: VersionRecord; provider: ProviderRecord }>;
  /** Box access-checked for a read (catalog). */
  locateBox(caller: Caller, ref: BoxRef): Promise<BoxRecord>;
}

const tag = (ref: BoxRef) => `${ref.username}/${ref.name}`;

export function createBoxService(deps: BoxServiceDeps): BoxService {
  const { boxStore, accountStore } = deps;

  async function loadBox(caller: Caller, ref: BoxRef, mode: 'read' | 'write'): Promise<BoxRecord> {
    // 401 before any lookup, so an anonymous writer learns nothing about existence.
    if (mode === 'write') requireActor(caller.actor, caller.tokenState);
    const box = await boxStore.findBox(ref.username, ref.name);
    authorizeBoxAccess(caller.actor, caller.tokenState, box, `box ${tag(ref)}`, mode);
    return box as BoxRecord;
  }

  function findVersion(box: BoxRecord, ref: BoxRef, version: string): VersionRecord {
    const v = box.versions.find((x) => x.version === version);
    if (!v) throw notFound(`version ${version} of box ${tag(ref)}`);
    return v;
  }

  function findProvider(v: VersionRecord, ref: BoxRef, name: string): ProviderRecord {
    const p = v.providers.find((x) => x.name === name);
    if (!p) throw notFound(`provider ${name} of ${tag(ref)} ${v.version}`);
    return p;
  }

  const boxRefOf = (box: BoxRecord) => ({ username: box.owner.username, name: box.name });

  async function deleteBlobs(keys: (string | null)[]): Promise<void> {
    for (const key of new Set(keys.filter((k): k is string => k !== null))) {
      await deps.blobs.delete(key).catch((err: unknown) => deps.logger.warn('could not delete blob', { key, error: err instanceof Error ? err.message : String(err) }));
    }
  }

  async function blobKeysOf(providers: ProviderRecord[]): Promise<(string | null)[]> {
    const fromUploads = await deps.uploadStore.blobKeysOfProviders(providers.map((p) => p.id));
    return [...providers.map((p) => p.blobKey), ...fromUploads];
  }

  return {
    async readOrganization(caller, username) {
      const account = await accountStore.findByUsername(username);
      if (!account) throw notFound(`user ${username}`);
      const boxes = await boxStore.listByOwner(account.id, canManage(caller.actor, account.id));
      return {
        username: account.username,
        avatar_url: account.avatarUrl,
        profile_html: account.profileHtml,
        profile_markdown: account.profileMarkdown,
        boxes: boxes.map((b) => toBoxJson(caller.base, b, { withVersions: false })),
      };
    },

    async search(caller, params) {
      const boxes = await boxStore.search(params, visibleOwners(caller.actor));
      // The statement already leaves out what the caller may not read; checked again here.
      const readable = boxes.filter((b) => canRead(caller.actor, b));
      return readable.length === boxes.length ? boxListText(caller.base, boxes, true) : boxListText(caller.base, readable, false);
    },

    async readBox(caller, ref) {
      return boxText(caller.base, await loadBox(caller, ref, 'read'), { withVersions: true });
    },

    async createBox(caller, fields) {
      const actor = requireActor(caller.actor, caller.tokenState);
      const username = fields.username ?? actor.username;
      if (!fields.name) throw new ForbiddenError('The box name is required (box.name)');
      const owner = await accountStore.findByUsername(username);
      if (!owner) throw notFound(`user ${username}`);
      if (!canManage(actor, owner.id)) throw new ForbiddenError(`You are not allowed to create boxes for ${username}`);
      authorizeBoxAccess(actor, caller.tokenState, { ownerId: owner.id, isPrivate: true, owner }, `boxes of ${username}`, 'write');
      const description = fields.description ?? '';
      try {
        const box = await boxStore.createBox({
          ownerId: owner.id,
          ownerUsername: owner.username,
          name: fields.name,
          shortDescription: fields.short_description ?? '',
          descriptionMarkdown: description,
          descriptionHtml: renderMarkdown(description),
          // Spec: `is_private` defaults to true.
          isPrivate: fields.is_private ?? true,
        });
        return toBoxJson(caller.base, box, { withVersions: true });
      } catch (err) {
        if (err instanceof DuplicateError) throw new UnprocessableEntityError(`Name has already been taken: box ${username}/${fields.name} exists`);
        throw err;
      }
    },

    async updateBox(caller, ref, fields) {
      const box = await loadBox(caller, ref, 'write');
      // null and absent both mean "unchanged" (the real client sends explicit nulls).
      const patch: Parameters<BoxStore['updateBox']>[1] = {};
      if (fields.name != null) patch.name = fields.name;
      if (fields.short_description != null) patch.shortDescription = fields.short_description;
      if (fields.description != null) {
        patch.descriptionMarkdown = fields.description;
        patch.descriptionHtml = renderMarkdown(fields.description);
      }
      if (fields.is_private != null) patch.isPrivate = fields.is_private;
      if (fields.username != null && fields.username !== box.owner.username) {
        throw new ForbiddenError('A box cannot be moved to another user (username differs from the path)');
      }
      try {
        return toBoxJson(caller.base, await boxStore.updateBox(box, patch), { withVersions: true });
      } catch (err) {
        if (err instanceof DuplicateError) throw new UnprocessableEntityError(`Name has already been taken: box ${ref.username}/${patch.name ?? ''} exists`);
        if (err instanceof GoneError) throw notFound(`box ${tag(ref)}`);
        throw err;
      }
    },

    async deleteBox(caller, ref) {
      const box = await loadBox(caller, ref, 'write');
      const keys = await blobKeysOf(box.versions.flatMap((v) => v.providers));
      if (!(await boxStore.deleteBox(box.id))) throw notFound(`box ${tag(ref)}`);
      await deleteBlobs(keys);
      return toBoxJson(caller.base, box, { withVersions: true });
    },

    async readVersion(caller, ref, version) {
      const box = await loadBox(caller, ref, 'read');
      return toVersionJson(caller.base, boxRefOf(box), findVersion(box, ref, version));
    },

    async createVersion(caller, ref, fields) {
      const box = await loadBox(caller, ref, 'write');
      if (!fields.version) throw new ForbiddenError('The version number is required (version.version)');
      const description = fields.description ?? '';
      try {
        const v = await boxStore.createVersion(box.id, { version: fields.version, descriptionMarkdown: description, descriptionHtml: renderMarkdown(description) });
        return toVersionJson(caller.base, boxRefOf(box), v);
      } catch (err) {
        if (err instanceof DuplicateError) throw new UnprocessableEntityError(`Version has already been taken: ${tag(ref)} ${fields.version} exists`);
        if (err instanceof GoneError) throw notFound(`box ${tag(ref)}`);
        throw err;
      }
    },

    async updateVersion(caller, ref, version, fields) {
      const box = await loadBox(caller, ref, 'write');
      const v = findVersion(box, ref, version);
      const data: Parameters<BoxStore['updateVersion']>[2] = {};
      if (fields.version != null && fields.version !== v.version) data.version = fields.version;
      if (fields.description != null) {
        data.descriptionMarkdown = fields.description;
        data.descriptionHtml = renderMarkdown(fields.description);
      }
      try {
        return toVersionJson(caller.base, boxRefOf(box), await boxStore.updateVersion(box.id, v.id, data));
      } catch (err) {
        if (err instanceof DuplicateError) throw new UnprocessableEntityError(`Version has already been taken: ${tag(ref)} ${fields.version ?? ''} exists`);
        if (err instanceof GoneError) throw notFound(`version ${version} of box ${tag(ref)}`);
        throw err;
      }
    },

    async deleteVersion(caller, ref, version) {
      const box = await loadBox(caller, ref, 'write');
      const v = findVersion(box, ref, version);
      const keys = await blobKeysOf(v.providers);
      if (!(await boxStore.deleteVersion(box.id, v.id))) throw notFound(`version ${version} of box ${tag(ref)}`);
      await deleteBlobs(keys);
      return toVersionJson(caller.base, boxRefOf(box), v);
    },

    async releaseVersion(caller, ref, version) {
      const box = await loadBox(caller, ref, 'write');
      const v = findVersion(box, ref, version);
      const outcome = await boxStore.releaseVersion(box.id, v.id);
      if (outcome === 'no-valid-provider') {
        throw new UnprocessableEntityError(`You must create a valid provider before releasing a new version: ${tag(ref)} ${version} has no provider with a url or an uploaded box`);
      }
      if (outcome === 'wrong-state') throw new UnprocessableEntityError(`Version ${version} of ${tag(ref)} is already released`);
      const fresh = await boxStore.findVersion(v.id);
      if (!fresh) throw notFound(`version ${version} of box ${tag(ref)}`);
      return toVersionJson(caller.base, boxRefOf(box), fresh);
    },

    async revokeVersion(caller, ref, version) {
      const box = await loadBox(caller, ref, 'write');
      const v = findVersion(box, ref, version);
      if (!(await boxStore.revokeVersion(box.id, v.id))) {
        throw new UnprocessableEntityError(`Only an active version can be revoked: ${tag(ref)} ${version} is ${v.status}`);
      }
      const fresh = await boxStore.findVersion(v.id);
      if (!fresh) throw notFound(`version ${version} of box ${tag(ref)}`);
      return toVersionJson(caller.base, boxRefOf(box), fresh);
    },

    async readProvider(caller, ref, version, provider) {
      const box = await loadBox(caller, ref, 'read');
      const v = findVersion(box, ref, version);
      return toProviderJson(caller.base, boxRefOf(box), v.version, findProvider(v, ref, provider));
    },

    async createProvider(caller, ref, version, fields) {
      const box = await loadBox(caller, ref, 'write');
      const v = findVersion(box, ref, version);
      if (!fields.name) throw new ForbiddenError('The provider name is required (provider.name)');
      const checksum = fields.checksum ?? null;
      const checksumType = fields.checksum_type ?? null;
      const problem = checksumProblem(checksum, checksumType);
      if (problem) throw new ForbiddenError(problem);
      try {
        const p = await boxStore.createProvider(box.id, v.id, { name: fields.name, url: fields.url ?? null, checksum: checksum?.toLowerCase() ?? null, checksumType });
        return toProviderJson(caller.base, boxRefOf(box), v.version, p);
      } catch (err) {
        if (err instanceof DuplicateError) throw new UnprocessableEntityError(`Provider has already been taken: ${tag(ref)} ${version} already has ${fields.name}`);
        if (err instanceof GoneError) throw notFound(`version ${version} of box ${tag(ref)}`);
        throw err;
      }
    },

    async updateProvider(caller, ref, version, provider, fields) {
      const box = await loadBox(caller, ref, 'write');
      const v = findVersion(box, ref, version);
      const p = findProvider(v, ref, provider);
      const data: Parameters<BoxStore['updateProvider']>[2] = {};
      if (fields.name != null) data.name = fields.name;
      // url: absent or null = unchanged. A new url makes the provider external again.
      if (fields.url != null && fields.url !== p.url) {
        data.url = fields.url;
        data.hosted = false;
        data.blobKey = null;
      }
      // checksum/checksum_type: absent = unchanged, null = cleared (the CLI sends nulls
      // together with a new url, reference A.9).
      const checksum = fields.checksum === undefined ? p.checksum : fields.checksum;
      const checksumType = fields.checksum_type === undefined ? p.checksumType : fields.checksum_type;
      const problem = checksumProblem(checksum, checksumType);
      if (problem) throw new ForbiddenError(problem);
      data.checksum = checksum?.toLowerCase() ?? null;
      data.checksumType = checksumType;
      try {
        const updated = await boxStore.updateProvider(box.id, p.id, data);
        if (data.blobKey === null && p.blobKey !== null) await deleteBlobs([p.blobKey]);
        return toProviderJson(caller.base, boxRefOf(box), v.version, updated);
      } catch (err) {
        if (err instanceof DuplicateError) throw new UnprocessableEntityError(`Provider has already been taken: ${tag(ref)} ${version} already has ${fields.name ?? ''}`);
        if (err instanceof GoneError) throw notFound(`provider ${provider} of ${tag(ref)} ${v.version}`);
        throw err;
      }
    },

    async deleteProvider(caller, ref, version, provider) {
      const box = await loadBox(caller, ref, 'write');
      const v = findVersion(box, ref, version);
      const p = findProvider(v, ref, provider);
      const keys = await blobKeysOf([p]);
      if (!(await boxStore.deleteProvider(box.id, p.id))) throw notFound(`provider ${provider} of ${tag(ref)} ${v.version}`);
      await deleteBlobs(keys);
      return toProviderJson(caller.base, boxRefOf(box), v.version, p);
    },

    async locateProvider(caller, ref, version, provider, mode) {
      const box = await loadBox(caller, ref, mode);
      const v = findVersion(box, ref, version);
      return { box, version: v, provider: findProvider(v, ref, provider) };
    },

    locateBox: (caller, ref) => loadBox(caller, ref, 'read'),
  };
}

