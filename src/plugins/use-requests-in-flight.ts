import type { Plugin } from 'graphql-yoga';
import { requestsInFlight } from '../http/requests-in-flight.js';

/**
 * Counts each request from its arrival to its answer (a stream's headers: a subscription is not
 * counted while it lasts) in the process's requestsInFlight, which background work waits on
 * (src/http/requests-in-flight.ts). First among the plugins, so a request another one answers early counts too.
 */
export function useRequestsInFlight(): Plugin {
  const leaving = new WeakMap<Request, () => void>();
  return {
    onRequest: ({ request }) => void leaving.set(request, requestsInFlight.enter()),
    onResponse: ({ request }) => {
      leaving.get(request)?.();
      leaving.delete(request);
    },
  };
}
