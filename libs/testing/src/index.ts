// @selfstack/testing: what every integration test uses (docs/architecture.md, "Tests").
export { createTestDatabase, uniqueTestDatabaseName, TEMPLATE_ENV_VAR, type TestDatabase, type CreateTestDatabaseOptions } from './database';
export { testRedisPrefix, deleteRedisKeys } from './redis';
export { startTestListener, type TestListener, type StartTestListenerOptions } from './listener';
export { buildFixture, type Overrides } from './fixture';
export {
  checkServices,
  checkPostgres,
  checkRedis,
  formatServicesMessage,
  ServicesUnavailableError,
  START_POSTGRES_COMMAND,
  START_REDIS_COMMAND,
  type ServiceStatus,
  type CheckServicesOptions,
} from './services';
export { testAdminDatabaseUrl, testRedisUrl, withDatabase, redactUrl, DEFAULT_TEST_DATABASE_URL, DEFAULT_TEST_REDIS_URL } from './env';
export { ensureTemplateDatabase, hashMigrationsDir, templateNameForHash, dropStaleDatabases, TEMPLATE_PREFIX, TEST_DATABASE_PREFIX } from './template';
export {
  buildCases,
  checkJsonErrors,
  rawRequest,
  runSweep,
  sweepRoutes,
  HOSTILE_GLOBS,
  HOSTILE_QUERIES,
  HOSTILE_SEGMENTS,
  WRONG_TYPE_VALUES,
  type CaseOptions,
  type SweepCase,
  type SweepOptions,
  type SweepResponse,
  type SweepResult,
  type SweepRoute,
} from './hostile-sweep';
export { MUST_REFUSE, hostileBodies, type BodyCaseOptions, type HostileBody, type HostileKind } from './hostile-bodies';
export { openBackendTerminator, type BackendTerminator } from './connection-loss';
export { EPHEMERAL_PORT_START, FETCH_BLOCKED_PORTS, freePortBelowEphemeral, isPortFree } from './ports';
export { waitFor } from './wait';
export { oldGenerationGrowthPer, runPromotionFixture, PROMOTION_NODE_FLAGS } from './promotion';
export {
  declaredRoutes,
  fillPattern,
  forAllowed,
  groupRows,
  matrixCells,
  matrixProblems,
  parseRouteKey,
  runAccessMatrix,
  type AccessBody,
  type AccessCell,
  type AccessCellInput,
  type AccessCellOverride,
  type AccessExpectations,
  type AccessMatrix,
  type AccessRow,
  type AccessRunOptions,
  type AccessRunResult,
  type PerCell,
} from './access-matrix';
