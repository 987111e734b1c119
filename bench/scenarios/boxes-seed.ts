// Set-based seeding for the box-hosting benchmarks: `owners` accounts and `boxes` boxes,
// each with one active version and one provider (url), search_text filled as the store
// fills it. Plain SQL so 10,000 boxes take a second or two, not a minute of API calls.
import { Client } from 'pg';

export const DISTROS = ['ubuntu', 'debian', 'centos', 'alpine', 'fedora', 'arch', 'windows', 'freebsd', 'rocky', 'opensuse'];
export const PROVIDERS = ['virtualbox', 'libvirt', 'vmware_desktop', 'hyperv'];

export async function seedBoxes(options: { databaseUrl: string; owners: number; boxes: number }): Promise<{ ms: number }> {
  const start = Date.now();
  const client = new Client({ connectionString: options.databaseUrl });
  await client.connect();
  try {
    await client.query('BEGIN');
    await client.query(
      `INSERT INTO boxes.accounts (id, username, kind) SELECT 'acct-' || i, 'owner' || i, 'user' FROM generate_series(0, $1::int - 1) AS i`,
      [options.owners],
    );
    await client.query(
      `INSERT INTO boxes.boxes (id, owner_id, name, short_description, description_markdown, description_html, is_private, downloads, search_text, created_at, updated_at)
       SELECT 'box-' || i,
              'acct-' || (i % $2::int),
              d.distro || '-' || i,
              initcap(d.distro) || ' ' || (i % 30) || ' base image for ' || ($4::text[])[1 + i % 4],
              'Box number ' || i,
              '<p>Box number ' || i || '</p>' || chr(10),
              i % 10 = 5,
              (i * 7919) % 100000,
              lower('owner' || (i % $2::int) || ' ' || d.distro || '-' || i || ' ' || initcap(d.distro) || ' ' || (i % 30) || ' base image for ' || ($4::text[])[1 + i % 4]),
              now() - i * interval '1 minute',
              now() - (i % 977) * interval '1 minute'
         FROM generate_series(0, $1::int - 1) AS i
         CROSS JOIN LATERAL (SELECT ($3::text[])[1 + i % array_length($3::text[], 1)] AS distro) d`,
      [options.boxes, options.owners, DISTROS, PROVIDERS],
    );
    await client.query(
      `INSERT INTO boxes.versions (id, box_id, version, status) SELECT 'ver-' || i, 'box-' || i, '1.' || (i % 7) || '.0', 'active' FROM generate_series(0, $1::int - 1) AS i`,
      [options.boxes],
    );
    await client.query(
      `INSERT INTO boxes.providers (id, version_id, name, url, checksum, checksum_type)
       SELECT 'prov-' || i, 'ver-' || i, ($2::text[])[1 + i % 4], 'https://mirror.example.com/box-' || i || '.box', md5(i::text), 'md5'
         FROM generate_series(0, $1::int - 1) AS i`,
      [options.boxes, PROVIDERS],
    );
    await client.query('COMMIT');
    await client.query('ANALYZE boxes.boxes, boxes.versions, boxes.providers, boxes.accounts');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    await client.end();
  }
  return { ms: Date.now() - start };
}
