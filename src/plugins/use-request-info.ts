import { getOperationAST } from 'graphql/index.js';
import type { Plugin } from 'graphql-yoga';
import type { Context } from '../context.js';
import { requestInfo, routeMatcher } from '../observability/request-info.js';

/**
 * Fills RequestInfo: the start time (before any other plugin runs), the operation name, and who
 * asked for which account, seen through the context's own viewer()/role()/charge() (so nothing
 * extra is resolved for logging).
 */
export function useRequestInfo(paths: readonly string[]): Plugin<Context> {
  const routeOf = routeMatcher(paths);
  return {
    instrumentation: {
      request: ({ request }, wrapped) => {
        requestInfo(request).route = routeOf(new URL(request.url).pathname);
        return wrapped();
      },
    },
    onContextBuilding: () => ({ context, extendContext }) => {
      if (!context.request || typeof context.viewer !== 'function') return;
      const info = requestInfo(context.request);
      const { viewer, role, charge } = context;
      const watchedViewer: Context['viewer'] = () => {
        const promise = viewer();
        promise.then((v) => (v.apiKey ? (info.apiKeyId = v.id) : (info.userId = v.id)), () => {});
        return promise;
      };
      extendContext({
        viewer: watchedViewer,
        role: async (accountId) => {
          info.accountId ??= accountId;
          const found = await role(accountId);
          await watchedViewer(); // role() resolved it already: this only records who
          return found;
        },
        charge: async (rule, identity) => {
          try {
            return await charge(rule, identity);
          } catch (error) {
            if ((error as { extensions?: { code?: unknown } }).extensions?.code === 'RATE_LIMITED') info.rateLimited.push(rule.name);
            throw error;
          }
        },
      });
    },
    onExecute: ({ args }) => {
      const request = (args.contextValue as Partial<Context>).request;
      if (!request) return;
      const name = getOperationAST(args.document, args.operationName)?.name?.value;
      requestInfo(request).operation = name ? name.slice(0, 100) : 'anonymous'; // a client picks /graphql names
    },
  };
}
