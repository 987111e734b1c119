import { ConfigError } from '@selfstack/config';
import { CONFIG_ERROR_EXIT_CODE, runService, type ServiceDefinition, type ServiceRuntime } from '../src';

interface Config {
  db?: string;
  fail?: 'config' | 'start';
}

function harness(definition: Partial<ServiceDefinition<Config>> & { config: () => Config }) {
  const written: string[] = [];
  const exits: number[] = [];
  let runtime: ServiceRuntime<Config> | undefined;
  const closed: string[] = [];
  const run = runService<Config>(
    {
      name: 'test',
      settings: (c) => ({ logLevel: 'error', databaseUrl: c.db }),
      async start(r) {
        runtime = r;
        if (r.config.fail === 'start') throw new Error('listen EADDRINUSE');
        r.bus('t:');
        r.onShutdown('first', (reason) => closed.push(`first:${reason}`));
        r.onShutdown('second', () => closed.push('second'));
        return [{ close: async () => void closed.push('listener') }];
      },
      ...definition,
    },
    { env: {}, write: (t) => written.push(t), exit: (c) => exits.push(c) },
  );
  return { run, written, exits, closed, runtime: () => runtime };
}

describe('runService', () => {
  it('starts the service and, on shutdown, drains the listeners, then the closers in order, then the bus', async () => {
    const h = harness({ config: () => ({ db: 'postgresql://x/y' }) });
    const shutdown = await h.run;
    expect(h.runtime()?.databaseUrl).toBe('postgresql://x/y');
    expect(shutdown).toBeDefined();
    shutdown!.uninstall();
    await shutdown!('test over');
    expect(h.closed).toEqual(['listener', 'first:test over', 'second']);
    expect(h.exits).toEqual([0]);
    // The in-memory bus (no REDIS_URL) was closed last: it refuses to publish now.
    await expect(h.runtime()!.bus('t:').publish('c', 'm')).rejects.toThrow();
  });

  it('refuses to start without DATABASE_URL, as a configuration error', async () => {
    const h = harness({ config: () => ({}) });
    await h.run;
    expect(h.runtime()).toBeUndefined();
    expect(h.written.join('')).toBe('Error: invalid configuration (1 problem):\n  - DATABASE_URL: is required (make dev starts an embedded PostgreSQL and sets it)\n');
    expect(h.exits).toEqual([CONFIG_ERROR_EXIT_CODE]);
  });

  it('lets a service that needs no database start without one', async () => {
    const h = harness({ config: () => ({}), requiresDatabase: false });
    const shutdown = await h.run;
    shutdown?.uninstall();
    expect(h.runtime()?.databaseUrl).toBe('');
    expect(h.exits).toEqual([]);
  });

  it("exits with the service's configuration-error code, and 1 for any other failure", async () => {
    const bad = harness({
      config: () => {
        throw new ConfigError('invalid configuration (1 problem):', [{ where: 'PORT', message: 'must be a port number' }]);
      },
      configErrorExitCode: 1,
    });
    await bad.run;
    expect(bad.written.join('')).toBe('Error: invalid configuration (1 problem):\n  - PORT: must be a port number\n');
    expect(bad.exits).toEqual([1]);
    const crash = harness({ config: () => ({ db: 'postgresql://x/y', fail: 'start' }) });
    await crash.run;
    expect(crash.written.join('')).toMatch(/^Error: Error: listen EADDRINUSE\n/);
    expect(crash.exits).toEqual([1]);
  });
});
