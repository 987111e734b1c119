// The module registry protocol and its extensions under {module_base_url} = /v1/modules/
// (spec part B "Endpoints", reference B.3/B.4), plus publishing and deleting a version
// (POST/DELETE on the version URL, docs/registry.md). Order matters: the first pattern
// that matches wins, so literal segments come before parameters.
import { z } from 'zod';
import { definePathFor, readRawBody, Reply, requestToken, type AnyPathSpec, type FieldMap, type OperationContext } from '@selfstack/http-kit';
import { BadRequestError, UnsupportedMediaTypeError } from '@selfstack/errors';
import type { AuthService, RegistryExtra } from '../auth/auth.service';
import { TOKEN_HEADERS } from '../auth/tokens';
import type { PublishService } from '../publish/publish.service';
import type { JsonText, ModuleService, RequestUrl } from './modules.service';

export interface ModulesPathsDeps {
  modules: ModuleService;
  publish: PublishService;
  auth: AuthService;
  maxArchiveBytes: number;
}

const segment = (what: string) => ({ in: 'path' as const, schema: z.string().min(1).max(256), description: what, required: true as const });
const ns = segment('Module namespace');
const name = segment('Module name');
const provider = segment('Provider (target system) of the module, e.g. aws');
const version = segment('Module version (semantic version)');

const pageFields = {
  offset: { in: 'query' as const, schema: z.number().int().min(0).max(2_147_483_647), description: 'Offset of the first result (default 0)' },
  limit: { in: 'query' as const, schema: z.number().int().min(1).max(2_147_483_647), description: 'Results per page; larger values are served with the endpoint maximum' },
};
const filterFields = {
  provider: { in: 'query' as const, schema: z.string().min(1).max(64), description: 'Only modules for this provider' },
  // Spec: "only `true` restricts to partner modules; any other value or none returns all".
  verified: { in: 'query' as const, schema: z.string(), description: 'true: only verified (partner) modules' },
};

/** The path and query the client sent, for `next_url`. */
export function requestUrl(originalUrl: string): RequestUrl {
  const q = originalUrl.indexOf('?');
  const path = q === -1 ? originalUrl : originalUrl.slice(0, q);
  const query = q === -1 ? [] : [...new URLSearchParams(originalUrl.slice(q + 1)).entries()];
  return { path, query };
}

