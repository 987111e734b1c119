// The part of autocannon's programmatic API (v8) that bench/ uses; the package ships
// no type declarations.
declare module 'autocannon' {
  interface AutocannonRequest {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string;
    /**
     * Called before each send of this request; returns what to send. With `workers`, the
     * path of a CommonJS module exporting that function (loaded in the worker thread).
     */
    setupRequest?: ((req: AutocannonRequest, context: Record<string, unknown>) => AutocannonRequest) | string;
    /** Other members are passed through to setupRequest. */
    [extra: string]: unknown;
  }
  interface AutocannonOptions {
    url: string;
    connections?: number;
    duration?: number;
    pipelining?: number;
    /** Worker threads sending the load (connections are split between them). */
    workers?: number;
    /** A run before the measured one, not recorded. */
    warmup?: { connections?: number; duration?: number };
    method?: string;
    headers?: Record<string, string>;
    body?: string;
    requests?: AutocannonRequest[];
  }
  interface Histogram {
    average: number;
    mean: number;
    stddev: number;
    min: number;
    max: number;
    p50: number;
    p90: number;
    p99: number;
    total: number;
  }
  interface AutocannonResult {
    requests: Histogram;
    latency: Histogram;
    throughput: Histogram;
    errors: number;
    timeouts: number;
    non2xx: number;
    duration: number;
  }
  function autocannon(options: AutocannonOptions): Promise<AutocannonResult>;
  export = autocannon;
}
