// Builders for module archives used by the registry tests, including hostile ones that
// ordinary tools refuse to produce (`../` names, absolute paths, symlinks, lying sizes).
import zlib from 'node:zlib';
import yazl from 'yazl';

export interface TarEntrySpec {
  name: string;
  /** '0' file (default), '2' symlink, '1' hard link, '5' directory, '3' char device. */
  type?: '0' | '1' | '2' | '3' | '5' | '6';
  content?: string | Buffer;
  linkname?: string;
}

function octal(n: number, width: number): string {
  return n.toString(8).padStart(width - 1, '0') + '\0';
}

function tarHeader(name: string, type: string, size: number, linkname: string): Buffer {
  const b = Buffer.alloc(512);
  if (Buffer.byteLength(name) > 100) throw new Error(`fixture name too long for a plain ustar header: ${name}`);
  b.write(name, 0, 100);
  b.write(octal(0o644, 8), 100);
  b.write(octal(0, 8), 108);
  b.write(octal(0, 8), 116);
  b.write(octal(size, 12), 124);
  b.write(octal(1_700_000_000, 12), 136);
  b.write('        ', 148);
  b.write(type, 156);
  b.write(linkname, 157, 100);
  b.write('ustar\0', 257);
  b.write('00', 263);
  let sum = 0;
  for (const x of b) sum += x;
  b.write(sum.toString(8).padStart(6, '0') + '\0 ', 148);
  return b;
}

/** An uncompressed tar stream, written byte by byte (no validation of names). */
export function makeTar(entries: TarEntrySpec[]): Buffer {
  const parts: Buffer[] = [];
  for (const e of entries) {
    const type = e.type ?? '0';
    const data = type === '0' ? Buffer.from(e.content ?? '') : Buffer.alloc(0);
    parts.push(tarHeader(e.name, type, data.length, e.linkname ?? ''));
    parts.push(data);
    parts.push(Buffer.alloc((512 - (data.length % 512)) % 512));
  }
  parts.push(Buffer.alloc(1024));
  return Buffer.concat(parts);
}

export function makeTarGz(entries: TarEntrySpec[]): Buffer {
  return zlib.gzipSync(makeTar(entries));
}

export interface ZipEntrySpec {
  name: string;
  content?: string | Buffer;
  /** Unix mode incl. file type bits, e.g. 0o120777 for a symlink. */
  mode?: number;
  directory?: boolean;
  compress?: boolean;
}

/** A zip built by yazl; names must be valid for yazl (see `renameInZip` for tricks). */
export function makeZip(entries: ZipEntrySpec[]): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  for (const e of entries) {
    if (e.directory) zip.addEmptyDirectory(e.name, e.mode === undefined ? {} : { mode: e.mode });
    else {
      const opts: Partial<yazl.Options> = { compress: e.compress ?? true, mtime: new Date(1_700_000_000_000) };
      if (e.mode !== undefined) opts.mode = e.mode;
      zip.addBuffer(Buffer.from(e.content ?? ''), e.name, opts);
    }
  }
  zip.end();
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    zip.outputStream.on('data', (c: Buffer) => chunks.push(c));
    zip.outputStream.on('end', () => resolve(Buffer.concat(chunks)));
    zip.outputStream.on('error', reject);
  });
}

/**
 * Replaces an entry name in both the local header and the central directory (names
 * are not covered by the CRC), to produce names yazl refuses to write, such as
 * `../x.tf`. `from` and `to` must have the same byte length.
 */
export function renameInZip(zip: Buffer, from: string, to: string): Buffer {
  const a = Buffer.from(from);
  const b = Buffer.from(to);
  if (a.length !== b.length) throw new Error('renameInZip: names must have the same length');
  const out = Buffer.from(zip);
  let pos = 0;
  let count = 0;
  for (;;) {
    const i = out.indexOf(a, pos);
    if (i === -1) break;
    b.copy(out, i);
    pos = i + a.length;
    count += 1;
  }
  if (count === 0) throw new Error(`renameInZip: ${from} not found`);
  return out;
}

/** A small but complete module: root + one submodule, with README and HCL. */
export const SAMPLE_MODULE: Record<string, string> = {
  'README.md': '# Demo\n\nA demo module.\n',
  'main.tf': `
terraform {
  required_version = ">= 1.0"
  required_providers {
    aws = {
      source  = "hashicorp/aws"
      version = ">= 4.0"
    }
  }
}

resource "aws_s3_bucket" "this" {
  bucket = var.name
}

module "label" {
  source  = "cloudposse/label/null"
  version = "0.25.0"
}
`,
  'variables.tf': `
variable "name" {
  description = "Bucket name"
  type        = string
}

variable "region" {
  description = "Region"
  type        = string
  default     = "us-east-1"
}

variable "tags" {
  type    = map(string)
  default = {}
}
`,
  'outputs.tf': `
output "arn" {
  description = "Bucket ARN"
  value       = aws_s3_bucket.this.arn
}
`,
  'modules/policy/README.md': 'Policy submodule\n',
  'modules/policy/main.tf': `
resource "aws_iam_policy" "p" {
  name = "p"
}

data "aws_caller_identity" "me" {}

output "policy_arn" {
  value = aws_iam_policy.p.arn
}
`,
  'examples/basic/main.tf': 'module "demo" {\n  source = "../../"\n  name   = "x"\n}\n',
};

export function sampleModuleTarGz(extra: Record<string, string> = {}): Buffer {
  const files = { ...SAMPLE_MODULE, ...extra };
  return makeTarGz(Object.entries(files).map(([name, content]) => ({ name, content })));
}

export function sampleModuleZip(extra: Record<string, string> = {}): Promise<Buffer> {
  const files = { ...SAMPLE_MODULE, ...extra };
  return makeZip(Object.entries(files).map(([name, content]) => ({ name, content })));
}
