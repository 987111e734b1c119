import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { ConfigError } from './config-error';
import { HclParseError, loadHclFile, parseHcl, validateHcl } from './hcl';

const CONTROLLER = `
disable_mlock = true

controller {
  name = "dev-controller"
  graceful_shutdown_wait_duration = "10s"
  database {
    url = "env://DATABASE_URL"
  }
}

listener "tcp" {
  address = "127.0.0.1:9200"
  purpose = "api"
  tls_disable = true
}

listener "tcp" {
  address = "127.0.0.1:9203"
  purpose = "ops"
  tls_disable = true
  custom_response_headers = {
    "default" = { "X-Test" = ["a", "b"] }
  }
}
`;

describe('parseHcl', () => {
  it('parses blocks, labels, attributes and nested maps', async () => {
    const doc = await parseHcl(CONTROLLER, 'controller.hcl');
    expect(doc.disable_mlock).toBe(true);
    expect(doc.controller).toEqual([
      { name: 'dev-controller', graceful_shutdown_wait_duration: '10s', database: [{ url: 'env://DATABASE_URL' }] },
    ]);
    const listeners = (doc.listener as { tcp: Record<string, unknown>[] }).tcp;
    expect(listeners.map((l) => l.purpose)).toEqual(['api', 'ops']);
    expect(listeners[1]?.custom_response_headers).toEqual({ default: { 'X-Test': ['a', 'b'] } });
  });

  it('returns an empty document for an empty file', async () => {
    await expect(parseHcl('', 'empty.hcl')).resolves.toEqual({});
  });

  it('reports the file, line and column of a syntax error', async () => {
    const err = await parseHcl('controller {\n  name = \n}\n', 'bad.hcl').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HclParseError);
    expect(err).toBeInstanceOf(ConfigError);
    const e = err as HclParseError;
    expect(e.file).toBe('bad.hcl');
    expect(e.diagnostics[0]).toMatchObject({ file: 'bad.hcl', line: 2, column: 10, summary: 'Invalid expression' });
    expect(e.message).toMatch(/^cannot parse HCL file bad\.hcl:\n  - bad\.hcl:2:10: Invalid expression: Expected the start of an expression/);
  });

  it('reports every diagnostic', async () => {
    const err = (await parseHcl('a = "unterminated\n', 'two.hcl').catch((e: unknown) => e)) as HclParseError;
    expect(err.diagnostics.map((d) => d.summary)).toEqual(['Invalid multi-line string', 'Unterminated template string']);
    expect(err.diagnostics.every((d) => d.line === 1 && d.column === 18)).toBe(true);
  });

  it('rejects a redefined attribute with its position', async () => {
    const err = (await parseHcl('a = 1\na = 2\n', 'dup.hcl').catch((e: unknown) => e)) as HclParseError;
    expect(err.problems[0]?.where).toBe('dup.hcl:2:1');
    expect(err.problems[0]?.message).toMatch(/Attribute redefined/);
  });

  it('copes with file names containing regex characters', async () => {
    const err = (await parseHcl('x = = 1', 'conf (1)+.hcl').catch((e: unknown) => e)) as HclParseError;
    expect(err.diagnostics[0]?.line).toBe(1);
  });
});

describe('loadHclFile', () => {
  const dir = mkdtempSync(join(tmpdir(), 'config-hcl-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('reads and parses a file', async () => {
    const path = join(dir, 'ok.hcl');
    writeFileSync(path, 'worker {\n  name = "w1"\n}\n');
    await expect(loadHclFile(path)).resolves.toEqual({ worker: [{ name: 'w1' }] });
  });

  it('names the path of a missing file', async () => {
    const path = join(dir, 'missing.hcl');
    await expect(loadHclFile(path)).rejects.toThrow(`cannot read HCL file ${path}:\n  - ${path}: file not found`);
  });

  it('names the path in syntax errors', async () => {
    const path = join(dir, 'broken.hcl');
    writeFileSync(path, 'listener "tcp" {\n  address = \n');
    const err = (await loadHclFile(path).catch((e: unknown) => e)) as HclParseError;
    expect(err).toBeInstanceOf(HclParseError);
    expect(err.message).toContain(`${path}:2:`);
  });
});

describe('validateHcl', () => {
  const schema = z.object({
    controller: z.array(z.object({ name: z.string() })).length(1),
    listener: z.object({ tcp: z.array(z.object({ purpose: z.enum(['api', 'ops', 'cluster']), address: z.string() })) }),
  });

  it('returns typed data when valid', async () => {
    const doc = await parseHcl(CONTROLLER, 'c.hcl');
    expect(validateHcl(schema, doc, 'c.hcl').controller[0]?.name).toBe('dev-controller');
  });

  it('lists every problem with its path in the document', async () => {
    const doc = await parseHcl('listener "tcp" {\n purpose = "proxy"\n}\n', 'c.hcl');
    const err = (() => {
      try {
        validateHcl(schema, doc, 'c.hcl');
        return undefined;
      } catch (e) {
        return e as ConfigError;
      }
    })();
    expect(err).toBeInstanceOf(ConfigError);
    const where = err!.problems.map((p) => p.where);
    expect(where).toEqual(expect.arrayContaining(['c.hcl: controller', 'c.hcl: listener.tcp.0.purpose', 'c.hcl: listener.tcp.0.address']));
  });
});
