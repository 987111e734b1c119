import { formatServicesMessage, START_POSTGRES_COMMAND, START_REDIS_COMMAND } from './services';

describe('formatServicesMessage', () => {
  it('says how to start exactly the services that are down, without printing passwords', () => {
    const text = formatServicesMessage([
      { name: 'PostgreSQL', url: 'postgresql://app:s3cret@db:5432/x', ok: false, error: 'connect ECONNREFUSED' },
      { name: 'Redis', url: 'redis://127.0.0.1:6379', ok: true },
    ]);
    expect(text).toContain('PostgreSQL at postgresql://app:***@db:5432/x: NOT reachable (connect ECONNREFUSED)');
    expect(text).toContain('Redis at redis://127.0.0.1:6379: reachable');
    expect(text).toContain(START_POSTGRES_COMMAND);
    expect(text).not.toContain(START_REDIS_COMMAND);
    expect(text).not.toContain('s3cret');
  });

  it('has no start instructions when everything is up', () => {
    const text = formatServicesMessage([
      { name: 'PostgreSQL', url: 'postgresql://127.0.0.1/x', ok: true },
      { name: 'Redis', url: 'redis://127.0.0.1:6379', ok: true },
    ]);
    expect(text).not.toContain('Start them with');
  });
});
