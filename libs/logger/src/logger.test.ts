import { PassThrough } from 'node:stream';
import winston from 'winston';
import { REDACTED, createLogger, redact, writeInfoRecord } from './index';

describe('redact', () => {
  it('redacts sensitive keys case-insensitively at any depth, arrays included', () => {
    const input = {
      user: 'alice',
      Password: 'hunter2',
      headers: { 'X-Vault-Token': 'hvs.abc', 'x-secrets-token': 's', 'X-Nomad-Token': 'n', 'x-scheduler-token': 'q', authorization: 'Bearer t', Cookie: 'c=1', accept: 'json' },
      auth: { client_token: 'hvs.def', policies: ['default'] },
      items: [{ secret_id: 'x', name: 'n' }, { nested: [{ api_key: 'k', ok: 1 }] }],
      keys: ['unseal1', 'unseal2'],
    };
    expect(redact(input)).toEqual({
      user: 'alice',
      Password: REDACTED,
      headers: { 'X-Vault-Token': REDACTED, 'x-secrets-token': REDACTED, 'X-Nomad-Token': REDACTED, 'x-scheduler-token': REDACTED, authorization: REDACTED, Cookie: REDACTED, accept: 'json' },
      auth: { client_token: REDACTED, policies: ['default'] },
      items: [{ secret_id: REDACTED, name: 'n' }, { nested: [{ api_key: REDACTED, ok: 1 }] }],
      keys: REDACTED,
    });
  });

  it('never mutates the input and survives cycles', () => {
    const headers: Record<string, unknown> = { authorization: 'Bearer t' };
    headers.self = headers;
    const out = redact({ headers });
    expect(headers.authorization).toBe('Bearer t');
    expect(out).toEqual({ headers: { authorization: REDACTED, self: '[Circular]' } });
  });
});

