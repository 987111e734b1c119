// Shapes of the module registry: rows the store returns and the wire objects of spec
// part B ("Module summary", "Module detail", "Versions response", "Downloads summary").
import type { ArchiveFormat } from '../archive/archive.types';
import type { ModuleAnalysis, ModuleDependency, ModulePart } from '../analysis/analysis.types';
import type { PaginationMeta } from './pagination';

export interface ModuleRecord {
  id: string;
  namespace: string;
  name: string;
  provider: string;
  owner: string;
  verified: boolean;
  downloads: number;
  latestVersion: string;
  description: string;
  source: string;
  publishedAt: Date;
}

export interface VersionRequirements {
  root: { providers: { name: string; version: string }[]; dependencies: ModuleDependency[] };
  submodules: { path: string; providers: { name: string; version: string }[]; dependencies: ModuleDependency[] }[];
}

export interface VersionRecord {
  id: string;
  moduleId: string;
  version: string;
  description: string;
  source: string;
  archiveKey: string;
  archiveFormat: ArchiveFormat;
  archiveSize: number;
  archiveSha256: string;
  publishedAt: Date;
}

export interface VersionDetailRecord extends VersionRecord {
  analysis: ModuleAnalysis;
}

export interface ModuleFilter {
  namespace?: string;
  provider?: string;
  verifiedOnly: boolean;
}

export interface NewVersion {
  namespace: string;
  name: string;
  provider: string;
  version: string;
  description: string;
  source: string;
  archiveKey: string;
  archiveFormat: ArchiveFormat;
  archiveSize: number;
  archiveSha256: string;
  analysis: ModuleAnalysis;
  requirements: VersionRequirements;
  publishedBy: string | null;
}

export interface DownloadCounts {
  week: number;
  month: number;
  year: number;
  total: number;
}

// ---- wire shapes ------------------------------------------------------------------

export interface ModuleSummary {
  id: string;
  owner: string;
  namespace: string;
  name: string;
  version: string;
  provider: string;
  description: string;
  source: string;
  published_at: string;
  downloads: number;
  verified: boolean;
}

export interface ModulePartView {
  path: string;
  readme: string;
  empty: boolean;
  inputs: { name: string; type: string; description: string; default: string; required: boolean }[];
  outputs: { name: string; description: string }[];
  dependencies: ModuleDependency[];
  provider_dependencies: { name: string; namespace: string; source: string; version: string }[];
  resources: { name: string; type: string }[];
}

export interface ModuleDetail extends ModuleSummary {
  root: ModulePartView;
  submodules: ModulePartView[];
  providers: string[];
  versions: string[];
}

export interface ModuleList {
  meta: PaginationMeta;
  modules: ModuleSummary[];
}

export interface VersionsResponse {
  modules: {
    source: string;
    versions: ({ version: string } & VersionRequirements)[];
  }[];
}

export interface DownloadsSummary {
  data: { type: 'module-downloads-summary'; id: string; attributes: DownloadCounts };
}

export type { ModulePart };
