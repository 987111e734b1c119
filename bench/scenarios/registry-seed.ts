// Seeds the registry schema for benchmarks: `modules` modules x `versions` versions
// (issue 6 item 7: 5,000 x 20), written with set-based SQL (seconds, not the hours the
// publish endpoint's HCL analysis would take for 100,000 versions). Every version
// carries a realistic analysis and requirements document, as a published one does.
import { Client } from 'pg';

export interface RegistrySeedOptions {
  databaseUrl: string;
  modules?: number;
  versionsPerModule?: number;
  modulesPerNamespace?: number;
}

export interface RegistrySeedResult {
  modules: number;
  versions: number;
  /** A module in the middle of the data set, for the versions scenario. */
  sample: { namespace: string; name: string; provider: string };
  ms: number;
}

const WORDS = ['network', 'storage', 'database', 'cluster', 'queue', 'cache', 'gateway', 'monitoring', 'identity', 'secrets', 'dns', 'cdn', 'vpc', 'bucket', 'function', 'container'];
const PROVIDERS = ['aws', 'google', 'azurerm', 'kubernetes'];

export async function seedRegistry(options: RegistrySeedOptions): Promise<RegistrySeedResult> {
  const modules = options.modules ?? 5000;
  const versions = options.versionsPerModule ?? 20;
  const perNs = options.modulesPerNamespace ?? 100;
  const started = Date.now();
  const client = new Client({ connectionString: options.databaseUrl });
  await client.connect();
  try {
    const analysis = {
      root: {
        path: '',
        readme: '# Module\n\nCreates things.\n'.repeat(20),
        empty: false,
        inputs: Array.from({ length: 12 }, (_, i) => ({ name: `input_${i}`, type: 'string', description: `Input ${i}`, default: i % 2 ? '"x"' : '', required: i % 2 === 0 })),
        outputs: Array.from({ length: 6 }, (_, i) => ({ name: `output_${i}`, description: `Output ${i}` })),
        dependencies: [{ name: 'label', source: 'cloudposse/label/null', version: '0.25.0' }],
        resources: Array.from({ length: 8 }, (_, i) => ({ name: `r${i}`, type: 'aws_s3_bucket' })),
        providers: [{ name: 'aws', source: 'hashicorp/aws', version: '>= 4.0' }],
      },
      submodules: [{ path: 'modules/policy', readme: 'Policy', empty: false, inputs: [], outputs: [], dependencies: [], resources: [{ name: 'p', type: 'aws_iam_policy' }], providers: [{ name: 'aws', source: '', version: '' }] }],
    };
    const requirements = {
      root: { providers: [{ name: 'aws', version: '>= 4.0' }], dependencies: analysis.root.dependencies },
      submodules: [{ path: 'modules/policy', providers: [{ name: 'aws', version: '' }], dependencies: [] }],
    };
    const namespaces = Math.ceil(modules / perNs);
    await client.query('BEGIN');
    await client.query(`INSERT INTO "registry"."namespaces" ("name", "owner") SELECT 'bench-ns' || g, 'Bench ' || g FROM generate_series(0, $1::int - 1) g ON CONFLICT DO NOTHING`, [namespaces]);
    await client.query(
      `INSERT INTO "registry"."modules" ("id", "namespace", "name", "provider", "latest_version", "description", "source", "published_at", "downloads")
       SELECT gen_random_uuid(), 'bench-ns' || (g / $2::int), 'mod' || g, ($3::text[])[1 + g % array_length($3::text[], 1)],
              '1.' || ($4::int - 1) || '.0',
              'Terraform module for ' || ($5::text[])[1 + g % array_length($5::text[], 1)] || ' and ' || ($5::text[])[1 + (g / 7) % array_length($5::text[], 1)] || ' resources',
              'https://git.example.com/mod' || g, now(), g % 1000
         FROM generate_series(0, $1::int - 1) g`,
      [modules, perNs, PROVIDERS, versions, WORDS],
    );
    await client.query(
      `INSERT INTO "registry"."module_versions" ("id", "module_id", "version", "description", "source", "archive_key", "archive_format", "archive_size", "archive_sha256", "analysis", "requirements", "published_at")
       SELECT gen_random_uuid(), m."id", '1.' || v || '.0', m."description", m."source", 'registry/bench/' || m."id" || '-' || v || '.tar.gz', 'tar.gz', 1024,
              repeat('0', 64), $2::jsonb, $3::jsonb, now()
         FROM "registry"."modules" m, generate_series(0, $1::int - 1) v
        WHERE m."namespace" LIKE 'bench-ns%'`,
      [versions, JSON.stringify(analysis), JSON.stringify(requirements)],
    );
    // What modules.store.ts writes on publish (see its SEARCH_DOCUMENT_SQL).
    await client.query(
      `UPDATE "registry"."modules" SET "search_document" = (setweight(to_tsvector('english'::regconfig, "namespace" || ' ' || "name" || ' ' || "provider"), 'A') || setweight(to_tsvector('english'::regconfig, "description"), 'B'))::text
        WHERE "namespace" LIKE 'bench-ns%'`,
    );
    await client.query('COMMIT');
    await client.query('ANALYZE "registry"."modules"; ANALYZE "registry"."module_versions"');
    const mid = Math.floor(modules / 2);
    const sample = await client.query<{ namespace: string; name: string; provider: string }>(`SELECT "namespace", "name", "provider" FROM "registry"."modules" WHERE "name" = $1`, [`mod${mid}`]);
    const row = sample.rows[0];
    if (!row) throw new Error('seed: sample module missing');
    return { modules, versions: modules * versions, sample: row, ms: Date.now() - started };
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    await client.end();
  }
}