function mediaType(header: string | undefined): string {
  return (header ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
}

type Ctx = OperationContext<FieldMap, RegistryExtra>;

/** definePath with the registry's per-request extra. */
export const def = definePathFor<RegistryExtra>();

/** Specs that do their own access check (signed archive URLs). */
export const ARCHIVE_PATTERNS = new Set([':namespace/:name/:provider/:version/archive.tar.gz', ':namespace/:name/:provider/:version/archive.zip']);

export function modulesPaths(deps: ModulesPathsDeps): AnyPathSpec<RegistryExtra>[] {
  const { modules, publish, auth } = deps;

  const archiveSpec = (format: 'tar.gz' | 'zip') =>
    def({
      pattern: `:namespace/:name/:provider/:version/archive.${format}`,
      summary: `The module archive (${format}) of one version`,
      description:
        'The location X-Registry-Get points at. Needs the `token` query parameter issued by the download endpoint (signed, short-lived), a valid registry token, or REGISTRY_PUBLIC_ARCHIVES=true. Served with its content type, Content-Length and the SHA-256 checksum (X-Checksum-Sha256, Digest).',
      fields: {
        namespace: ns,
        name,
        provider,
        version,
        token: { in: 'query', schema: z.string().max(4096), description: 'Signature from the download endpoint' },
      },
      operations: {
        async read(ctx) {
          const principal = ctx.extra.principal;
          const authorized = principal.kind === 'admin' || principal.kind === 'token';
          const archive = await modules.openArchive(
            { namespace: ctx.params.namespace, name: ctx.params.name, provider: ctx.params.provider, version: ctx.params.version, format },
            { signature: ctx.query.token, authorized },
          );
          return new Reply(200, archive.stream, {
            'Content-Type': archive.contentType,
            'Content-Length': String(archive.size),
            'Content-Disposition': `attachment; filename="${archive.filename.replace(/[^A-Za-z0-9._+-]/g, '_')}"`,
            'X-Checksum-Sha256': archive.sha256,
            Digest: `sha-256=${Buffer.from(archive.sha256, 'hex').toString('base64')}`,
            ETag: `"${archive.sha256}"`,
            'Cache-Control': 'private, max-age=300',
          });
        },
      },
    });

  // Serialised answers (modules.service.ts listJson/searchJson: reused while PostgreSQL
  // confirms the catalog unchanged).
  const json = (body: JsonText) => new Reply(200, body.text, { 'Content-Type': 'application/json', 'Content-Length': String(body.bytes) });
  const list = async (ctx: Ctx, namespace?: string) =>
    json(await modules.listJson({ ...(ctx.query as Record<string, never>), ...(namespace === undefined ? {} : { namespace }) }, requestUrl(ctx.req.originalUrl)));

  return [
    def({
      pattern: 'search',
      summary: 'Search modules',
      description:
        'Full-text search over namespace, name, provider (ranked first) and description. Plain words must all match (stemmed, English); "quoted words" match as a phrase; `or` and `-word` work as in web search.',
      fields: {
        q: { in: 'query', schema: z.string().max(500), description: 'Search query (required)', required: true },
        namespace: { in: 'query', schema: z.string().min(1).max(64), description: 'Only modules in this namespace' },
        ...filterFields,
        ...pageFields,
      },
      operations: {
        async read(ctx) {
          if (ctx.query.q.trim() === '') throw new BadRequestError('q must not be empty');
          return json(await modules.searchJson(ctx.query.q, ctx.query, requestUrl(ctx.req.originalUrl)));
        },
      },
    }),
    def({
      pattern: ':namespace/:name/:provider/versions',
      summary: 'Available versions of a module',
      description: 'The primary endpoint for resolving module sources (reference B.3). The first element of `modules` is the requested module.',
      fields: { namespace: ns, name, provider },
      operations: {
        async read(ctx) {
          // Serialised once per module row version (modules.service.ts versionsJson).
          return json(await modules.versionsJson(ctx.params.namespace, ctx.params.name, ctx.params.provider));
        },
      },
    }),
    def({
      pattern: ':namespace/:name/:provider/download',
      summary: 'Download the latest version',
      description: '302 to the versioned download endpoint of the latest version.',
      fields: { namespace: ns, name, provider },
      operations: {
        async read(ctx) {
          const latest = await modules.latestVersion(ctx.params.namespace, ctx.params.name, ctx.params.provider);
          const path = requestUrl(ctx.req.originalUrl).path.replace(/\/+$/, '').replace(/\/download$/, '');
          return new Reply(302, undefined, { Location: `${path}/${encodeURIComponent(latest)}/download`, 'Cache-Control': 'no-store' });
        },
      },
    }),
    def({
      pattern: ':namespace/:name/:provider/:version/download',
      summary: 'Download location of a version',
      description:
        '204 with X-Registry-Get (and its alias X-Terraform-Get): a URL relative to this one, ending in .tar.gz or .zip, signed and short-lived unless archives are public. Records a download.',
      fields: { namespace: ns, name, provider, version },
      operations: {
        async read(ctx) {
          // A HEAD (link checkers, proxies) is not an installation: not counted.
          const location = await modules.downloadLocation(ctx.params.namespace, ctx.params.name, ctx.params.provider, ctx.params.version, ctx.method !== 'HEAD');
          return new Reply(204, undefined, { 'X-Registry-Get': location, 'X-Terraform-Get': location, 'Cache-Control': 'no-store' });
        },
      },
    }),
    archiveSpec('tar.gz'),
    archiveSpec('zip'),
    def({
      pattern: ':namespace/:name/:provider/:version',
      summary: 'One version of a module; publish (POST) or delete (DELETE) it',
      description:
        'GET: module detail. POST: publish this version; the body is the module archive (.tar.gz or .zip, detected by content), needs a token of the namespace or the admin token; 201 with the summary. DELETE: remove the version (204).',
      body: 'stream',
      fields: {
        namespace: ns,
        name,
        provider,
        version,
        description: { in: 'query', schema: z.string().max(1000), description: 'Publish: module description (default: first line of the README)' },
        source: { in: 'query', schema: z.string().max(1000), description: 'Publish: URL of the source repository' },
      },
      operationSummaries: { read: 'Module detail of one version', create: 'Publish a version', delete: 'Delete a version' },
      operations: {
        read(ctx) {
          return modules.detail(ctx.params.namespace, ctx.params.name, ctx.params.provider, ctx.params.version);
        },
        async create(ctx) {
          const type = mediaType(ctx.req.headers['content-type']);
          if (type.startsWith('multipart/')) {
            throw new UnsupportedMediaTypeError('send the archive as the raw request body (e.g. curl --data-binary @module.tar.gz), not as a multipart form');
          }
          // Check the caller before reading (and buffering) an upload.
          auth.assertCanPublish(ctx.extra.principal, ctx.params.namespace);
          const archive = await readRawBody(ctx.req, deps.maxArchiveBytes, 'registry');
          const result = await publish.publish({
            principal: ctx.extra.principal,
            namespace: ctx.params.namespace,
            name: ctx.params.name,
            provider: ctx.params.provider,
            version: ctx.params.version,
            archive,
            ...(ctx.query.description === undefined ? {} : { description: ctx.query.description }),
            ...(ctx.query.source === undefined ? {} : { source: ctx.query.source }),
          });
          return new Reply(201, result);
        },
        async delete(ctx) {
          await publish.remove({ principal: ctx.extra.principal, namespace: ctx.params.namespace, name: ctx.params.name, provider: ctx.params.provider, version: ctx.params.version });
          return new Reply(204);
        },
      },
    }),
    def({
      pattern: ':namespace/:name/:provider',
      summary: 'Latest version of a module for one provider',
      fields: { namespace: ns, name, provider },
      operations: {
        read(ctx) {
          return modules.detail(ctx.params.namespace, ctx.params.name, ctx.params.provider);
        },
      },
    }),
    def({
      pattern: ':namespace/:name',
      summary: 'Latest version of a module for every provider',
      fields: { namespace: ns, name, ...pageFields },
      operations: {
        read(ctx) {
          return modules.latestForAllProviders(ctx.params.namespace, ctx.params.name, ctx.query, requestUrl(ctx.req.originalUrl));
        },
      },
    }),
    def({
      pattern: ':namespace',
      summary: 'List the modules of a namespace',
      fields: { namespace: ns, ...filterFields, ...pageFields },
      operations: {
        read(ctx) {
          return list(ctx, ctx.params.namespace);
        },
      },
    }),
    def({
      pattern: '',
      summary: 'List modules',
      fields: { ...filterFields, ...pageFields },
      operations: {
        read(ctx) {
          return list(ctx);
        },
      },
    }),
  ];
}

/** Reads need a token unless REGISTRY_PUBLIC_READS (default); archives check themselves. */
export function authorizeModuleRead(auth: AuthService) {
  return (ctx: { operation: string; spec: { pattern: string }; extra: RegistryExtra }) => {
    if (ctx.operation !== 'read' && ctx.operation !== 'list') return;
    if (ARCHIVE_PATTERNS.has(ctx.spec.pattern)) return;
    auth.assertCanRead(ctx.extra.principal);
  };
}

/** MountOptions.extra for every registry table: who is calling. */
export function principalExtra(auth: AuthService) {
  return async (req: { headers: Record<string, string | string[] | undefined> }): Promise<RegistryExtra> => ({
    principal: await auth.authenticate(requestToken(req.headers, TOKEN_HEADERS)),
  });
}
