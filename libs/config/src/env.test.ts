import { z } from 'zod';
import { ConfigError } from './config-error';
import { booleanEnv, durationEnv, loadEnv, sharedEnv } from './env';

const schema = z.object({
  ...sharedEnv({ port: 8200 }),
  SECRETS_DEV_MODE: booleanEnv(false),
  SHUTDOWN_WAIT: durationEnv('10s'),
  API_ADDR: z.string().url(),
});

describe('loadEnv', () => {
  it('applies defaults and coerces values', () => {
    const cfg = loadEnv(schema, { API_ADDR: 'http://127.0.0.1:8200' });
    expect(cfg).toEqual({
      DATABASE_URL: undefined,
      REDIS_URL: undefined,
      LOG_LEVEL: 'info',
      HOST: '0.0.0.0',
      PORT: 8200,
      MAX_REQUEST_BYTES: 32 * 1024 * 1024,
      SECRETS_DEV_MODE: false,
      SHUTDOWN_WAIT: 10_000,
      API_ADDR: 'http://127.0.0.1:8200',
    });
  });

  it('parses every shared piece when set', () => {
    const cfg = loadEnv(schema, {
      DATABASE_URL: 'postgresql://postgres@127.0.0.1:5432/selfstack',
      REDIS_URL: 'redis://127.0.0.1:6379/0',
      LOG_LEVEL: 'debug',
      HOST: '127.0.0.1',
      PORT: '0',
      MAX_REQUEST_BYTES: '1024',
      SECRETS_DEV_MODE: 'TRUE',
      SHUTDOWN_WAIT: '1m30s',
      API_ADDR: 'https://vault.example',
    });
    expect(cfg.DATABASE_URL).toBe('postgresql://postgres@127.0.0.1:5432/selfstack');
    expect(cfg.REDIS_URL).toBe('redis://127.0.0.1:6379/0');
    expect(cfg.PORT).toBe(0);
    expect(cfg.MAX_REQUEST_BYTES).toBe(1024);
    expect(cfg.SECRETS_DEV_MODE).toBe(true);
    expect(cfg.SHUTDOWN_WAIT).toBe(90_000);
  });

  it('treats empty strings as unset', () => {
    const cfg = loadEnv(schema, { DATABASE_URL: '', REDIS_URL: ' ', PORT: '', API_ADDR: 'http://x' });
    expect(cfg.DATABASE_URL).toBeUndefined();
    expect(cfg.REDIS_URL).toBeUndefined();
    expect(cfg.PORT).toBe(8200);
  });

  it('names every problem at once', () => {
    let caught: unknown;
    try {
      loadEnv(schema, {
        DATABASE_URL: 'mysql://db/x',
        REDIS_URL: 'not a url',
        LOG_LEVEL: 'loud',
        PORT: '70000',
        MAX_REQUEST_BYTES: '12kb',
        SECRETS_DEV_MODE: 'maybe',
        SHUTDOWN_WAIT: 'soon',
      });
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ConfigError);
    const err = caught as ConfigError;
    const where = err.problems.map((p) => p.where).sort();
    expect(where).toEqual(
      ['API_ADDR', 'DATABASE_URL', 'LOG_LEVEL', 'MAX_REQUEST_BYTES', 'PORT', 'REDIS_URL', 'SECRETS_DEV_MODE', 'SHUTDOWN_WAIT'].sort(),
    );
    expect(err.message).toMatch(/invalid configuration \(8 problems\)/);
    expect(err.message).toMatch(/API_ADDR: is required but not set/);
    expect(err.message).toMatch(/DATABASE_URL: must be a URL with scheme postgres:\/\/ or postgresql:\/\//);
    expect(err.message).toMatch(/REDIS_URL: must be a URL with scheme redis:\/\/ or rediss:\/\//);
    expect(err.message).toMatch(/PORT: must be at most 65535/);
    expect(err.message).toMatch(/MAX_REQUEST_BYTES: must be a byte count/);
    expect(err.message).toMatch(/SECRETS_DEV_MODE: must be a boolean/);
    expect(err.message).toMatch(/SHUTDOWN_WAIT: invalid duration "soon"/);
    expect(err.message).toMatch(/LOG_LEVEL: /);
  });

  it('reports a single problem in the singular', () => {
    expect(() => loadEnv(schema, { API_ADDR: 'http://x', PORT: '-1' })).toThrow(/\(1 problem\):\n  - PORT: must be a port number/);
  });
});
