import { ConfigError, HclParseError } from '@selfstack/config';
import { healthExposed, parseListenAddress, parseServerConfig } from './controller-config';

const env = { DATABASE_URL: 'postgresql://postgres@127.0.0.1:5432/x', PG_URL: 'postgresql://u@h/db' };

const controllerAndWorker = `
disable_mlock = true
listener "tcp" {
  address = "127.0.0.1:9200"
  purpose = "api"
}
listener "tcp" {
  address = "127.0.0.1:9201"
  purpose = "cluster"
}
listener "tcp" {
  address = ":9203"
  purpose = "ops"
}
controller {
  name = "c1"
  graceful_shutdown_wait_duration = "10s"
  database { url = "env://PG_URL" }
}
worker {
  name = "w1"
  initial_upstreams = ["127.0.0.1:9201"]
}
`;

async function problemsOf(text: string, e: Record<string, string> = env): Promise<string> {
  try {
    await parseServerConfig(text, 'bad.hcl', e);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error('expected a configuration error');
}

describe('controller configuration', () => {
  it('parses the anchor-shaped file: roles, listeners, duration, env:// indirection', async () => {
    const config = await parseServerConfig(controllerAndWorker, 'c.hcl', env);
    expect(config.controller).toEqual({ name: 'c1', gracefulShutdownWaitMs: 10_000, databaseUrl: 'postgresql://u@h/db' });
    expect(config.worker).toEqual({ name: 'w1', initialUpstreams: ['127.0.0.1:9201'], gracefulShutdownWaitMs: 0 });
    expect(config.listeners.api).toEqual({ purpose: 'api', host: '127.0.0.1', port: 9200 });
    expect(config.listeners.ops).toEqual({ purpose: 'ops', host: '0.0.0.0', port: 9203 });
    expect(healthExposed(config)).toBe(true);
  });

  it('defaults: no wait, DATABASE_URL from the environment, ops port 9203', async () => {
    const config = await parseServerConfig(
      'controller { name = "c" }\nlistener "tcp" { purpose = "cluster" }\nlistener "tcp" { purpose = "api" }\nlistener "tcp" { purpose = "ops" }',
      'c.hcl',
      env,
    );
    expect(config.controller?.gracefulShutdownWaitMs).toBe(0);
    expect(config.controller?.databaseUrl).toBe(env.DATABASE_URL);
    expect(config.listeners.ops?.port).toBe(9203);
  });

  it('a worker in the same process as its controller dials the local cluster listener', async () => {
    const config = await parseServerConfig(
      'controller { name = "c" }\nworker { name = "w" }\nlistener "tcp" {\n purpose = "cluster"\n address = "0.0.0.0:7001"\n}',
      'c.hcl',
      env,
    );
    expect(config.worker?.initialUpstreams).toEqual(['127.0.0.1:7001']);
  });

  it('reports every problem at once, naming the file', async () => {
    const message = await problemsOf(`
listener "tcp" {
  purpose = "api"
  address = "127.0.0.1:99999"
}
listener "tcp" { purpose = "api" }
controller {
  name = "c"
  database { url = "env://MISSING_VAR" }
}
worker { name = "w" }
`);
    expect(message).toContain('bad.hcl');
    expect(message).toContain('port must be a number between 0 and 65535');
    expect(message).toContain('more than one listener with purpose "api"');
    expect(message).toContain('environment variable MISSING_VAR is not set');
    expect(message).toContain('a controller needs a listener with purpose "cluster"');
  });

  it('rejects unknown purposes, bad durations and role-less files', async () => {
    expect(await problemsOf('controller {\n name = "c"\n graceful_shutdown_wait_duration = "soon"\n}\nlistener "tcp" { purpose = "data" }')).toMatch(
      /purpose must be one of api, cluster, ops, proxy[\s\S]*invalid duration "soon"|invalid duration "soon"[\s\S]*purpose must be one of/,
    );
    expect(await problemsOf('listener "tcp" { purpose = "ops" }')).toContain('neither a controller nor a worker block');
    expect(await problemsOf('worker { name = "w" }')).toContain('a worker needs at least one upstream');
  });

  it('reports HCL syntax errors with file, line and column', async () => {
    await expect(parseServerConfig('controller {\n  name = \n}', 'broken.hcl', env)).rejects.toBeInstanceOf(HclParseError);
    await expect(parseServerConfig('controller {\n  name = \n}', 'broken.hcl', env)).rejects.toThrow(/broken\.hcl:2:\d+/);
  });

  it('health is exposed only for a controller with api and ops listeners, or a worker with ops', async () => {
    const noApi = await parseServerConfig('controller { name = "c" }\nlistener "tcp" { purpose = "cluster" }\nlistener "tcp" { purpose = "ops" }', 'c.hcl', env);
    expect(healthExposed(noApi)).toBe(false);
    const noOps = await parseServerConfig('controller { name = "c" }\nlistener "tcp" { purpose = "cluster" }\nlistener "tcp" { purpose = "api" }', 'c.hcl', env);
    expect(healthExposed(noOps)).toBe(false);
    const workerOnly = await parseServerConfig('worker {\n name = "w"\n initial_upstreams = ["h:1"]\n}\nlistener "tcp" { purpose = "ops" }', 'w.hcl', env);
    expect(healthExposed(workerOnly)).toBe(true);
  });

  it('parses listen addresses', () => {
    expect(parseListenAddress('[::1]:9000', 'api')).toEqual({ host: '::1', port: 9000 });
    expect(parseListenAddress('example.org', 'ops')).toEqual({ host: 'example.org', port: 9203 });
    expect(parseListenAddress(undefined, 'cluster')).toEqual({ host: '127.0.0.1', port: 9201 });
    expect(() => parseListenAddress('h:port', 'api')).toThrow(/port must be a number/);
  });
});
