// Issue 5, item 10: upload and download a 1 GiB box through the whole service and show
// that memory stays flat (uploads stream into the blob store, downloads stream out).
// Standalone (not an autocannon scenario):
//   npx tsx bench/scenarios/boxes-large-transfer.ts
//   BOXES_BENCH_TRANSFER_BYTES=268435456   size (default 1 GiB)
//   BOXES_BENCH_BLOB_ROOT=/var/tmp/x       where the fs blob store writes (default a temp dir)
//   DATABASE_URL                           server to create a scratch database on
// Prints upload/download throughput, the resident set size before, and the peak while
// transferring (sampled every 50 ms, and the kernel's maxRSS). Client and server share
// this process, so the figure is an upper bound for the server alone.
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { Client } from 'pg';
import { createFsBlobStore } from '@selfstack/blob';
import { createPrismaClient, defaultMigrationsDir, migrate } from '@selfstack/db';
import { createListener } from '@selfstack/http-kit';
import { createLogger } from '@selfstack/logger';
import { buildApp } from '../../services/boxes/src/app';
import { composeBoxes } from '../../services/boxes/src/compose';
import { createBoxReadPool } from '../../services/boxes/src/features/boxes/box-reads.store';

const MiB = 1024 * 1024;

async function admin(url: string, sql: string): Promise<void> {
  const c = new Client({ connectionString: url });
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
}

function call(base: string, method: string, p: string, token: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${base}${p}`, { method, headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' } }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, json: text ? (JSON.parse(text) as Record<string, unknown>) : {} }));
    });
    req.on('error', reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

async function main(): Promise<void> {
  const total = Number(process.env.BOXES_BENCH_TRANSFER_BYTES ?? 1024 * MiB);
  const adminUrl = process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
  const dbName = `bench_boxes_xfer_${Date.now().toString(36)}`;
  await admin(adminUrl, `CREATE DATABASE "${dbName}"`);
  const u = new URL(adminUrl);
  u.pathname = `/${dbName}`;
  const blobRoot = process.env.BOXES_BENCH_BLOB_ROOT ?? (await mkdtemp(path.join(tmpdir(), 'boxes-xfer-')));
  const prisma = createPrismaClient({ url: u.toString() });
  const readPool = createBoxReadPool(u.toString());
  let listener: Awaited<ReturnType<typeof createListener>> | undefined;
  try {
    await migrate({ url: u.toString(), migrationsDir: defaultMigrationsDir() });
    const logger = createLogger({ service: 'boxes-bench', level: 'error' });
    const composed = composeBoxes(
      { prisma, readPool, blobs: createFsBlobStore({ root: blobRoot }), logger },
      { signingKey: randomBytes(32).toString('hex'), uploadUrlTtlMs: 600_000, maxUploadBytes: total + MiB },
    );
    listener = await createListener(buildApp(composed.appDeps), { port: 0, host: '127.0.0.1', maxRequestBytes: total + 2 * MiB });
    const base = listener.url;
    await composed.admin.createUser({ username: 'bench', password: 'bench-password' });
    const token = (await composed.admin.createToken('bench', 'bench')).token;
    await call(base, 'POST', '/api/v1/boxes', token, { box: { name: 'big', is_private: false } });
    await call(base, 'POST', '/api/v1/box/bench/big/versions', token, { version: { version: '1.0.0' } });
    await call(base, 'POST', '/api/v1/box/bench/big/version/1.0.0/providers', token, { provider: { name: 'virtualbox' } });
    const upload = await call(base, 'GET', '/api/v1/box/bench/big/version/1.0.0/provider/virtualbox/upload', token);
    const uploadPath = new URL(String(upload.json.upload_path)).pathname;

    global.gc?.();
    const rssBefore = process.memoryUsage().rss;
    let peak = rssBefore;
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().rss);
    }, 50);

    // Upload: 1 MiB of random bytes repeated (cheap to produce), hashed as it is sent.
    const block = randomBytes(MiB);
    const sent = createHash('sha256');
    let produced = 0;
    const source = new Readable({
      read() {
        if (produced >= total) {
          this.push(null);
          return;
        }
        const n = Math.min(MiB, total - produced);
        const chunk = n === MiB ? block : block.subarray(0, n);
        sent.update(chunk);
        produced += n;
        this.push(chunk);
      },
    });
    const t0 = performance.now();
    const putStatus = await new Promise<number>((resolve, reject) => {
      const req = http.request(`${base}${uploadPath}`, { method: 'PUT', headers: { 'Content-Type': 'application/octet-stream', 'Content-Length': String(total) } }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.on('error', reject);
      source.pipe(req);
    });
    const uploadMs = performance.now() - t0;
    const expected = sent.digest('hex');
    if (putStatus !== 200) throw new Error(`upload answered ${putStatus}`);
    const peakUpload = peak;

    const t1 = performance.now();
    const got = createHash('sha256');
    let received = 0;
    const getStatus = await new Promise<number>((resolve, reject) => {
      http.get(`${base}/bench/boxes/big/versions/1.0.0/providers/virtualbox.box`, { headers: { Authorization: `Bearer ${token}` } }, (res) => {
        res.on('data', (c: Buffer) => {
          received += c.length;
          got.update(c);
        });
        res.on('end', () => resolve(res.statusCode ?? 0));
        res.on('error', reject);
      }).on('error', reject);
    });
    const downloadMs = performance.now() - t1;
    clearInterval(sampler);
    const digest = got.digest('hex');
    const maxRss = process.resourceUsage().maxRSS * 1024;
    const mb = (n: number) => `${(n / MiB).toFixed(1)} MiB`;
    const rate = (ms: number) => `${(total / MiB / (ms / 1000)).toFixed(1)} MiB/s`;
    console.log(JSON.stringify({
      bytes: total,
      upload: { status: putStatus, ms: Math.round(uploadMs), rate: rate(uploadMs) },
      download: { status: getStatus, bytes: received, ms: Math.round(downloadMs), rate: rate(downloadMs), sha256_matches: digest === expected },
      rss_before: mb(rssBefore),
      rss_peak_upload: mb(peakUpload),
      rss_peak_total: mb(peak),
      rss_growth: mb(peak - rssBefore),
      max_rss_kernel: mb(maxRss),
    }, null, 2));
    if (digest !== expected || received !== total || getStatus !== 200) process.exitCode = 1;
  } finally {
    await listener?.close();
    await readPool.end();
    await prisma.$disconnect();
    await admin(adminUrl, `DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`);
    if (!process.env.BOXES_BENCH_BLOB_ROOT) await rm(blobRoot, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
