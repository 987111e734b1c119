// Drift check between the Prisma schema (prisma/schema/*.prisma) and a migrated database.
// Our migrations are written by hand (docs/architecture.md, "Database"), so nothing else
// guarantees that the SQL creates what the Prisma client expects; this module does.
//
// Not exported from the package index: it needs @prisma/get-dmmf (a dev dependency, the
// schema parser compiled to WebAssembly, so it works offline without native engines).
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { getDMMF } from '@prisma/get-dmmf';
import type { Client } from 'pg';

export type Datamodel = Extract<ReturnType<typeof getDMMF>, { datamodel: unknown }>['datamodel'];
type DmmfModel = Datamodel['models'][number];
type DmmfField = DmmfModel['fields'][number];

export interface SchemaFile {
  path: string;
  content: string;
}

/** Every `.prisma` file in `schemaDir`, sorted by name. */
export async function readSchemaFiles(schemaDir: string): Promise<SchemaFile[]> {
  const names = (await fs.readdir(schemaDir)).filter((n) => n.endsWith('.prisma')).sort();
  return Promise.all(names.map(async (n) => ({ path: path.join(schemaDir, n), content: await fs.readFile(path.join(schemaDir, n), 'utf8') })));
}

export function datamodelFromFiles(files: SchemaFile[]): Datamodel {
  const result = getDMMF({ datamodel: files.map((f) => [f.path, f.content] as [string, string]) });
  if ('datamodel' in result) return result.datamodel;
  // The wasm parser colours its report for terminals; jest output reads better without.
  const report = result.error.message.replace(/\u001b\[[0-9;]*m/g, '');
  throw new Error(`The Prisma schema does not parse (${result.type}): ${result.reason}\n${report}`);
}

/**
 * The `schemas = [...]` list of the datasource block; the drift check inspects these.
 * get-dmmf does not return datasources, and the list is one line of literal strings.
 */
export function datasourceSchemas(files: SchemaFile[]): string[] {
  for (const file of files) {
    const block = /datasource\s+\w+\s*\{([\s\S]*?)\}/.exec(file.content)?.[1];
    const list = block ? /schemas\s*=\s*\[([^\]]*)\]/.exec(block)?.[1] : undefined;
    if (list !== undefined) return [...list.matchAll(/"([^"]+)"/g)].map((m) => m[1]!);
  }
  return ['public'];
}

// ---------------------------------------------------------------------------------------
// What the database holds.

export interface DbColumn {
  name: string;
  /** Canonical type: format_type() of the element type, `enum:<name>` for enums, `[]` suffix for arrays. */
  type: string;
  nullable: boolean;
  default: string | null;
}

export interface DbIndex {
  name: string;
  /** Key columns in order; null for an expression. */
  columns: (string | null)[];
  unique: boolean;
  primary: boolean;
  partial: boolean;
}

export interface DbForeignKey {
  name: string;
  columns: string[];
  refSchema: string;
  refTable: string;
  refColumns: string[];
  onDelete: ReferentialAction;
  onUpdate: ReferentialAction;
}

export interface DbTable {
  schema: string;
  name: string;
  columns: DbColumn[];
  indexes: DbIndex[];
  foreignKeys: DbForeignKey[];
}

export interface DbEnum {
  schema: string;
  name: string;
  values: string[];
}

export interface DbSnapshot {
  tables: DbTable[];
  enums: DbEnum[];
}

export type ReferentialAction = 'Cascade' | 'Restrict' | 'NoAction' | 'SetNull' | 'SetDefault';

const PG_ACTIONS: Record<string, ReferentialAction> = { a: 'NoAction', r: 'Restrict', c: 'Cascade', n: 'SetNull', d: 'SetDefault' };

