// Prisma CLI configuration (Prisma 7). The schema is split per service under
// prisma/schema/; migrations are hand-written in prisma/migrations/ and applied by
// `make migrate` (libs/db), which keeps _prisma_migrations compatible with
// `prisma migrate deploy`.
import { defineConfig } from 'prisma/config';

export default defineConfig({
  schema: 'prisma/schema',
  migrations: { path: 'prisma/migrations' },
  datasource: { url: process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/selfstack' },
});
