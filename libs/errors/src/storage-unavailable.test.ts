// The classifier on the shapes node-postgres and Prisma 7 (@prisma/adapter-pg) produce;
// libs/db/test/unavailable.itest.ts checks the same against real errors of a real server.
import { StorageUnavailableError, isStorageUnavailable, renderError, toAppError } from './index';

const withCode = (message: string, code: string): Error => Object.assign(new Error(message), { code });
// What PrismaClientKnownRequestError carries for a driver adapter failure.
const prismaError = (code: string, cause: Record<string, unknown>): Error =>
  Object.assign(new Error('Invalid `prisma.box.create()` invocation'), { name: 'PrismaClientKnownRequestError', code, meta: { driverAdapterError: Object.assign(new Error(String(cause.kind)), { name: 'DriverAdapterError', cause }) } });

describe('isStorageUnavailable', () => {
  it.each([
    ['a refused connection', withCode('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED')],
    ['a reset connection', withCode('read ECONNRESET', 'ECONNRESET')],
    ['every address refused (AggregateError)', Object.assign(new AggregateError([withCode('connect ECONNREFUSED ::1:5432', 'ECONNREFUSED')], 'connect failed'), { code: undefined })],
    ['admin_shutdown (a restart)', withCode('terminating connection due to administrator command', '57P01')],
    ['cannot_connect_now (starting up)', withCode('the database system is starting up', '57P03')],
    ['too_many_connections', withCode('sorry, too many clients already', '53300')],
    ['a connection exception (class 08)', withCode('connection failure', '08006')],
    ['a connection that ended under a query', new Error('Connection terminated unexpectedly')],
    ['a client used after its connection failed', new Error('Client has encountered a connection error and is not queryable')],
    ["the pool's connection timeout", new Error('timeout exceeded when trying to connect')],
    ['Prisma: not reachable', prismaError('P2010', { kind: 'DatabaseNotReachable', host: '127.0.0.1', port: 5432 })],
    ['Prisma: connection closed', prismaError('P2010', { kind: 'ConnectionClosed' })],
    ['Prisma: a SQLSTATE of a restart', prismaError('P2010', { kind: 'postgres', code: '57P01', originalCode: '57P01', originalMessage: 'terminating connection due to administrator command' })],
    ["Prisma: can't reach the server", Object.assign(new Error("Can't reach database server"), { code: 'P1001' })],
    ['Prisma: pool timeout', Object.assign(new Error('Timed out fetching a new connection from the connection pool'), { code: 'P2024' })],
    ['wrapped as a cause', new Error('loading the box failed', { cause: withCode('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED') })],
  ])('%s: yes', (_what, err) => {
    expect(isStorageUnavailable(err)).toBe(true);
  });

  it.each([
    ['a unique violation', withCode('duplicate key value violates unique constraint "boxes_pkey"', '23505')],
    ['a cancelled statement (statement timeout)', withCode('canceling statement due to statement timeout', '57014')],
    ['a serialization failure', withCode('could not serialize access', '40001')],
    ['Prisma: a unique violation', prismaError('P2002', { kind: 'UniqueConstraintViolation', constraint: { fields: ['name'] } })],
    ['Prisma: access denied', prismaError('P1010', { kind: 'DatabaseAccessDenied', originalCode: '28000' })],
    ['a plain error', new Error('boom')],
    ['a coded error whose message looks like a connection loss', withCode('Connection terminated by the handler', 'ERR_HANDLER')],
    ['not an error', 'ECONNREFUSED'],
    ['null', null],
  ])('%s: no', (_what, err) => {
    expect(isStorageUnavailable(err)).toBe(false);
  });

  it('terminates on cyclic causes', () => {
    const a = new Error('a');
    const b = new Error('b', { cause: a });
    Object.assign(a, { cause: b });
    expect(isStorageUnavailable(a)).toBe(false);
  });
});

describe('an unreachable storage backend, rendered', () => {
  const refused = withCode('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED');

  it('is a 503 with Retry-After, the cause kept for the log', () => {
    const err = toAppError(refused, 'vault');
    expect(err).toBeInstanceOf(StorageUnavailableError);
    expect(err.status).toBe(503);
    expect(err.cause).toBe(refused);
  });

  it.each([
    ['vault', { 'Content-Type': 'application/json', 'Cache-Control': 'no-store', 'Retry-After': '1' }, '{"errors":["a storage backend cannot be reached; retry later (request id r7)"]}\n'],
    ['registry', { 'Content-Type': 'application/json', 'Retry-After': '1' }, '{"errors":["a storage backend cannot be reached; retry later (request id r7)"]}'],
    ['boxes', { 'Content-Type': 'application/json', 'Retry-After': '1' }, '{"errors":["a storage backend cannot be reached; retry later (request id r7)"],"success":false}'],
    ['nomad', { 'Content-Type': 'text/plain; charset=utf-8', 'Retry-After': '1' }, 'a storage backend cannot be reached; retry later (request id r7)'],
  ] as const)('%s: in its own shape, naming the request id', (flavour, headers, body) => {
    expect(renderError(flavour, refused, 'r7')).toEqual({ status: 503, headers, body });
  });

  it('an error the code did not classify stays an unexposed 500', () => {
    expect(renderError('registry', new Error('boom'), 'r8')).toEqual({ status: 500, headers: { 'Content-Type': 'application/json' }, body: '{"errors":["internal error (request id r8)"]}' });
  });
});
