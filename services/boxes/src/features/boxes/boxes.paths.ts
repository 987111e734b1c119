// Boxes, versions, providers and search under /api/v1 (spec "Endpoints"; reference A.2).
// Box bodies come wrapped (`{"box":{...}}`, the documented form) or flat (what vagrant
// 2.3.4 sends, reference A.2 "Body shape quirk"); both are declared and merged, the
// wrapped values winning. Version and provider bodies are always wrapped.
import { z } from 'zod';
import { definePath, Reply, type AnyPathSpec } from '@selfstack/http-kit';
import { jsonReply } from '../../shared/json-reply';
import { invalidRequest, type BoxesExtra } from '../../shared/request-context';
import type { BoxService } from './boxes.service';
import { boxFieldsSchema, providerFieldsSchema, versionFieldsSchema, type BoxFields, type SearchParams } from './boxes.types';

const pathString = (description: string) => ({ in: 'path' as const, schema: z.string(), required: true as const, description });

const boxPathFields = {
  username: pathString('Owner of the box (user or organization)'),
  name: pathString('Name of the box'),
};
// Path parameters are named box_version / provider_name: `version` and `provider` are
// the body wrappers (`{"version":{...}}`, `{"provider":{...}}`).
const versionPathFields = { ...boxPathFields, box_version: pathString('Version number') };
const providerPathFields = { ...versionPathFields, provider_name: pathString('Provider name') };

const shape = boxFieldsSchema.shape;
const flatBoxFields = {
  box: { in: 'body' as const, schema: boxFieldsSchema.nullish(), description: 'Box attributes: {username, name, short_description, description, is_private}' },
  username: { in: 'body' as const, schema: shape.username, description: 'Flat form of box.username (sent by the vagrant CLI)' },
  name: { in: 'body' as const, schema: shape.name, description: 'Flat form of box.name' },
  short_description: { in: 'body' as const, schema: shape.short_description, description: 'Flat form of box.short_description' },
  description: { in: 'body' as const, schema: shape.description, description: 'Flat form of box.description (markdown)' },
  is_private: { in: 'body' as const, schema: shape.is_private, description: 'Flat form of box.is_private (default true)' },
};

function mergeBoxFields(body: { box?: BoxFields | null | undefined } & BoxFields): BoxFields {
  const wrapped = body.box ?? {};
  const pick = <K extends keyof BoxFields>(k: K): BoxFields[K] => (wrapped[k] !== undefined ? wrapped[k] : body[k]);
  return {
    username: pick('username'),
    name: pick('name'),
    short_description: pick('short_description'),
    description: pick('description'),
    is_private: pick('is_private'),
  };
}

const versionBody = { version: { in: 'body' as const, schema: versionFieldsSchema.nullish(), description: 'Version attributes: {version, description}' } };
const providerBody = { provider: { in: 'body' as const, schema: providerFieldsSchema.nullish(), description: 'Provider attributes: {name, url, checksum, checksum_type}' } };

const searchFields = {
  q: { in: 'query' as const, schema: z.string().max(256), description: 'Matched against username, name and short_description' },
  provider: { in: 'query' as const, schema: z.string().max(64), description: 'Only boxes with a released version for this provider' },
  sort: { in: 'query' as const, schema: z.enum(['downloads', 'created', 'updated']), default: 'downloads' as const, description: 'downloads (default), created or updated' },
  order: { in: 'query' as const, schema: z.enum(['desc', 'asc']), default: 'desc' as const, description: 'desc (default) or asc' },
  // A larger limit is served with the maximum (spec "Limits": maximum 100).
  limit: { in: 'query' as const, schema: z.number().int().min(1).transform((n) => Math.min(n, 100)), default: 10, description: 'Results per page, default 10, maximum 100' },
  page: { in: 'query' as const, schema: z.number().int().min(1).max(100_000), default: 1, description: 'Page number, default 1' },
};

