// The query conventions every read shares (spec: "Query parameters common to endpoints";
// reference §0.1-0.3), parsed in one place (query.parser.ts) and answered through one
// header writer (query.headers.ts).

export interface QueryOptions {
  /** Target region; the server's own unless `region=` says otherwise. */
  region: string;
  /** Target namespace (`default` when absent). `*` sets allNamespaces. */
  namespace: string;
  allNamespaces: boolean;
  /** Blocking: wait for an index greater than this (0 = answer at once). */
  minIndex: number;
  /** Blocking: maximum wait in ms (default 5 min, capped at 10 min; jitter added by the state store). */
  waitMs: number;
  stale: boolean;
  pretty: boolean;
  prefix: string;
  filter: string;
  /** 0 = not paginated. */
  perPage: number;
  nextToken: string;
  reverse: boolean;
}

/** What a read reports in its headers (Nomad's QueryMeta). */
export interface QueryMeta {
  index: number;
  lastContactMs: number;
  knownLeader: boolean;
  nextToken: string;
}

export const DEFAULT_WAIT_MS = 5 * 60_000;
export const MAX_WAIT_MS = 10 * 60_000;
