/**
 * The real server as a child process, for the e2e tests that need a process of its own: signals,
 * several instances, databases that stop under it. The starter is the soak's (scripts/soak/services.ts);
 * here the limits are on and a server counts as started once /readyz answers.
 */
import { killServer, parseJson, ROOT, startServer as startService, type ServerProcess as Service } from '../../scripts/soak/services.js';

export { ROOT };
/** tsx compiles the app on start and migrations may run; the machine may be busy. */
export const START_TIMEOUT_MS = 180_000;

export type ServerProcess = Service & { port: number };

/** One JSON log line, or null when the line is not JSON. */
export const parseLogLine = parseJson;

/** Starts the server with `env` only (rate limits on unless `env` says otherwise), ready to serve. */
export async function startServer(env: Record<string, string>): Promise<ServerProcess> {
  const server = await startService({ RATE_LIMITS: 'on', ...env }, { startTimeoutMs: START_TIMEOUT_MS, ready: true });
  return { ...server, port: Number(new URL(server.baseUrl).port) };
}

/** Kills the process (if it still runs) and waits for its exit. */
export const stopServer = killServer;
