// Fixed-port stacks for the infra tests (make dev, the bundles): every port free and below
// the ephemeral range (see libs/testing/src/ports.ts for why).
import { EPHEMERAL_PORT_START, FETCH_BLOCKED_PORTS, isPortFree } from '@selfstack/testing';
import { DEFAULT_PORTS, portsWithOffset, type PortMap } from '../../scripts/dev-services';

export { freePortBelowEphemeral } from '@selfstack/testing';

/** A DEV_PORT_OFFSET (multiple of 100) whose shifted default ports (all, or `only`) are free, below the ephemeral range and not refused by fetch. */
export async function freeDevPortOffset(only?: readonly (keyof PortMap)[]): Promise<number> {
  const keys = only ?? (Object.keys(DEFAULT_PORTS) as (keyof PortMap)[]);
  const highest = Math.max(...keys.map((k) => DEFAULT_PORTS[k]));
  const slots = Math.floor((EPHEMERAL_PORT_START - 1 - highest - 1000) / 100);
  for (let attempt = 0; attempt < 50; attempt++) {
    const offset = 1000 + Math.floor(Math.random() * slots) * 100;
    const ports = portsWithOffset(offset);
    const free = await Promise.all(keys.map((k) => isPortFree(ports[k])));
    if (free.every(Boolean) && !keys.some((k) => FETCH_BLOCKED_PORTS.has(ports[k]))) return offset;
  }
  throw new Error('no free port offset below the ephemeral range');
}