/** Reads tables, columns, indexes, foreign keys and enums of `schemas` from pg_catalog. */
export async function readDatabaseSnapshot(client: Client, schemas: string[]): Promise<DbSnapshot> {
  const tables = await client.query<{ schema: string; name: string }>(
    `SELECT n.nspname AS schema, c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE c.relkind IN ('r', 'p') AND n.nspname = ANY($1) ORDER BY 1, 2`,
    [schemas],
  );
  const columns = await client.query<{ schema: string; table: string; name: string; base_type: string; is_enum: boolean; is_array: boolean; not_null: boolean; default: string | null }>(
    `SELECT n.nspname AS schema, c.relname AS table, a.attname AS name,
            CASE WHEN et.oid IS NOT NULL THEN format_type(et.oid, a.atttypmod) ELSE format_type(t.oid, a.atttypmod) END AS base_type,
            COALESCE(et.typtype, t.typtype) = 'e' AS is_enum,
            et.oid IS NOT NULL AS is_array,
            a.attnotnull AS not_null,
            pg_get_expr(d.adbin, d.adrelid) AS default
       FROM pg_attribute a
       JOIN pg_class c ON c.oid = a.attrelid
       JOIN pg_namespace n ON n.oid = c.relnamespace
       JOIN pg_type t ON t.oid = a.atttypid
       LEFT JOIN pg_type et ON t.typcategory = 'A' AND et.oid = t.typelem
       LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
      WHERE a.attnum > 0 AND NOT a.attisdropped AND c.relkind IN ('r', 'p') AND n.nspname = ANY($1)
      ORDER BY 1, 2, a.attnum`,
    [schemas],
  );
  const enumTypeNames = await client.query<{ schema: string; name: string; values: string[] }>(
    `SELECT n.nspname AS schema, t.typname AS name, array_agg(e.enumlabel::text ORDER BY e.enumsortorder) AS values
       FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace JOIN pg_enum e ON e.enumtypid = t.oid
      WHERE n.nspname = ANY($1) GROUP BY 1, 2 ORDER BY 1, 2`,
    [schemas],
  );
  const indexes = await client.query<{ schema: string; table: string; name: string; columns: (string | null)[]; unique: boolean; primary: boolean; partial: boolean }>(
    `SELECT n.nspname AS schema, c.relname AS table, i.relname AS name,
            ARRAY(SELECT a.attname::text FROM unnest(ix.indkey::int2[]) WITH ORDINALITY AS k(attnum, ord)
                    LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum
                   WHERE k.ord <= ix.indnkeyatts ORDER BY k.ord) AS columns,
            ix.indisunique AS unique, ix.indisprimary AS primary, ix.indpred IS NOT NULL AS partial
       FROM pg_index ix
       JOIN pg_class i ON i.oid = ix.indexrelid
       JOIN pg_class c ON c.oid = ix.indrelid
       JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = ANY($1) AND c.relkind IN ('r', 'p')
      ORDER BY 1, 2, 3`,
    [schemas],
  );
  const fks = await client.query<{ schema: string; table: string; name: string; columns: string[]; ref_schema: string; ref_table: string; ref_columns: string[]; on_delete: string; on_update: string }>(
    `SELECT n.nspname AS schema, c.relname AS table, con.conname AS name,
            ARRAY(SELECT a.attname::text FROM unnest(con.conkey) WITH ORDINALITY AS k(attnum, ord)
                    JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.attnum ORDER BY k.ord) AS columns,
            rn.nspname AS ref_schema, rc.relname AS ref_table,
            ARRAY(SELECT a.attname::text FROM unnest(con.confkey) WITH ORDINALITY AS k(attnum, ord)
                    JOIN pg_attribute a ON a.attrelid = con.confrelid AND a.attnum = k.attnum ORDER BY k.ord) AS ref_columns,
            con.confdeltype AS on_delete, con.confupdtype AS on_update
       FROM pg_constraint con
       JOIN pg_class c ON c.oid = con.conrelid
       JOIN pg_namespace n ON n.oid = c.relnamespace
       JOIN pg_class rc ON rc.oid = con.confrelid
       JOIN pg_namespace rn ON rn.oid = rc.relnamespace
      WHERE con.contype = 'f' AND n.nspname = ANY($1)
      ORDER BY 1, 2, 3`,
    [schemas],
  );

  const key = (schema: string, table: string) => `${schema}.${table}`;
  const byTable = new Map<string, DbTable>();
  for (const t of tables.rows) byTable.set(key(t.schema, t.name), { schema: t.schema, name: t.name, columns: [], indexes: [], foreignKeys: [] });
  for (const c of columns.rows) {
    const base = c.is_enum ? `enum:${stripQualifier(c.base_type)}` : c.base_type;
    byTable.get(key(c.schema, c.table))?.columns.push({ name: c.name, type: c.is_array ? `${base}[]` : base, nullable: !c.not_null, default: c.default });
  }
  for (const i of indexes.rows) {
    byTable.get(key(i.schema, i.table))?.indexes.push({ name: i.name, columns: i.columns, unique: i.unique, primary: i.primary, partial: i.partial });
  }
  for (const f of fks.rows) {
    byTable.get(key(f.schema, f.table))?.foreignKeys.push({
      name: f.name,
      columns: f.columns,
      refSchema: f.ref_schema,
      refTable: f.ref_table,
      refColumns: f.ref_columns,
      onDelete: PG_ACTIONS[f.on_delete] ?? 'NoAction',
      onUpdate: PG_ACTIONS[f.on_update] ?? 'NoAction',
    });
  }
  return { tables: [...byTable.values()], enums: enumTypeNames.rows.map((e) => ({ schema: e.schema, name: e.name, values: e.values })) };
}

