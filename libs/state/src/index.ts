export { createStateStore, type CreateStateStoreOptions, type StatePrismaClient, type StateStore, type WriteContext } from './state-store';
export { StateStoreClosedError, StateWriteTimeoutError } from './errors';
export { groupIntoFrames, type PruneEventsOptions } from './sql';
export type {
  BlockingQueryOptions,
  BlockingResult,
  EventFrame,
  EventTail,
  EventTailOptions,
  RawSqlClient,
  StateEventInput,
  StateLogger,
  StoredEvent,
  WakeHint,
} from './types';
