import type { Plugin } from 'graphql-yoga';
import type { AppDeps } from '../deps.js';
import type { Context } from '../context.js';
import { createMetrics } from './metrics.js';
import { useRequestInfo } from './request-info.js';
import { useRequestLog } from './request-log.js';

/** Request logs and Prometheus metrics (GET /metrics) for one app instance: its own registry. */
export function useObservability(deps: AppDeps): Plugin<Context>[] {
  return [useRequestInfo(), useRequestLog(deps.log) as Plugin<Context>, createMetrics(deps).plugin];
}
