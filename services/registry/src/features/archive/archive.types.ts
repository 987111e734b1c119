// Module archives: what a publisher uploads and what Terraform's go-getter unpacks.
export type ArchiveFormat = 'tar.gz' | 'zip';

export interface ArchiveLimits {
  /** Sum of the uncompressed sizes of every entry (zip-bomb / gzip-bomb guard). */
  maxUnpackedBytes: number;
  /** Number of entries (files and directories). */
  maxEntries: number;
  /** Largest text file read into memory for analysis (`.tf`, README). */
  maxTextFileBytes: number;
}

export interface InspectedArchive {
  format: ArchiveFormat;
  /** Every regular file, normalised (`./` stripped), in archive order. */
  files: string[];
  /** Contents of the files the caller asked for (see `inspectArchive`'s `wantText`). */
  texts: Map<string, string>;
  /** Files whose text was cut at `maxTextFileBytes` (only READMEs may be; see archive.ts). */
  truncated: string[];
  unpackedBytes: number;
  entryCount: number;
}
