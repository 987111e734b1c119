// Preloaded into the server of the scheduler-event-stream scenario (node --import): writes
// one JSON line to fd 3 (a pipe the scenario opened) every 500 ms with process.memoryUsage()
// and `heapAfterGc`, the heap used as measured right after the latest full (mark-sweep) GC
// (what is still retained, not yet-to-be-collected garbage). On an unref'd timer so it never
// keeps the process alive; without fd 3 it does nothing.
import { createWriteStream, fstatSync } from 'node:fs';
import { PerformanceObserver, constants } from 'node:perf_hooks';

let usable = false;
try {
  const st = fstatSync(3);
  usable = st.isFIFO() || st.isSocket();
} catch {
  usable = false;
}
if (usable) {
  let heapAfterGc = null;
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      if (entry.detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) heapAfterGc = process.memoryUsage().heapUsed;
    }
  }).observe({ entryTypes: ['gc'] });
  const out = createWriteStream('', { fd: 3 });
  const timer = setInterval(() => out.write(`${JSON.stringify({ ...process.memoryUsage(), heapAfterGc })}\n`), 500);
  timer.unref();
  out.on('error', () => clearInterval(timer));
}
