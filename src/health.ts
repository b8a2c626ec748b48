/** GET /healthz (liveness) · GET /readyz (readiness: database answers and not shutting down) */
import type { Plugin } from 'graphql-yoga';
import type { AppDeps } from './app.js';

/** How long readiness waits for `SELECT 1`: a load balancer's probe must not hang with the database. */
export const READY_TIMEOUT_MS = 1_000;

// Keyed by the app's deps, so several apps in one process (tests) drain independently.
const draining = new WeakSet<AppDeps>();
const probes = new WeakMap<AppDeps, Promise<boolean>>();

/** From now on /readyz answers 503, so a load balancer stops sending new requests (graceful shutdown). */
export function startDraining(deps: AppDeps): void {
  draining.add(deps);
}

/** True when the database answers `SELECT 1` within READY_TIMEOUT_MS. Concurrent probes share one query. */
function databaseReady(deps: AppDeps): Promise<boolean> {
  let probe = probes.get(deps);
  if (!probe) {
    let timer: NodeJS.Timeout | undefined;
    const query = deps.db.prisma.$queryRaw`SELECT 1`.then(() => true, () => false);
    const deadline = new Promise<boolean>((resolve) => (timer = setTimeout(resolve, READY_TIMEOUT_MS, false)));
    probe = Promise.race([query, deadline]).finally(() => {
      clearTimeout(timer);
      probes.delete(deps);
    });
    probes.set(deps, probe);
  }
  return probe;
}

const answer = (status: number, body: object, method: string) =>
  new Response(method === 'HEAD' ? null : JSON.stringify(body), {
    status,
    headers: { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store' },
  });

/**
 * Liveness says the process serves HTTP (no dependency checked: restarting it would not fix the
 * database). Readiness also needs the database, and turns 503 while draining. Redis is not checked:
 * without it limits fail open and the instance still serves.
 */
export function useHealth(deps: AppDeps): Plugin {
  return {
    onRequest: async ({ request, url, endResponse }) => {
      if (url.pathname !== '/healthz' && url.pathname !== '/readyz') return;
      if (request.method !== 'GET' && request.method !== 'HEAD') {
        const refused = answer(405, { error: 'Method not allowed' }, request.method);
        refused.headers.set('Allow', 'GET, HEAD');
        return endResponse(refused);
      }
      if (url.pathname === '/healthz') return endResponse(answer(200, { status: 'ok' }, request.method));
      const ready = !draining.has(deps) && (await databaseReady(deps)) && !draining.has(deps);
      endResponse(answer(ready ? 200 : 503, { status: ready ? 'ready' : 'unavailable' }, request.method));
    },
  };
}
