// One 'close' listener per response, however many parts of the kit want to know when it
// closed (the listener's bookkeeping, the request log and metrics, the dispatcher's abort
// signal). Each `res.once('close', fn)` costs a wrapper, an emit through it and a removal
// on every response; with 1,000 woken blocking queries answered in one burst that was
// ~7 ms of the burst (docs/scheduler.md, "Benchmarks", seventh round).
import type { ServerResponse } from 'node:http';

const HOOKS = Symbol('selfstack.responseCloseHooks');

// undefined: nothing registered yet; null: closed (hooks ran).
type Hooked = ServerResponse & { [HOOKS]?: Array<() => void> | null };

// Shared by every response (no closure per response); 'close' is emitted once.
function runHooks(this: Hooked): void {
  const hooks = this[HOOKS];
  this[HOOKS] = null;
  if (!hooks) return;
  for (let i = 0; i < hooks.length; i++) (hooks[i] as () => void)();
}

/**
 * Runs `fn` when `res` emits 'close', after the hooks registered before it. Registered after
 * the close, it never runs (as a 'close' listener added then would not).
 */
export function onResponseClose(res: ServerResponse, fn: () => void): void {
  const r = res as Hooked;
  const hooks = r[HOOKS];
  if (hooks) hooks.push(fn);
  else if (hooks === undefined) {
    r[HOOKS] = [fn];
    res.on('close', runHooks);
  }
}
