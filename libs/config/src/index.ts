export { ConfigError, type ConfigProblem } from './config-error';
export {
  loadEnv,
  sharedEnv,
  databaseUrlEnv,
  redisUrlEnv,
  logLevelEnv,
  hostEnv,
  portEnv,
  maxRequestBytesEnv,
  booleanEnv,
  durationEnv,
  integerEnv,
  optionalEnv,
  emptyToUndefined,
  LOG_LEVELS,
  DEFAULT_MAX_REQUEST_BYTES,
  type EnvSource,
} from './env';
export { parseHcl, loadHclFile, validateHcl, HclParseError, type HclDocument, type HclDiagnostic } from './hcl';
export { parseDuration, type DurationOptions } from './duration';
export { parseGoBool } from './go-bool';
