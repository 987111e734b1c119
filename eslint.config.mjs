// ESLint flat config. Besides typescript-eslint's recommended rules it enforces the
// import direction of docs/architecture.md: libs never import services; paths ->
// service -> store -> Prisma; services never import express; only stores touch Prisma.
import tseslint from 'typescript-eslint';

const noDefaultExport = {
  selector: 'ExportDefaultDeclaration',
  message: 'No default exports: export named factories and types.',
};

// Handlers read the kit's validated fields (`ctx.query`, `ctx.body`, `ctx.params`), which
// are what ?help=1 and OpenAPI document; the raw request bypasses both (issue 31, item 1;
// services/scheduler/test/openapi.test.ts checks the same thing at run time).
const rawRequestReads = [
  {
    selector: "MemberExpression[object.type='MemberExpression'][object.property.name='req'][property.name=/^(query|body)$/]",
    message: 'Read the declared, validated fields (ctx.query / ctx.body), not ctx.req.query or ctx.req.body.',
  },
  {
    selector: "VariableDeclarator[init.type='MemberExpression'][init.property.name='req'] > ObjectPattern > Property[key.name=/^(query|body)$/]",
    message: 'Read the declared, validated fields (ctx.query / ctx.body), not ctx.req.query or ctx.req.body.',
  },
];
const rawInputReads = {
  selector: "MemberExpression[object.name='ctx'][property.name=/^(input|rawParams)$/]",
  message: 'Read the declared, validated fields (ctx.body / ctx.params), not ctx.input or ctx.rawParams.',
};

export default tseslint.config(
  {
    ignores: ['**/node_modules/**', 'bench/.scratch/**', '**/dist/**', '**/generated/**', '.data/**', 'coverage/**', '**/*.js', '**/*.mjs', '**/*.cjs'],
  },
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts', '**/*.tsx'],
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_' }],
      '@typescript-eslint/ban-ts-comment': ['error', { 'ts-ignore': true, 'ts-expect-error': 'allow-with-description' }],
      '@typescript-eslint/no-explicit-any': 'error',
      'no-restricted-syntax': ['error', noDefaultExport],
    },
  },
  {
    files: ['libs/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [
          { group: ['@selfstack/service-*', '**/services/**'], message: 'libs/ never imports from services/.' },
        ],
      }],
    },
  },
  {
    files: ['services/**/*.service.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        paths: [
          { name: 'express', message: 'Services never import express: paths own HTTP.' },
          { name: '@selfstack/db', message: 'Only stores touch Prisma.' },
        ],
        patterns: [
          { group: ['**/*.paths', '@prisma/*', '**/generated/**'], message: 'service -> store only; paths are above services, Prisma below stores.' },
        ],
      }],
    },
  },
  {
    files: ['services/**/*.store.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        paths: [{ name: 'express', message: 'Stores never import express.' }],
        patterns: [{ group: ['**/*.paths', '**/*.service'], message: 'Stores sit below services and paths.' }],
      }],
    },
  },
  {
    files: ['services/**/*.paths.ts'],
    rules: {
      'no-restricted-syntax': ['error', noDefaultExport, ...rawRequestReads],
    },
  },
  {
    // KV v1 (arbitrary keys) and existence checks elsewhere read ctx.input by design; the
    // scheduler declares every field it reads.
    files: ['services/scheduler/**/*.paths.ts'],
    rules: {
      'no-restricted-syntax': ['error', noDefaultExport, ...rawRequestReads, rawInputReads],
    },
  },
  {
    files: ['services/**/*.paths.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        paths: [{ name: '@selfstack/db', message: 'Paths call services, never Prisma.' }],
        patterns: [{ group: ['**/*.store', '@prisma/*', '**/generated/**'], message: 'Paths call services, not stores.' }],
      }],
    },
  },
  {
    // Who may query the database: stores (and boxes' SQL helper beside its store) run the
    // queries; the composition roots (main.ts, boxes' admin-cli.ts, and the scheduler's
    // clients.ts, which main.ts, its tests and benchmarks share) create the clients.
    // Everything else in a service may only name the client's types, to pass it along
    // (compose.ts, a store's transaction type). docs/architecture.md "Database access".
    files: ['services/**/*.ts'],
    ignores: [
      'services/**/*.store.ts',
      'services/**/*.read-sql.ts',
      'services/*/src/main.ts',
      'services/*/src/admin-cli.ts',
      'services/scheduler/src/clients.ts',
      'services/*/test/**',
      'services/**/*.test.ts',
      'services/**/*.itest.ts',
    ],
    rules: {
      '@typescript-eslint/no-restricted-imports': ['error', {
        paths: [
          { name: '@selfstack/db', message: 'Only stores query the database (types may be imported).', allowTypeImports: true },
          { name: 'pg', message: 'Only stores query the database (types may be imported).', allowTypeImports: true },
          { name: 'postgres', message: 'Only stores query the database (types may be imported).', allowTypeImports: true },
        ],
        patterns: [{ group: ['@prisma/*', '**/generated/**'], message: 'Only stores query the database (types may be imported).', allowTypeImports: true }],
      }],
    },
  },
  {
    // Tool configuration files whose tools require a default export.
    files: ['prisma.config.ts', 'services/console/vite.config.ts'],
    rules: { 'no-restricted-syntax': 'off' },
  },
  {
    files: ['**/*.test.ts', '**/*.itest.ts', 'bench/**/*.ts', 'scripts/**/*.ts', 'libs/testing/**/*.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
);
