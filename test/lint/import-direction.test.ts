// The import-direction rules of docs/architecture.md are enforced by eslint.config.mjs;
// this test proves they fire (and stay quiet on allowed imports), so a config edit that
// silently disables them fails here.
import { execFile } from 'node:child_process';
import path from 'node:path';

const root = path.resolve(__dirname, '../..');
const eslintBin = path.join(root, 'node_modules/eslint/bin/eslint.js');

// The ESLint CLI over stdin (jest's VM cannot import the ESM flat config in-process).
function restrictedImportMessages(file: string, code: string): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const child = execFile(process.execPath, [eslintBin, '--format', 'json', '--stdin', '--stdin-filename', file], { cwd: root }, (err, stdout) => {
      if (err && !stdout) return reject(err);
      const [result] = JSON.parse(stdout) as Array<{ messages: Array<{ ruleId: string | null; message: string }> }>;
      resolve((result?.messages ?? []).filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.message));
    });
    child.stdin!.end(code);
  });
}

describe('import direction', () => {
  jest.setTimeout(30_000);

  it('libs never import services', async () => {
    const messages = await restrictedImportMessages('libs/logger/src/x.ts', "import { buildApp } from '@selfstack/service-secrets';\nexport const a = buildApp;\n");
    expect(messages).toEqual([expect.stringContaining('libs/ never imports from services/')]);
  });

  it('services never import express, paths or Prisma', async () => {
    const messages = await restrictedImportMessages(
      'services/boxes/src/features/x/x.service.ts',
      "import express from 'express';\nimport { p } from './x.paths';\nimport { createPrismaClient } from '@selfstack/db';\nexport const a = [express, p, createPrismaClient];\n",
    );
    expect(messages).toHaveLength(3);
    expect(messages.join('\n')).toMatch(/Services never import express/);
    expect(messages.join('\n')).toMatch(/paths are above services/);
    expect(messages.join('\n')).toMatch(/Only stores touch Prisma/);
  });

  it('paths call services, never stores; stores never call upward', async () => {
    expect(await restrictedImportMessages('services/boxes/src/features/x/x.paths.ts', "import { s } from './x.store';\nexport const a = s;\n")).toEqual([
      expect.stringContaining('Paths call services, not stores'),
    ]);
    expect(await restrictedImportMessages('services/boxes/src/features/x/x.store.ts', "import { s } from './x.service';\nexport const a = s;\n")).toEqual([
      expect.stringContaining('Stores sit below services and paths'),
    ]);
  });

  it('allows the intended direction', async () => {
    expect(await restrictedImportMessages('services/boxes/src/features/x/x.paths.ts', "import { s } from './x.service';\nexport const a = s;\n")).toEqual([]);
    expect(await restrictedImportMessages('services/boxes/src/features/x/x.service.ts', "import { s } from './x.store';\nexport const a = s;\n")).toEqual([]);
    expect(await restrictedImportMessages('services/boxes/src/features/x/x.store.ts', "import type { PrismaClient } from '@selfstack/db';\nexport type A = PrismaClient;\n")).toEqual([]);
  });
});