// format_type() qualifies and quotes enum names outside the search_path ("secrets"."Color").
function stripQualifier(typeName: string): string {
  const parts = typeName.match(/"(?:[^"]|"")*"|[^.]+/g) ?? [typeName];
  const last = parts[parts.length - 1] ?? typeName;
  return last.startsWith('"') ? last.slice(1, -1).replace(/""/g, '"') : last;
}

// ---------------------------------------------------------------------------------------
// What the Prisma schema declares, and the comparison.

export interface Difference {
  /** What the difference is about: `Model`, `Model.field`, `schema.table` or `enum Name`. */
  subject: string;
  message: string;
}

export interface CompareOptions {
  /** Postgres schemas that belong to the Prisma schema (see `datasourceSchemas`). */
  schemas: string[];
  /** Tables that exist outside the Prisma schema on purpose, as `schema.table`. */
  ignoreTables?: string[];
  /** Indexes Prisma cannot express (partial, expression), by index name. */
  ignoreIndexes?: string[];
  /**
   * Also require primary keys and indexes to carry the names Prisma Migrate would give
   * them (`Table_pkey`, `Table_a_b_key`, `Table_a_b_idx`, or the schema's `map:`), so that a
   * later `prisma migrate diff` sees no renames. Foreign-key names are not checked: the
   * DMMF does not expose `@relation(map:)`.
   */
  checkNames?: boolean;
}

/** Postgres' NAMEDATALEN - 1. */
const MAX_IDENTIFIER_BYTES = 63;

// Prisma's ConstraintNames (psl): `{table}_{columns}` cut to fit before the suffix.
function truncateBytes(text: string, maxBytes: number): string {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length < maxBytes) return text;
  let end = maxBytes;
  while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end--; // stay on a character boundary
  return bytes.subarray(0, end).toString('utf8');
}

/** The name Prisma Migrate gives a primary key, unique index or index it creates. */
export function prismaDefaultIndexName(kind: 'id' | 'unique' | 'normal', table: string, columns: readonly string[]): string {
  if (kind === 'id') return `${truncateBytes(table, MAX_IDENTIFIER_BYTES - 5)}_pkey`;
  const suffix = kind === 'unique' ? '_key' : '_idx';
  return `${truncateBytes(`${table}_${columns.join('_')}`, MAX_IDENTIFIER_BYTES - suffix.length)}${suffix}`;
}

export const DEFAULT_IGNORED_TABLES = ['public._prisma_migrations'];

// Defaults Prisma computes in the client; the column has no DEFAULT clause.
const CLIENT_SIDE_DEFAULTS = new Set(['uuid', 'cuid', 'nanoid', 'ulid']);

/** The column type Prisma Migrate would create for a field, in `DbColumn.type` form. */
export function expectedColumnType(field: DmmfField, enumDbNames: Map<string, string>): string | undefined {
  const base = field.kind === 'enum' ? `enum:${enumDbNames.get(field.type) ?? field.type}` : scalarType(field);
  if (base === undefined) return undefined;
  return field.isList ? `${base}[]` : base;
}

