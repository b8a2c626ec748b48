// The part of autocannon 9's programmatic API the bench uses (the package ships no types).
declare module 'autocannon' {
  type Request = { method?: string; path?: string; headers?: Record<string, string>; body?: string | Buffer };
  type Options = {
    url: string;
    connections?: number;
    duration?: number;
    method?: string;
    headers?: Record<string, string>;
    body?: string;
    timeout?: number;
    requests?: (Request & { setupRequest?: (request: Request, context: object) => Request })[];
    skipAggregateResult?: boolean;
  };
  type Histogram = { average: number; mean: number; stddev: number; min: number; max: number; total: number; p50: number; p90: number; p99: number };
  export type Result = {
    duration: number;
    requests: Histogram & { sent: number };
    latency: Histogram & { p97_5: number; p99_9: number };
    throughput: Histogram;
    errors: number;
    timeouts: number;
    non2xx: number;
    '2xx': number;
    statusCodeStats?: Record<string, { count: number }>;
  };
  /** A run with skipAggregateResult: encoded histograms, to be merged by aggregateResult. */
  export type RawResult = {
    duration: number;
    totalCompletedRequests: number;
    errors: number;
    timeouts: number;
    statusCodeStats: Record<string, { count: number }>;
  };
  function autocannon(options: Options): Promise<Result> & { stop(): void };
  namespace autocannon {
    function aggregateResult(results: RawResult[], options: { url: string; connections?: number }): Result;
  }
  export default autocannon;
}
