import { createMemoryBus } from '@selfstack/bus';
import { describeStateStoreContract, silentLogger } from './state-contract';

describeStateStoreContract('memory', () => createMemoryBus({ logger: silentLogger }));