function scalarType(field: DmmfField): string | undefined {
  const native = field.nativeType as readonly [string, readonly string[]] | null | undefined;
  const name = native?.[0];
  const args = native?.[1] ?? [];
  const withArgs = (pgName: string) => (args.length > 0 ? `${pgName}(${args.join(',')})` : pgName);
  if (name) {
    switch (name) {
      case 'Text': return 'text';
      case 'VarChar': return withArgs('character varying');
      case 'Char': return withArgs('character');
      case 'Uuid': return 'uuid';
      case 'Citext': return 'citext';
      case 'Inet': return 'inet';
      case 'Xml': return 'xml';
      case 'Bit': return withArgs('bit');
      case 'VarBit': return withArgs('bit varying');
      case 'Integer': return 'integer';
      case 'SmallInt': return 'smallint';
      case 'Oid': return 'oid';
      case 'BigInt': return 'bigint';
      case 'Boolean': return 'boolean';
      case 'Timestamp': return args.length > 0 ? `timestamp(${args[0]}) without time zone` : 'timestamp without time zone';
      case 'Timestamptz': return args.length > 0 ? `timestamp(${args[0]}) with time zone` : 'timestamp with time zone';
      case 'Date': return 'date';
      case 'Time': return args.length > 0 ? `time(${args[0]}) without time zone` : 'time without time zone';
      case 'Timetz': return args.length > 0 ? `time(${args[0]}) with time zone` : 'time with time zone';
      case 'Json': return 'json';
      case 'JsonB': return 'jsonb';
      case 'ByteA': return 'bytea';
      case 'DoublePrecision': return 'double precision';
      case 'Real': return 'real';
      case 'Decimal': return withArgs('numeric');
      case 'Money': return 'money';
      default: return undefined;
    }
  }
  switch (field.type) {
    case 'String': return 'text';
    case 'Int': return 'integer';
    case 'BigInt': return 'bigint';
    case 'Boolean': return 'boolean';
    case 'DateTime': return 'timestamp(3) without time zone';
    case 'Json': return 'jsonb';
    case 'Bytes': return 'bytea';
    case 'Float': return 'double precision';
    case 'Decimal': return 'numeric(65,30)';
    default: return undefined;
  }
}

function expectsDbDefault(field: DmmfField): boolean {
  if (!field.hasDefaultValue) return false;
  const def = field.default as unknown;
  if (def && typeof def === 'object' && !Array.isArray(def) && 'name' in def) {
    return !CLIENT_SIDE_DEFAULTS.has(String((def as { name: unknown }).name));
  }
  return true;
}

const columnName = (f: { name: string; dbName?: string | null }) => f.dbName ?? f.name;
const tableName = (m: DmmfModel) => m.dbName ?? m.name;
const tableSchema = (m: DmmfModel) => m.schema ?? 'public';
const sameList = (a: readonly (string | null)[], b: readonly (string | null)[]) => a.length === b.length && a.every((x, i) => x === b[i]);
const list = (cols: readonly (string | null)[]) => `(${cols.map((c) => c ?? '<expression>').join(', ')})`;

