/**
 * The real server as a child process (`node --import tsx src/main.ts`), for the e2e tests that need
 * a process of its own: signals, several instances, databases that stop under it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
/** tsx compiles the app on start and migrations may run; the machine may be busy. */
export const START_TIMEOUT_MS = 180_000;
/** The tail of the output kept for failure messages. */
const OUTPUT_KEPT = 200_000;

export type ServerProcess = {
  proc: ChildProcess;
  baseUrl: string;
  port: number;
  /** The tail of what the process wrote to stdout and stderr. */
  output: () => string;
  /** Calls `listener` with every later line the process writes to stdout. */
  onLine: (listener: (line: string) => void) => void;
  /** The exit code, or the signal that ended it. */
  exit: Promise<number | string>;
};

/** One JSON log line, or null when the line is not JSON. */
export function parseLogLine(line: string): Record<string, unknown> | null {
  try {
    return JSON.parse(line) as Record<string, unknown>;
  } catch {
    return null;
  }
}

/**
 * Starts the server with a clean environment (only `env` and what it needs to run: nothing of this
 * process's environment leaks into its config) on a free port; resolves once it logs "listening"
 * and /readyz answers 200. A server that fails to start is killed, never left behind.
 */
export async function startServer(env: Record<string, string>): Promise<ServerProcess> {
  const proc = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      NODE_ENV: 'production',
      HOST: '127.0.0.1',
      PORT: '0', // the OS picks a free port; the "listening" log line names it
      LOG_LEVEL: 'info',
      RATE_LIMITS: 'on',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (text: string) => void (output = (output + text).slice(-OUTPUT_KEPT));
  const listeners: ((line: string) => void)[] = [];
  let pending = '';
  proc.stdout!.on('data', (chunk: Buffer) => {
    keep(chunk.toString());
    const parts = (pending + chunk.toString()).split('\n');
    pending = parts.pop()!;
    for (const line of parts) for (const listener of listeners) listener(line);
  });
  proc.stderr!.on('data', (chunk: Buffer) => keep(chunk.toString()));
  const exit = new Promise<number | string>((resolve) => proc.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')));
  try {
    const baseUrl = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`server did not listen in time:\n${output}`)), START_TIMEOUT_MS);
      listeners.push((line) => {
        const entry = parseLogLine(line);
        if (entry?.msg === 'listening') (clearTimeout(timer), resolve(entry.baseUrl as string));
      });
      void exit.then((code) => (clearTimeout(timer), reject(new Error(`server exited (${code}) before listening:\n${output}`))));
    });
    const deadline = Date.now() + START_TIMEOUT_MS;
    while ((await fetch(`${baseUrl}/readyz`).then((r) => r.status, () => 0)) !== 200) {
      if (Date.now() > deadline) throw new Error(`server never became ready:\n${output}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    const onLine = (listener: (line: string) => void) => void listeners.push(listener);
    return { proc, baseUrl, port: Number(new URL(baseUrl).port), output: () => output, onLine, exit };
  } catch (error) {
    proc.kill('SIGKILL'); // never leave a half-started server behind
    throw error;
  }
}

/** Kills the process (if it still runs) and waits for its exit. */
export async function stopServer(server: ServerProcess | undefined): Promise<void> {
  if (!server || server.proc.exitCode !== null || server.proc.signalCode !== null) return;
  server.proc.kill('SIGKILL');
  await server.exit;
}
