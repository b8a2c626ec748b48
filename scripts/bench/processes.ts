// The two servers under test as child processes: started on a free port, ready when /healthz
// answers, stopped by their own pid. Their output goes to a log file (shown when one fails to start).
import { spawn, type ChildProcess } from 'node:child_process';
import { openSync, closeSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';

export type Server = { name: string; pid: number; baseUrl: string; logFile: string; stop(): Promise<void> };

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}

/** Only what the server needs: the caller's REDIS_URL, JWKS or NODE_OPTIONS must not leak into the run. */
export function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const name of ['PATH', 'HOME', 'LANG', 'TZ', 'TMPDIR']) if (process.env[name] !== undefined) env[name] = process.env[name];
  return { ...env, ...extra };
}

/**
 * The V8 flags `npm start` gives the service (package.json; docs/build-and-start.md), given to every
 * server the bench starts, so that each runs as the service runs in production and the floor and
 * PostGraphile with the same heap settings: the ratios then measure code, not configuration.
 */
export const NODE_FLAGS = ['--max-semi-space-size=32'];

export async function startServer(opts: {
  name: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
  logFile: string;
  readyTimeoutMs?: number;
}): Promise<Server> {
  const port = await freePort();
  const fd = openSync(opts.logFile, 'w');
  let child: ChildProcess;
  try {
    child = spawn(process.execPath, [...NODE_FLAGS, ...opts.args], {
      cwd: opts.cwd,
      env: cleanEnv({ ...opts.env, PORT: String(port), HOST: '127.0.0.1' }),
      stdio: ['ignore', fd, fd],
    });
  } finally {
    closeSync(fd);
  }
  let exited: number | null | undefined;
  const exit = new Promise<void>((resolve) => child.once('exit', (code, signal) => { exited = code ?? (signal ? -1 : 0); resolve(); }));
  const baseUrl = `http://127.0.0.1:${port}`;
  // 240 s, not 90: at load 20 (other sessions' tests on two cores) the service under tsx took longer than 90 s to listen.
  const deadline = Date.now() + (opts.readyTimeoutMs ?? 240_000);
  const server: Server = {
    name: opts.name,
    pid: child.pid!,
    baseUrl,
    logFile: opts.logFile,
    stop: async () => {
      if (exited !== undefined) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exit;
      clearTimeout(timer);
    },
  };
  for (;;) {
    if (exited !== undefined) throw new Error(`${opts.name} exited (${exited}) before it was ready:\n${tail(opts.logFile)}`);
    if (Date.now() > deadline) {
      await server.stop();
      throw new Error(`${opts.name} was not ready within ${(opts.readyTimeoutMs ?? 240_000) / 1000} s:\n${tail(opts.logFile)}`);
    }
    try {
      const response = await fetch(`${baseUrl}/healthz`, { signal: AbortSignal.timeout(2000) });
      await response.arrayBuffer();
      if (response.ok) return server;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

const tail = (file: string) => {
  try {
    return readFileSync(file, 'utf8').split('\n').slice(-30).join('\n');
  } catch {
    return '(no log)';
  }
};

/** Resident set size of a process, in bytes, from /proc (Linux). */
export function rssOf(pid: number): number | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = /VmRSS:\s+(\d+) kB/.exec(status)?.[1];
    return kb ? Number(kb) * 1024 : null;
  } catch {
    return null;
  }
}

/** Peak RSS since the last reset (VmHWM), or null where /proc does not say. */
export function peakRssOf(pid: number): number | null {
  try {
    const kb = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb ? Number(kb) * 1024 : null;
  } catch {
    return null;
  }
}

/** Resets the kernel's peak-RSS mark of `pid` to its current RSS (Linux ≥ 4.0); false when not allowed. */
export function resetPeakRss(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

/** Samples RSS every `everyMs` until stopped; the peak seen, also counting the kernel's own mark. */
export function sampleRss(pid: number, everyMs = 20) {
  const hwm = resetPeakRss(pid);
  const before = rssOf(pid) ?? 0;
  let peak = before;
  const timer = setInterval(() => {
    const now = rssOf(pid);
    if (now !== null && now > peak) peak = now;
  }, everyMs);
  return {
    before,
    stop(): { before: number; peak: number; source: 'VmHWM' | 'samples' } {
      clearInterval(timer);
      const mark = hwm ? peakRssOf(pid) : null;
      return { before, peak: Math.max(peak, mark ?? 0), source: mark !== null ? 'VmHWM' : 'samples' };
    },
  };
}
