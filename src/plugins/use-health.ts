/**
 * GET /healthz (liveness) · GET /readyz (readiness: database answers, every migration folder is
 * applied, and not shutting down)
 */
import type { Plugin } from 'graphql-yoga';
import type { AppDeps } from '../deps.js';
import { migrationNames } from '../db/migrate.js';
import { Response } from '../http/response.js';

/** How long readiness waits for its query: a load balancer's probe must not hang with the database. */
export const READY_TIMEOUT_MS = 1_000;

/** Why an instance is not ready (logged once per change, never in the 503 body). */
type NotReady = 'database unreachable' | 'migrations not applied';
type Probe = { ready: true } | { ready: false; reason: NotReady; missing?: string[] };

// Keyed by the app's deps, so several apps in one process (tests) drain independently.
const draining = new WeakSet<AppDeps>();
const probes = new WeakMap<AppDeps, Promise<Probe>>();

/** From now on /readyz answers 503, so a load balancer stops sending new requests (graceful shutdown). */
export function startDraining(deps: AppDeps): void {
  draining.add(deps);
}

// One cheap query answers both "reachable" and "migrated"; the schema engine is never started here.
const APPLIED = 'SELECT migration_name FROM _prisma_migrations WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL';

/**
 * Ready when, within READY_TIMEOUT_MS, `_prisma_migrations` lists every folder of this build as
 * finished and not rolled back. Extra rows (a newer build migrated first) are fine. Concurrent
 * probes share one query.
 */
function probeDatabase(deps: AppDeps, expected: Promise<string[]>): Promise<Probe> {
  let probe = probes.get(deps);
  if (!probe) {
    let timer: NodeJS.Timeout | undefined;
    const unreachable: Probe = { ready: false, reason: 'database unreachable' };
    const query = Promise.all([expected, deps.db.prisma.$queryRawUnsafe<{ migration_name: string }[]>(APPLIED)]).then(
      ([names, rows]): Probe => {
        const applied = new Set(rows.map((row) => row.migration_name));
        const missing = names.filter((name) => !applied.has(name));
        return missing.length === 0 ? { ready: true } : { ready: false, reason: 'migrations not applied', missing };
      },
      // No table (never migrated) lands here too, like a refused connection: not ready either way.
      (): Probe => unreachable,
    );
    const deadline = new Promise<Probe>((resolve) => (timer = setTimeout(resolve, READY_TIMEOUT_MS, unreachable)));
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
 * database). Readiness also needs the database with this build's migrations applied, and turns 503
 * while draining. Redis is not checked: without it each instance limits in its own memory and still serves.
 */
export function useHealth(deps: AppDeps): Plugin {
  // Read once at start: the folder ships with the build and cannot change while it runs.
  const expected = migrationNames();
  expected.catch(() => {}); // a failure surfaces in the probe (not ready), not as an unhandled rejection
  let lastReason: NotReady | undefined;
  return {
    onRequest: async ({ request, url, endResponse }) => {
      if (url.pathname !== '/healthz' && url.pathname !== '/readyz') return;
      if (request.method !== 'GET' && request.method !== 'HEAD') {
        const refused = answer(405, { error: 'Method not allowed' }, request.method);
        refused.headers.set('Allow', 'GET, HEAD');
        return endResponse(refused);
      }
      if (url.pathname === '/healthz') return endResponse(answer(200, { status: 'ok' }, request.method));
      const probe = draining.has(deps) ? undefined : await probeDatabase(deps, expected);
      const ready = probe?.ready === true && !draining.has(deps);
      if (probe && !probe.ready && probe.reason !== lastReason) {
        deps.log.warn({ reason: probe.reason, missing: probe.missing }, 'not ready');
      }
      if (probe) lastReason = probe.ready ? undefined : probe.reason;
      endResponse(answer(ready ? 200 : 503, { status: ready ? 'ready' : 'unavailable' }, request.method));
    },
  };
}