export function createBoxPaths(deps: { boxService: BoxService }): AnyPathSpec<BoxesExtra>[] {
  const s = deps.boxService;
  return [
    definePath({
      pattern: 'search',
      summary: 'Search boxes',
      fields: searchFields,
      operations: {
        async read(ctx) {
          const q = ctx.query.q?.trim();
          const params: SearchParams = { sort: ctx.query.sort, order: ctx.query.order, limit: ctx.query.limit, page: ctx.query.page };
          if (q) params.q = q;
          if (ctx.query.provider) params.provider = ctx.query.provider;
          return jsonReply(await s.search(ctx.extra.caller, params));
        },
      },
    }),
    definePath({
      pattern: 'boxes',
      summary: 'Create a box',
      fields: flatBoxFields,
      operations: {
        create: async (ctx) => new Reply(201, await s.createBox(ctx.extra.caller, mergeBoxFields(ctx.body))),
      },
    }),
    definePath({
      pattern: 'box/:username/:name',
      summary: 'Read, update or delete a box',
      // Flat `username`/`name` share their names with the path parameters; they are read
      // from the raw input in `update`.
      fields: { ...flatBoxFields, ...boxPathFields },
      operations: {
        read: async (ctx) => jsonReply(await s.readBox(ctx.extra.caller, ctx.params)),
        update(ctx) {
          // `name` and `username` in a flat body collide with the path parameters of the
          // same names, so the flat forms are read from the raw input here.
          const raw = ctx.input as Record<string, unknown>;
          const flat = boxFieldsSchema.safeParse({
            username: raw.username,
            name: raw.name,
            short_description: ctx.body.short_description,
            description: ctx.body.description,
            is_private: ctx.body.is_private,
          });
          const fields = flat.success ? mergeBoxFields({ box: ctx.body.box, ...flat.data }) : invalidFlat(flat.error);
          return s.updateBox(ctx.extra.caller, ctx.params, fields);
        },
        delete: (ctx) => s.deleteBox(ctx.extra.caller, ctx.params),
      },
    }),
    definePath({
      pattern: 'box/:username/:name/versions',
      summary: 'Create a version',
      fields: { ...boxPathFields, ...versionBody },
      operations: {
        create: async (ctx) => new Reply(201, await s.createVersion(ctx.extra.caller, ctx.params, ctx.body.version ?? {})),
      },
    }),
    definePath({
      pattern: 'box/:username/:name/version/:box_version',
      summary: 'Read, update or delete a version',
      fields: { ...versionPathFields, ...versionBody },
      operations: {
        read: (ctx) => s.readVersion(ctx.extra.caller, ctx.params, ctx.params.box_version),
        update: (ctx) => s.updateVersion(ctx.extra.caller, ctx.params, ctx.params.box_version, ctx.body.version ?? {}),
        delete: (ctx) => s.deleteVersion(ctx.extra.caller, ctx.params, ctx.params.box_version),
      },
    }),
    definePath({
      pattern: 'box/:username/:name/version/:box_version/release',
      summary: 'Release a version (unreleased -> active); needs a provider with a url or an uploaded box',
      fields: versionPathFields,
      operations: { update: (ctx) => s.releaseVersion(ctx.extra.caller, ctx.params, ctx.params.box_version) },
    }),
    definePath({
      pattern: 'box/:username/:name/version/:box_version/revoke',
      summary: 'Revoke a version (active -> revoked)',
      fields: versionPathFields,
      operations: { update: (ctx) => s.revokeVersion(ctx.extra.caller, ctx.params, ctx.params.box_version) },
    }),
    definePath({
      pattern: 'box/:username/:name/version/:box_version/providers',
      summary: 'Create a provider',
      fields: { ...versionPathFields, ...providerBody },
      operations: {
        create: async (ctx) => new Reply(201, await s.createProvider(ctx.extra.caller, ctx.params, ctx.params.box_version, ctx.body.provider ?? {})),
      },
    }),
    definePath({
      pattern: 'box/:username/:name/version/:box_version/provider/:provider_name',
      summary: 'Read, update or delete a provider',
      fields: { ...providerPathFields, ...providerBody },
      operations: {
        read: (ctx) => s.readProvider(ctx.extra.caller, ctx.params, ctx.params.box_version, ctx.params.provider_name),
        update: (ctx) => s.updateProvider(ctx.extra.caller, ctx.params, ctx.params.box_version, ctx.params.provider_name, ctx.body.provider ?? {}),
        delete: (ctx) => s.deleteProvider(ctx.extra.caller, ctx.params, ctx.params.box_version, ctx.params.provider_name),
      },
    }),
  ];
}

function invalidFlat(error: z.ZodError): never {
  throw invalidRequest(error.issues.map((i) => `invalid value for field "${i.path.join('.')}": ${i.message}`));
}
