// The one header writer for reads and writes (reference §0.2 `setMeta`/`setIndex`). The
// spec's X-Scheduler-* names are primary; the anchor's X-Nomad-* names are emitted too so
// unmodified Nomad clients work.
import type { QueryMeta } from './query.types';

export function queryMetaHeaders(meta: QueryMeta): Record<string, string> {
  const h: Record<string, string> = {
    'X-Scheduler-Index': String(meta.index),
    'X-Scheduler-KnownLeader': String(meta.knownLeader),
    'X-Scheduler-LastContact': String(meta.lastContactMs),
    'X-Nomad-Index': String(meta.index),
    'X-Nomad-KnownLeader': String(meta.knownLeader),
    'X-Nomad-LastContact': String(meta.lastContactMs),
  };
  // Absent on the last page (spec "Pagination").
  if (meta.nextToken !== '') {
    h['X-Scheduler-Nexttoken'] = meta.nextToken;
    h['X-Nomad-Nexttoken'] = meta.nextToken;
  }
  return h;
}

/** Writes only carry the index (Nomad's setIndex). */
export function writeIndexHeaders(index: number): Record<string, string> {
  return { 'X-Scheduler-Index': String(index), 'X-Nomad-Index': String(index) };
}
