// The drift comparison must be able to fail: a deliberately wrong schema/database pair has
// to produce differences that name the model, the field and what differs.
import { compareSchema, datamodelFromFiles, datasourceSchemas, expectedColumnType, prismaDefaultIndexName, type DbSnapshot, type DbTable } from './drift';

const SCHEMA = `
datasource db {
  provider = "postgresql"
  schemas  = ["public", "svc"]
}
enum Status {
  active
  gone
  @@schema("svc")
}
model Account {
  id        String   @id @default(uuid())
  email     String   @unique @db.VarChar(200)
  status    Status   @default(active)
  createdAt DateTime @default(now()) @db.Timestamptz(3)
  notes     String?
  tokens    Token[]
  @@map("accounts")
  @@schema("svc")
}
model Token {
  id        BigInt  @id @default(autoincrement())
  accountId String  @map("account_id")
  account   Account @relation(fields: [accountId], references: [id], onDelete: Cascade)
  scopes    String[]
  @@index([accountId])
  @@map("tokens")
  @@schema("svc")
}
`;

function goodSnapshot(): DbSnapshot {
  const accounts: DbTable = {
    schema: 'svc',
    name: 'accounts',
    columns: [
      { name: 'id', type: 'text', nullable: false, default: null },
      { name: 'email', type: 'character varying(200)', nullable: false, default: null },
      { name: 'status', type: 'enum:Status', nullable: false, default: "'active'::svc.\"Status\"" },
      { name: 'createdAt', type: 'timestamp(3) with time zone', nullable: false, default: 'CURRENT_TIMESTAMP' },
      { name: 'notes', type: 'text', nullable: true, default: null },
    ],
    indexes: [
      { name: 'accounts_pkey', columns: ['id'], unique: true, primary: true, partial: false },
      { name: 'accounts_email_key', columns: ['email'], unique: true, primary: false, partial: false },
    ],
    foreignKeys: [],
  };
  const tokens: DbTable = {
    schema: 'svc',
    name: 'tokens',
    columns: [
      { name: 'id', type: 'bigint', nullable: false, default: "nextval('svc.tokens_id_seq'::regclass)" },
      { name: 'account_id', type: 'text', nullable: false, default: null },
      { name: 'scopes', type: 'text[]', nullable: true, default: null },
    ],
    indexes: [
      { name: 'tokens_pkey', columns: ['id'], unique: true, primary: true, partial: false },
      { name: 'tokens_account_id_idx', columns: ['account_id'], unique: false, primary: false, partial: false },
    ],
    foreignKeys: [
      { name: 'tokens_account_id_fkey', columns: ['account_id'], refSchema: 'svc', refTable: 'accounts', refColumns: ['id'], onDelete: 'Cascade', onUpdate: 'Cascade' },
    ],
  };
  return {
    tables: [accounts, tokens, { schema: 'public', name: '_prisma_migrations', columns: [], indexes: [], foreignKeys: [] }],
    enums: [{ schema: 'svc', name: 'Status', values: ['active', 'gone'] }],
  };
}

const files = [{ path: 'svc.prisma', content: SCHEMA }];
const datamodel = datamodelFromFiles(files);
const options = { schemas: datasourceSchemas(files) };

