import type { Metafile } from 'esbuild';
import { discoverTargets, missingRuntimeDeps, packageName } from '../../scripts/build';

describe('scripts/build.ts helpers', () => {
  it.each([
    ['express', 'express'],
    ['@prisma/client/runtime/client', '@prisma/client'],
    ['@aws-sdk/client-s3', '@aws-sdk/client-s3'],
    ['zod/v4', 'zod'],
  ])('packageName(%s) = %s', (spec, name) => {
    expect(packageName(spec)).toBe(name);
  });

  it('flags externals that are only devDependencies, ignoring node built-ins', () => {
    const metafile = {
      inputs: {},
      outputs: {
        'dist/x/main.js': {
          bytes: 1,
          inputs: {},
          exports: [],
          imports: [
            { path: 'express', kind: 'require-call', external: true },
            { path: 'node:fs', kind: 'require-call', external: true },
            { path: 'crypto', kind: 'require-call', external: true },
            { path: 'supertest/lib/agent', kind: 'require-call', external: true },
            { path: 'libs/x.ts', kind: 'import-statement' },
          ],
        },
      },
    } as unknown as Metafile;
    expect(missingRuntimeDeps(metafile, { express: '^5' })).toEqual(['supertest']);
    expect(missingRuntimeDeps(metafile, { express: '^5', supertest: '^7' })).toEqual([]);
  });

  it('always has a migrate target and rejects unknown names', () => {
    expect(discoverTargets().map((t) => t.name)).toContain('migrate');
    expect(() => discoverTargets(['nope'])).toThrow(/unknown or unwritten build target\(s\): nope/);
  });
});