/** Every difference between the Prisma datamodel and the database; empty when they agree. */
export function compareSchema(datamodel: Datamodel, db: DbSnapshot, options: CompareOptions): Difference[] {
  const diffs: Difference[] = [];
  const ignoredTables = new Set(options.ignoreTables ?? DEFAULT_IGNORED_TABLES);
  const ignoredIndexes = new Set(options.ignoreIndexes ?? []);
  const inScope = new Set(options.schemas);
  const tables = new Map(db.tables.map((t) => [`${t.schema}.${t.name}`, t]));
  const models = new Map(datamodel.models.map((m) => [m.name, m]));
  const enumDbNames = new Map(datamodel.enums.map((e) => [e.name, e.dbName ?? e.name]));
  const declaredTables = new Set<string>();

  for (const model of datamodel.models) {
    const qualified = `${tableSchema(model)}.${tableName(model)}`;
    declaredTables.add(qualified);
    const table = tables.get(qualified);
    if (!table) {
      diffs.push({ subject: model.name, message: `table ${qualified} does not exist in the database` });
      continue;
    }
    const fieldByName = new Map(model.fields.map((f) => [f.name, f]));
    const col = (fieldName: string) => columnName(fieldByName.get(fieldName) ?? { name: fieldName });

    // Columns.
    const declaredColumns = new Set<string>();
    for (const field of model.fields) {
      if (field.kind === 'object') continue;
      const name = columnName(field);
      declaredColumns.add(name);
      const subject = `${model.name}.${field.name}`;
      const column = table.columns.find((c) => c.name === name);
      if (!column) {
        diffs.push({ subject, message: `column ${qualified}.${name} does not exist in the database` });
        continue;
      }
      const expectedType = field.kind === 'unsupported' ? undefined : expectedColumnType(field, enumDbNames);
      if (field.kind !== 'unsupported' && expectedType === undefined) {
        diffs.push({ subject, message: `the drift check does not know the Postgres type of ${field.type}${field.nativeType ? ` @db.${String(field.nativeType[0])}` : ''}` });
      } else if (expectedType !== undefined && expectedType !== column.type) {
        diffs.push({ subject, message: `column ${name} has type ${column.type}, the schema expects ${expectedType}` });
      }
      // Prisma creates list columns without NOT NULL; every other column follows `?`.
      const expectNullable = field.isList || !field.isRequired;
      if (expectNullable !== column.nullable) {
        diffs.push({ subject, message: `column ${name} is ${column.nullable ? 'nullable' : 'NOT NULL'}, the schema expects ${expectNullable ? 'nullable' : 'NOT NULL'}` });
      }
      const expectDefault = expectsDbDefault(field);
      if (expectDefault !== (column.default !== null)) {
        diffs.push({
          subject,
          message: expectDefault
            ? `column ${name} has no DEFAULT, the schema declares @default(${JSON.stringify(field.default)})`
            : `column ${name} has DEFAULT ${column.default}, the schema declares none${field.hasDefaultValue ? ' in the database (the default is computed by the client)' : ''}`,
        });
      }
    }
    for (const column of table.columns) {
      if (!declaredColumns.has(column.name)) {
        diffs.push({ subject: model.name, message: `column ${qualified}.${column.name} exists in the database but not in the schema` });
      }
    }

    // Primary key, unique and normal indexes, compared by column list.
    const matched = new Set<DbIndex>();
    for (const index of datamodel.indexes.filter((i) => i.model === model.name)) {
      const columns = index.fields.map((f) => col(f.name));
      const explicitName = (index as { dbName?: string | null }).dbName ?? undefined;
      let found: DbIndex | undefined;
      let what: string;
      if (index.type === 'id') {
        what = 'primary key';
        found = table.indexes.find((i) => i.primary && sameList(i.columns, columns));
        if (!found) {
          const actual = table.indexes.find((i) => i.primary);
          diffs.push({ subject: model.name, message: actual ? `primary key is ${list(actual.columns)}, the schema expects ${list(columns)}` : `table ${qualified} has no primary key, the schema expects ${list(columns)}` });
        }
      } else if (index.type === 'unique' || index.type === 'normal') {
        const unique = index.type === 'unique';
        what = unique ? 'unique index' : 'index';
        found = table.indexes.find((i) => !i.primary && !matched.has(i) && i.unique === unique && !i.partial && sameList(i.columns, columns) && (!explicitName || i.name === explicitName))
          ?? table.indexes.find((i) => !i.primary && !matched.has(i) && i.unique === unique && !i.partial && sameList(i.columns, columns));
        if (!found) {
          diffs.push({ subject: index.fields.length === 1 && index.isDefinedOnField ? `${model.name}.${index.fields[0]!.name}` : model.name, message: `${what} on ${list(columns)} does not exist in table ${qualified}` });
        }
      } else {
        continue;
      }
      if (found) {
        matched.add(found);
        if (explicitName && found.name !== explicitName) {
          diffs.push({ subject: model.name, message: `${what} on ${list(columns)} is named ${found.name}, the schema maps it to ${explicitName}` });
        } else if (!explicitName && options.checkNames) {
          const expectedName = prismaDefaultIndexName(index.type, tableName(model), columns);
          if (found.name !== expectedName) {
            diffs.push({ subject: model.name, message: `${what} on ${list(columns)} is named ${found.name}; Prisma would name it ${expectedName} (rename it, or add map: "${found.name}" in the schema)` });
          }
        }
      }
    }
    for (const index of table.indexes) {
      if (matched.has(index) || ignoredIndexes.has(index.name)) continue;
      const kind = index.primary ? 'primary key' : index.unique ? 'unique index' : 'index';
      diffs.push({ subject: model.name, message: `${kind} ${index.name} on ${list(index.columns)}${index.partial ? ' (partial)' : ''} exists in the database but not in the schema` });
    }

    // Foreign keys, one per relation field that holds the `fields:` side.
    const matchedFks = new Set<DbForeignKey>();
    for (const field of model.fields) {
      const from = (field.relationFromFields ?? []) as readonly string[];
      if (field.kind !== 'object' || from.length === 0) continue;
      const target = models.get(field.type);
      if (!target) continue;
      const targetFields = new Map(target.fields.map((f) => [f.name, f]));
      const columns = from.map(col);
      const refColumns = ((field.relationToFields ?? []) as readonly string[]).map((n) => columnName(targetFields.get(n) ?? { name: n }));
      const allRequired = from.every((n) => fieldByName.get(n)?.isRequired);
      // Prisma's defaults: Restrict for required relations, SetNull for optional ones; Cascade on update.
      const onDelete = (field.relationOnDelete as ReferentialAction | undefined) ?? (allRequired ? 'Restrict' : 'SetNull');
      const onUpdate = ((field as { relationOnUpdate?: string }).relationOnUpdate as ReferentialAction | undefined) ?? 'Cascade';
      const subject = `${model.name}.${field.name}`;
      const fk = table.foreignKeys.find((f) => !matchedFks.has(f) && sameList(f.columns, columns));
      if (!fk) {
        diffs.push({ subject, message: `foreign key ${list(columns)} -> ${tableSchema(target)}.${tableName(target)}${list(refColumns)} does not exist in table ${qualified}` });
        continue;
      }
      matchedFks.add(fk);
      if (fk.refSchema !== tableSchema(target) || fk.refTable !== tableName(target) || !sameList(fk.refColumns, refColumns)) {
        diffs.push({ subject, message: `foreign key ${fk.name} references ${fk.refSchema}.${fk.refTable}${list(fk.refColumns)}, the schema expects ${tableSchema(target)}.${tableName(target)}${list(refColumns)}` });
      }
      if (fk.onDelete !== onDelete) diffs.push({ subject, message: `foreign key ${fk.name} is ON DELETE ${fk.onDelete}, the schema expects onDelete: ${onDelete}` });
      if (fk.onUpdate !== onUpdate) diffs.push({ subject, message: `foreign key ${fk.name} is ON UPDATE ${fk.onUpdate}, the schema expects onUpdate: ${onUpdate}` });
    }
    for (const fk of table.foreignKeys) {
      if (!matchedFks.has(fk)) diffs.push({ subject: model.name, message: `foreign key ${fk.name} on ${list(fk.columns)} exists in the database but not in the schema` });
    }
  }

  for (const table of db.tables) {
    const qualified = `${table.schema}.${table.name}`;
    if (inScope.has(table.schema) && !declaredTables.has(qualified) && !ignoredTables.has(qualified)) {
      diffs.push({ subject: qualified, message: `table ${qualified} exists in the database but no model maps to it` });
    }
  }

  // Enums. get-dmmf does not report an enum's @@schema, so they are matched by name.
  const declaredEnums = new Set<string>();
  for (const e of datamodel.enums) {
    const name = e.dbName ?? e.name;
    declaredEnums.add(name);
    const found = db.enums.filter((x) => x.name === name);
    if (found.length === 0) {
      diffs.push({ subject: `enum ${e.name}`, message: `enum type ${name} does not exist in the database` });
      continue;
    }
    const values = e.values.map((v) => v.dbName ?? v.name);
    // Compared as sets: ALTER TYPE ... ADD VALUE appends, and the client does not care.
    const sorted = [...values].sort();
    for (const x of found) {
      if (!sameList([...x.values].sort(), sorted)) {
        diffs.push({ subject: `enum ${e.name}`, message: `enum type ${x.schema}.${name} has values ${list(x.values)}, the schema expects ${list(values)}` });
      }
    }
  }
  for (const x of db.enums) {
    if (inScope.has(x.schema) && !declaredEnums.has(x.name)) {
      diffs.push({ subject: `${x.schema}.${x.name}`, message: `enum type ${x.schema}.${x.name} exists in the database but not in the schema` });
    }
  }
  return diffs;
}

export function formatDifferences(diffs: Difference[]): string {
  return diffs.map((d) => `- ${d.subject}: ${d.message}`).join('\n');
}