describe('compareSchema', () => {
  it('finds nothing when database and schema agree', () => {
    expect(options.schemas).toEqual(['public', 'svc']);
    expect(compareSchema(datamodel, goodSnapshot(), options)).toEqual([]);
  });

  it('names model, field and difference for each kind of drift', () => {
    const db = goodSnapshot();
    const [accounts, tokens] = db.tables as [DbTable, DbTable];
    accounts.columns[1]!.type = 'text'; // email lost its VarChar(200)
    accounts.columns[4]!.nullable = false; // notes became NOT NULL
    accounts.columns[3]!.default = null; // createdAt lost DEFAULT now()
    accounts.columns[0]!.default = 'gen_random_uuid()'; // uuid() is computed by the client
    accounts.columns.push({ name: 'legacy', type: 'text', nullable: true, default: null });
    accounts.indexes.splice(1, 1); // unique email index dropped
    tokens.indexes[1]!.columns = ['id', 'account_id'];
    tokens.foreignKeys[0]!.onDelete = 'Restrict';
    tokens.columns.splice(2, 1); // scopes missing
    db.tables.push({ schema: 'svc', name: 'orphans', columns: [], indexes: [], foreignKeys: [] });
    db.enums[0]!.values = ['active'];

    expect(compareSchema(datamodel, db, options)).toEqual([
      { subject: 'Account.id', message: 'column id has DEFAULT gen_random_uuid(), the schema declares none in the database (the default is computed by the client)' },
      { subject: 'Account.email', message: 'column email has type text, the schema expects character varying(200)' },
      { subject: 'Account.createdAt', message: 'column createdAt has no DEFAULT, the schema declares @default({"name":"now","args":[]})' },
      { subject: 'Account.notes', message: 'column notes is NOT NULL, the schema expects nullable' },
      { subject: 'Account', message: 'column svc.accounts.legacy exists in the database but not in the schema' },
      { subject: 'Account.email', message: 'unique index on (email) does not exist in table svc.accounts' },
      { subject: 'Token.scopes', message: 'column svc.tokens.scopes does not exist in the database' },
      { subject: 'Token', message: 'index on (account_id) does not exist in table svc.tokens' },
      { subject: 'Token', message: 'index tokens_account_id_idx on (id, account_id) exists in the database but not in the schema' },
      { subject: 'Token.account', message: 'foreign key tokens_account_id_fkey is ON DELETE Restrict, the schema expects onDelete: Cascade' },
      { subject: 'svc.orphans', message: 'table svc.orphans exists in the database but no model maps to it' },
      { subject: 'enum Status', message: 'enum type svc.Status has values (active), the schema expects (active, gone)' },
    ]);
  });

  it('reports a missing table and a wrong primary key', () => {
    const db = goodSnapshot();
    db.tables = db.tables.filter((t) => t.name !== 'tokens');
    db.tables[0]!.indexes[0]!.columns = ['email'];
    expect(compareSchema(datamodel, db, options)).toEqual([
      { subject: 'Account', message: 'primary key is (email), the schema expects (id)' },
      { subject: 'Account', message: 'primary key accounts_pkey on (email) exists in the database but not in the schema' },
      { subject: 'Token', message: 'table svc.tokens does not exist in the database' },
    ]);
  });
});

describe('index names', () => {
  it('follows Prisma\'s naming, truncated to fit 63 bytes with the suffix kept', () => {
    expect(prismaDefaultIndexName('id', 'accounts', ['id'])).toBe('accounts_pkey');
    expect(prismaDefaultIndexName('unique', 'Kid', ['parentId', 'a'])).toBe('Kid_parentId_a_key');
    expect(prismaDefaultIndexName('normal', 'tokens', ['account_id'])).toBe('tokens_account_id_idx');
    const long = prismaDefaultIndexName('normal', 'a'.repeat(40), ['b'.repeat(40)]);
    expect(long).toBe(`${'a'.repeat(40)}_${'b'.repeat(18)}_idx`);
    expect(Buffer.byteLength(long)).toBe(63);
  });

  it('reports indexes whose names differ from Prisma\'s only when asked to', () => {
    const db = goodSnapshot();
    db.tables[1]!.indexes[1]!.name = 'tokens_by_account';
    expect(compareSchema(datamodel, db, options)).toEqual([]);
    expect(compareSchema(datamodel, db, { ...options, checkNames: true })).toEqual([
      { subject: 'Token', message: 'index on (account_id) is named tokens_by_account; Prisma would name it tokens_account_id_idx (rename it, or add map: "tokens_by_account" in the schema)' },
    ]);
  });
});

describe('expectedColumnType', () => {
  it('maps Prisma scalar and native types to what PostgreSQL reports', () => {
    const dm = datamodelFromFiles([{ path: 'x.prisma', content: `
      datasource db {
        provider = "postgresql"
      }
      model T {
        id Int @id
        a String
        b BigInt
        c Boolean
        d DateTime
        e Json
        f Bytes
        g Float
        h Decimal
        i String[]
        j String @db.Uuid
        k Int @db.SmallInt
        l DateTime @db.Date
        m Json @db.Json
        n String @db.Char(2)
      }` }]);
    const fields = dm.models[0]!.fields;
    const types = Object.fromEntries(fields.map((f) => [f.name, expectedColumnType(f, new Map())]));
    expect(types).toEqual({
      id: 'integer', a: 'text', b: 'bigint', c: 'boolean', d: 'timestamp(3) without time zone', e: 'jsonb', f: 'bytea',
      g: 'double precision', h: 'numeric(65,30)', i: 'text[]', j: 'uuid', k: 'smallint', l: 'date', m: 'json', n: 'character(2)',
    });
  });
});
