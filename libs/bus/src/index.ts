export { type Bus, type BusListener, type BusLogger, BusClosedError, followChannel } from './bus';
export { createMemoryBus, type MemoryBusOptions } from './memory-bus';
export { createRedisBus, type RedisBus, type RedisBusOptions } from './redis-bus';
export { killRedisClientsByName } from './redis-admin';
export { createRefresher, type Refresher } from './refresher';
export { createCounterClient } from './counter-client';
