import { createMemoryBus } from '../src';
import { describeBusContract } from './bus-contract';

const silent = { debug: () => undefined, warn: () => undefined, error: () => undefined };

describeBusContract('memory', () => createMemoryBus({ logger: silent }));
