// Ports for processes a test spawns that must be told their port up front (a child
// process, a fixed-port config). A port the OS handed out (listen on 0) and released can be
// taken again by any outgoing connection of the tests running alongside before the child
// binds it; ports below the ephemeral range (Linux: 32768-60999) are never handed out that
// way, so a free one there stays free unless another test picks the same number.
import net from 'node:net';

export const EPHEMERAL_PORT_START = 32_768;

/**
 * Ports at or above 1024 that `fetch` refuses before connecting (the WHATWG Fetch "bad
 * ports" list). Tests pick around them, since many of them probe with fetch.
 */
export const FETCH_BLOCKED_PORTS: ReadonlySet<number> = new Set([1719, 1720, 1723, 2049, 3659, 4045, 4190, 5060, 5061, 6000, 6566, 6665, 6666, 6667, 6668, 6669, 6679, 6697, 10080]);

/** True when 127.0.0.1:`port` can be bound right now. */
export function isPortFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** A free TCP port on 127.0.0.1 in [10000, 30000), not one fetch refuses. */
export async function freePortBelowEphemeral(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = 10_000 + Math.floor(Math.random() * 20_000);
    if (!FETCH_BLOCKED_PORTS.has(port) && (await isPortFree(port))) return port;
  }
  throw new Error('no free port below the ephemeral range');
}
