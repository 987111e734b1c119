// Boxes, versions and providers: row records, request validation and the wire shapes of
// spec "Resources and their fields" / reference A.3.
import { z } from 'zod';
import { CHECKSUM_HEX_LENGTH, CHECKSUM_TYPES, type ChecksumType } from '../../shared/checksum-stream';
import { isValidVersion, MAX_VERSION_LENGTH } from '../../shared/version-order';

export type VersionStatus = 'unreleased' | 'active' | 'revoked';

export interface ProviderRecord {
  id: string;
  versionId: string;
  name: string;
  url: string | null;
  checksum: string | null;
  checksumType: string | null;
  hosted: boolean;
  blobKey: string | null;
  size: bigint | null;
  md5: string | null;
  sha1: string | null;
  sha256: string | null;
  sha384: string | null;
  sha512: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface VersionRecord {
  id: string;
  boxId: string;
  version: string;
  descriptionMarkdown: string;
  descriptionHtml: string;
  status: string;
  createdAt: Date;
  updatedAt: Date;
  providers: ProviderRecord[];
}

/** The owner fields box routes need (never the password hash). */
export interface BoxOwner {
  id: string;
  username: string;
  billingState: string;
}

export interface BoxRecord {
  id: string;
  ownerId: string;
  name: string;
  shortDescription: string;
  descriptionMarkdown: string;
  descriptionHtml: string;
  isPrivate: boolean;
  downloads: number;
  createdAt: Date;
  updatedAt: Date;
  owner: BoxOwner;
  versions: VersionRecord[];
}

// ---------------------------------------------------------------------------------------
// Names.

/** Box names: letters, digits, `-`, `_`, `.`; 1-100 characters starting with a letter or digit. */
export const BOX_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$/;
/** Provider names (virtualbox, vmware_desktop, libvirt, hyperv, docker, ...). */
export const PROVIDER_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

export const MAX_SHORT_DESCRIPTION = 1000;
export const MAX_DESCRIPTION = 64 * 1024;
export const MAX_URL = 2048;

export const boxNameSchema = z
  .string()
  .regex(BOX_NAME_PATTERN, 'must be 1-100 letters, digits, "-", "_" or ".", starting with a letter or digit')
  .refine((n) => !n.endsWith('.'), 'must not end with "."');
export const versionNumberSchema = z
  .string()
  .max(MAX_VERSION_LENGTH)
  .refine(isValidVersion, 'must be a version number such as 1.0.0 (RubyGems version syntax, as vagrant parses it)');
export const providerNameSchema = z.string().regex(PROVIDER_NAME_PATTERN, 'must be 1-64 letters, digits, "-", "_" or ".", starting with a letter or digit');
export const checksumTypeSchema = z.enum(CHECKSUM_TYPES, { message: `must be one of ${CHECKSUM_TYPES.join(', ')}` });

const httpUrl = z
  .string()
  .max(MAX_URL)
  .refine((u) => {
    try {
      const parsed = new URL(u);
      return parsed.protocol === 'http:' || parsed.protocol === 'https:';
    } catch {
      return false;
    }
  }, 'must be an http or https URL');

// `null` arrives for "not given" from the real client (reference A.2); fields are
// optional + nullable and the service decides what null means per field.
export const boxFieldsSchema = z.object({
  username: z.string().nullish(),
  name: boxNameSchema.nullish(),
  short_description: z.string().max(MAX_SHORT_DESCRIPTION).nullish(),
  description: z.string().max(MAX_DESCRIPTION).nullish(),
  is_private: z.boolean().nullish(),
});
export type BoxFields = z.output<typeof boxFieldsSchema>;

export const versionFieldsSchema = z.object({
  version: versionNumberSchema.nullish(),
  description: z.string().max(MAX_DESCRIPTION).nullish(),
});
export type VersionFields = z.output<typeof versionFieldsSchema>;

export const providerFieldsSchema = z.object({
  name: providerNameSchema.nullish(),
  url: httpUrl.nullish(),
  checksum: z.string().max(256).nullish(),
  checksum_type: checksumTypeSchema.nullish(),
});
export type ProviderFields = z.output<typeof providerFieldsSchema>;

/** The checksum/type pair as it will be stored; an error message when inconsistent. */
export function checksumProblem(checksum: string | null, checksumType: string | null): string | undefined {
  if (checksum === null && checksumType === null) return undefined;
  if (checksum === null) return 'checksum_type given without checksum';
  if (checksumType === null) return 'checksum given without checksum_type';
  const length = CHECKSUM_HEX_LENGTH[checksumType as ChecksumType];
  if (!new RegExp(`^[0-9a-fA-F]{${length}}$`).test(checksum)) {
    return `checksum is not a valid ${checksumType} digest (${length} hexadecimal characters)`;
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------
// Wire shapes.

export interface ProviderJson {
  name: string;
  hosted: boolean;
  hosted_token: string | null;
  original_url: string | null;
  download_url: string;
  created_at: string;
  updated_at: string;
  checksum: string | null;
  checksum_type: string | null;
}

export interface VersionJson {
  version: string;
  number: string;
  status: string;
  description_html: string;
  description_markdown: string;
  created_at: string;
  updated_at: string;
  release_url: string;
  revoke_url: string;
  providers: ProviderJson[];
}

export interface BoxJson {
  created_at: string;
  updated_at: string;
  tag: string;
  name: string;
  username: string;
  short_description: string;
  description_html: string;
  description_markdown: string;
  private: boolean;
  downloads: number;
  current_version: VersionJson | null;
  versions?: VersionJson[];
}

export interface CatalogJson {
  name: string;
  description: string;
  short_description: string;
  versions: {
    version: string;
    status: string;
    description_html: string;
    description_markdown: string;
    providers: { name: string; url: string; checksum: string | null; checksum_type: string | null }[];
  }[];
}

export type SearchSort = 'downloads' | 'created' | 'updated';
export type SearchOrder = 'asc' | 'desc';

export interface SearchParams {
  q?: string;
  provider?: string;
  sort: SearchSort;
  order: SearchOrder;
  limit: number;
  page: number;
}
