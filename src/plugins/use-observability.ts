import type { Plugin } from 'graphql-yoga';
import type { AppDeps } from '../deps.js';
import type { Context } from '../context.js';
import { createMetrics } from '../observability/metrics.js';
import type { KnownRoutes } from '../observability/request-info.js';
import { useRequestInfo } from './use-request-info.js';
import { useRequestLog } from './use-request-log.js';

/** Request logs and Prometheus metrics (GET /metrics) for one app instance: its own registry. */
export function useObservability(deps: AppDeps, known: KnownRoutes): Plugin<Context>[] {
  return [useRequestInfo(known.paths), useRequestLog(deps.log) as Plugin<Context>, createMetrics(deps, known.operations).plugin];
}

export type { KnownRoutes } from '../observability/request-info.js';
