export { OFFER_SLICE } from './event-hub';
export { createStateStore, type CreateStateStoreOptions, type StatePrismaClient, type StateStore, type WriteContext, type WriteOptions } from './state-store';
export { StateStoreClosedError, StateWriteTimeoutError } from './errors';
export { groupIntoFrames, type PruneEventsOptions } from './sql';
export type {
  BlockingQueryOptions,
  BlockingResult,
  EventFrame,
  EventTail,
  EventTailOptions,
  RawSqlClient,
  SqlStatement,
  StateEventInput,
  StateLogger,
  StoredEvent,
  WakeHint,
} from './types';