describe('createLogger', () => {
  function capture(level?: 'debug' | 'info') {
    const stream = new PassThrough();
    const chunks: string[] = [];
    stream.on('data', (d: Buffer) => chunks.push(d.toString()));
    const logger = createLogger({ service: 'secrets', destination: stream, batchMs: 0, ...(level ? { level } : {}) });
    return { logger, chunks };
  }

  it('writes one JSON object per line with service, level, message and timestamp, redacted', async () => {
    const { logger, chunks } = capture();
    const headers = { 'x-vault-token': 'hvs.live', 'user-agent': 'curl' };
    logger.info('request', { request_id: 'r1', headers, body: { password: 'p', data: [{ token: 't' }] } });
    logger.warn('second');
    await new Promise((r) => setImmediate(r));
    const text = chunks.join('');
    expect(text.endsWith('\n')).toBe(true);
    const lines = text.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toEqual({
      level: 'info',
      message: 'request',
      service: 'secrets',
      timestamp: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
      request_id: 'r1',
      headers: { 'x-vault-token': REDACTED, 'user-agent': 'curl' },
      body: { password: REDACTED, data: [{ token: REDACTED }] },
    });
    expect(lines[1]).toMatchObject({ level: 'warn', message: 'second', service: 'secrets' });
    expect(text).not.toContain('hvs.live');
    expect(headers['x-vault-token']).toBe('hvs.live');
  });

  it('redacts top-level meta keys and logs Error objects with their message', async () => {
    const { logger, chunks } = capture();
    logger.error('failed', { token: 'abc', err: new Error('boom') });
    await new Promise((r) => setImmediate(r));
    const line = JSON.parse(chunks.join('')) as Record<string, unknown>;
    expect(line.token).toBe(REDACTED);
    expect(line.err).toMatchObject({ name: 'Error', message: 'boom' });
  });

  it('still feeds transports added later (winston path), and child loggers', async () => {
    const { logger, chunks } = capture();
    const extra = new PassThrough();
    const extraChunks: string[] = [];
    extra.on('data', (d: Buffer) => extraChunks.push(d.toString()));
    logger.child({ request_id: 'c1' }).info('from child');
    logger.add(new winston.transports.Stream({ stream: extra }));
    logger.info('both', { password: 'p' });
    await new Promise((r) => setImmediate(r));
    const lines = chunks.join('').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines).toEqual([
      expect.objectContaining({ message: 'from child', request_id: 'c1', service: 'secrets' }),
      expect.objectContaining({ message: 'both', password: REDACTED }),
    ]);
    expect(JSON.parse(extraChunks.join(''))).toMatchObject({ message: 'both', password: REDACTED });
  });

  it('serialises BigInt values instead of dropping the line', async () => {
    const { logger, chunks } = capture();
    logger.info('big', { index: 10n });
    await new Promise((r) => setImmediate(r));
    expect(JSON.parse(chunks.join(''))).toMatchObject({ message: 'big', index: '10' });
  });

  it('honours level and silent', async () => {
    const { logger, chunks } = capture('info');
    logger.debug('hidden');
    await new Promise((r) => setImmediate(r));
    expect(chunks).toEqual([]);
    logger.level = 'debug';
    logger.debug('shown');
    logger.silent = true;
    logger.error('muted');
    await new Promise((r) => setImmediate(r));
    expect(chunks.join('')).toContain('"message":"shown"');
    expect(chunks.join('')).not.toContain('muted');
    const stream = new PassThrough();
    const seen: string[] = [];
    stream.on('data', (d: Buffer) => seen.push(d.toString()));
    createLogger({ service: 's', silent: true, destination: stream, batchMs: 0 }).error('nothing');
    await new Promise((r) => setImmediate(r));
    expect(seen).toEqual([]);
  });

  it.each([0, 15])('writes the lines of a batch together, in order, and an error at once (batchMs %i)', async (batchMs) => {
    const writes: string[] = [];
    const destination = new PassThrough();
    destination.write = ((chunk: string) => {
      writes.push(chunk);
      return true;
    }) as typeof destination.write;
    const logger = createLogger({ service: 'kit', destination, batchMs });
    const batchEnd = () => new Promise((r) => (batchMs > 0 ? setTimeout(r, batchMs + 5) : setImmediate(r)));
    logger.info('request', { n: 1 });
    logger.info('request', { n: 2 });
    logger.child({ request_id: 'r' }).info('request', { n: 3 });
    // Nothing written during the turn (no write per request) ...
    expect(writes).toEqual([]);
    if (batchMs > 0) {
      await new Promise((r) => setImmediate(r));
      logger.info('request', { n: 3.5 });
      expect(writes).toEqual([]);
    }
    await batchEnd();
    // ... then one write with the batch's lines, in order.
    expect(writes).toHaveLength(1);
    expect(writes[0]!.trim().split('\n').map((l) => (JSON.parse(l) as { n: number }).n)).toEqual(batchMs > 0 ? [1, 2, 3, 3.5] : [1, 2, 3]);

    logger.info('request', { n: 4 });
    logger.error('failed', { n: 5 });
    // An error goes out at once, after what was pending before it.
    expect(writes).toHaveLength(2);
    expect(writes[1]!.trim().split('\n').map((l) => (JSON.parse(l) as { n: number }).n)).toEqual([4, 5]);
    await batchEnd();
    expect(writes).toHaveLength(2);
  });

  it('writeInfoRecord writes the line logger.info writes (same keys and values), in the same batch and order', async () => {
    const { logger, chunks } = capture();
    const fields = { method: 'GET', route: '/v1/x', status: 200, duration_ms: 1.5, request_id: 'r"1', bytes: null, aborted: true };
    logger.info('request', { ...fields });
    writeInfoRecord(logger, 'request', fields);
    logger.warn('after');
    await new Promise((r) => setImmediate(r));
    const lines = chunks.join('').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines).toHaveLength(3);
    // Equal but for the timestamp (the two lines may fall in different milliseconds).
    expect({ ...lines[1], timestamp: null }).toEqual({ ...lines[0], timestamp: null });
    expect(lines[1]).toEqual({ service: 'secrets', level: 'info', message: 'request', timestamp: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/), ...fields });
    expect(lines[2]).toMatchObject({ message: 'after' });
  });

  it('writeInfoRecord honours level and silent, and takes winston\'s path once the logger has another transport', async () => {
    const { logger, chunks } = capture();
    logger.level = 'warn';
    writeInfoRecord(logger, 'request', { n: 1 });
    logger.level = 'info';
    logger.silent = true;
    writeInfoRecord(logger, 'request', { n: 2 });
    logger.silent = false;
    await new Promise((r) => setImmediate(r));
    expect(chunks).toEqual([]);
    const extra = new PassThrough();
    const extraChunks: string[] = [];
    extra.on('data', (d: Buffer) => extraChunks.push(d.toString()));
    logger.add(new winston.transports.Stream({ stream: extra }));
    writeInfoRecord(logger, 'request', { n: 3 });
    await new Promise((r) => setImmediate(r));
    expect(JSON.parse(chunks.join(''))).toMatchObject({ message: 'request', n: 3 });
    expect(JSON.parse(extraChunks.join(''))).toMatchObject({ message: 'request', n: 3 });
    // Not a createLogger logger: winston's own path.
    const plainChunks: string[] = [];
    const plain = winston.createLogger({ transports: [new winston.transports.Stream({ stream: new PassThrough().on('data', (d: Buffer) => plainChunks.push(d.toString())) })], format: winston.format.json() });
    writeInfoRecord(plain, 'request', { n: 4 });
    await new Promise((r) => setImmediate(r));
    expect(JSON.parse(plainChunks.join(''))).toMatchObject({ message: 'request', n: 4 });
  });
});
