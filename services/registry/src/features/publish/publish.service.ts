// Publishing and deleting module versions (issue 6 item 3; the spec is silent, so the
// shape follows Citizen and Tapir: POST the archive to the version's own URL).
//
// Publishing is all-or-nothing: validate the address and the caller, read and check the
// archive in memory, analyse it, then store the blob and finally the rows in one
// transaction. If the transaction fails (including "version already exists" from a
// concurrent publish of the same version: the unique index decides, exactly one wins),
// the blob is removed again, so there is never a half module.
import { createHash, randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { BadRequestError, ConflictError, NotFoundError, PayloadTooLargeError } from '@selfstack/errors';
import type { BlobStore } from '@selfstack/blob';
import type { Logger } from '@selfstack/logger';
import { ARCHIVE_CONTENT_TYPES, ArchiveError, inspectArchive } from '../archive/archive';
import type { ArchiveLimits } from '../archive/archive.types';
import { AnalysisError, analyzeModule, isAnalyzedPath } from '../analysis/analysis';
import type { ModuleAnalysis } from '../analysis/analysis.types';
import type { AuthService, Principal } from '../auth/auth.service';
import { addressProblems } from '../modules/names';
import { NamespaceMissingError, VersionExistsError, type ModuleStore } from '../modules/modules.store';
import { summaryOf } from '../modules/modules.service';
import type { ModuleSummary, VersionRequirements } from '../modules/modules.types';

export interface PublishInput {
  principal: Principal;
  namespace: string;
  name: string;
  provider: string;
  version: string;
  archive: Buffer;
  description?: string;
  source?: string;
}

export interface PublishResult extends ModuleSummary {
  archive: { format: string; size: number; sha256: string; files: number };
}

export interface PublishService {
  publish(input: PublishInput): Promise<PublishResult>;
  remove(input: { principal: Principal; namespace: string; name: string; provider: string; version: string }): Promise<void>;
}

export interface PublishServiceDeps {
  store: ModuleStore;
  namespaces: { findNamespace(name: string): Promise<unknown> };
  auth: AuthService;
  blobs: BlobStore;
  limits: ArchiveLimits;
  logger: Logger;
}

export function requirementsOf(analysis: ModuleAnalysis): VersionRequirements {
  const providers = (p: ModuleAnalysis['root']) => p.providers.map((r) => ({ name: r.name, version: r.version }));
  return {
    root: { providers: providers(analysis.root), dependencies: analysis.root.dependencies },
    submodules: analysis.submodules.map((s) => ({ path: s.path, providers: providers(s), dependencies: s.dependencies })),
  };
}

/** First prose line of the README (skipping headings, badges and HTML), at most 200 chars. */
export function descriptionFromReadme(readme: string): string {
  for (const raw of readme.split(/\r?\n/)) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith('[![') || line.startsWith('![') || line.startsWith('<') || /^[-=*_]{3,}$/.test(line)) continue;
    return line.length > 200 ? `${line.slice(0, 197)}...` : line;
  }
  return '';
}

export function createPublishService(deps: PublishServiceDeps): PublishService {
  const { store, auth, blobs, logger } = deps;

  return {
    async publish(input) {
      auth.assertCanPublish(input.principal, input.namespace);
      const problems = addressProblems(input.namespace, input.name, input.provider, input.version);
      if (input.description !== undefined && input.description.length > 1000) problems.push('description longer than 1000 characters');
      if (input.source !== undefined && input.source.length > 1000) problems.push('source longer than 1000 characters');
      if (problems.length > 0) throw new BadRequestError(problems);
      if (!(await deps.namespaces.findNamespace(input.namespace))) {
        throw new NotFoundError(`namespace ${input.namespace} does not exist; an administrator creates it (POST /v1/admin/namespaces)`);
      }
      const address = `${input.namespace}/${input.name}/${input.provider} ${input.version}`;
      // Cheap early answer; the unique index is what really guarantees immutability.
      if (await store.versionExists(input.namespace, input.name, input.provider, input.version)) {
        throw new ConflictError(`${address} already exists; published versions are immutable`);
      }
      if (input.archive.length === 0) throw new BadRequestError('empty request body: send the module archive (.tar.gz or .zip) as the body');

      let inspected;
      try {
        inspected = await inspectArchive(input.archive, deps.limits, isAnalyzedPath);
      } catch (err) {
        if (err instanceof ArchiveError) {
          throw err.kind === 'too-large' ? new PayloadTooLargeError(err.message) : new BadRequestError(err.message);
        }
        throw err;
      }
      if (inspected.files.length === 0) throw new BadRequestError('the archive contains no files');

      let analysis: ModuleAnalysis;
      try {
        analysis = await analyzeModule(inspected.files, inspected.texts);
      } catch (err) {
        if (err instanceof AnalysisError) throw new BadRequestError(err.message);
        throw err;
      }

      const sha256 = createHash('sha256').update(input.archive).digest('hex');
      const ext = inspected.format === 'zip' ? 'zip' : 'tar.gz';
      const key = `registry/archives/${randomUUID()}.${ext}`;
      await blobs.put(key, Readable.from([input.archive]), { contentType: ARCHIVE_CONTENT_TYPES[inspected.format], contentLength: input.archive.length });

      try {
        const { module, version } = await store.createVersion({
          namespace: input.namespace,
          name: input.name,
          provider: input.provider,
          version: input.version,
          description: input.description ?? descriptionFromReadme(analysis.root.readme),
          source: input.source ?? '',
          archiveKey: key,
          archiveFormat: inspected.format,
          archiveSize: input.archive.length,
          archiveSha256: sha256,
          analysis,
          requirements: requirementsOf(analysis),
          publishedBy: input.principal.kind === 'token' ? input.principal.tokenId : input.principal.kind === 'admin' ? 'admin' : null,
        });
        logger.info('module version published', { module: `${input.namespace}/${input.name}/${input.provider}`, version: input.version, bytes: input.archive.length, format: inspected.format });
        return { ...summaryOf(module, version), archive: { format: inspected.format, size: input.archive.length, sha256, files: inspected.files.length } };
      } catch (err) {
        await blobs.delete(key).catch((cleanupErr: unknown) => {
          logger.error('could not remove the archive of a failed publish', { key, error: cleanupErr instanceof Error ? cleanupErr.message : String(cleanupErr) });
        });
        if (err instanceof VersionExistsError) throw new ConflictError(`${address} already exists; published versions are immutable`);
        if (err instanceof NamespaceMissingError) throw new NotFoundError(`namespace ${input.namespace} does not exist`);
        throw err;
      }
    },

    async remove(input) {
      auth.assertCanPublish(input.principal, input.namespace);
      const key = await store.deleteVersion(input.namespace, input.name, input.provider, input.version);
      if (key === null) throw new NotFoundError(`module ${input.namespace}/${input.name}/${input.provider} version ${input.version} not found`);
      // After the commit: a failure here only leaves an unreferenced blob behind.
      await blobs.delete(key).catch((err: unknown) => {
        logger.error('could not remove the archive of a deleted version', { key, error: err instanceof Error ? err.message : String(err) });
      });
      logger.info('module version deleted', { module: `${input.namespace}/${input.name}/${input.provider}`, version: input.version });
    },
  };
}
