// Two projects: `unit` (*.test.ts, no I/O) and `integration` (*.itest.ts, real
// PostgreSQL and Redis). TypeScript is transformed by @swc/jest; `make typecheck` is the
// type gate, so the transform itself does not type-check.
const transform = {
  '^.+\\.(t|j)sx?$': [
    '@swc/jest',
    {
      jsc: { parser: { syntax: 'typescript' }, target: 'es2022' },
      module: { type: 'commonjs' },
    },
  ],
};

const common = {
  transform,
  testEnvironment: 'node',
  moduleFileExtensions: ['ts', 'js', 'json'],
  testPathIgnorePatterns: ['/node_modules/', '/dist/', '/.data/'],
  // Workspace sources are TypeScript; marked ships ESM only, which swc turns into CommonJS.
  transformIgnorePatterns: ['/node_modules/(?!(@selfstack|marked)/)'],
};

/** @type {import('jest').Config} */
module.exports = {
  projects: [
    {
      ...common,
      displayName: 'unit',
      testMatch: ['<rootDir>/{libs,services,scripts,bench,test}/**/*.test.ts'],
    },
    {
      ...common,
      displayName: 'integration',
      testMatch: ['<rootDir>/{libs,services,scripts,bench,test}/**/*.itest.ts'],
      globalSetup: '<rootDir>/libs/testing/src/global-setup.ts',
      // testTimeout is a global-only option in jest; per-project timeouts go in a setup file.
      setupFilesAfterEnv: ['<rootDir>/libs/testing/src/jest-integration-setup.ts'],
    },
  ],
};
