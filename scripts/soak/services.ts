/**
 * Private services for fault runs (npm run soak, test/faults): a PostgreSQL cluster made with initdb
 * in a temp dir on a free port, a redis-server on a free port, and the service as a child process.
 * The machine's own PostgreSQL (5432) and Redis (6379) are never touched: every port here is free
 * and never one of those, and every process is stopped by its own pid.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, readdirSync, readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const MACHINE_PORTS = new Set([5432, 6379]);

/** The newest PostgreSQL server binaries on this machine (Debian layout first, then PATH). */
export function postgresBin(): string | null {
  const base = '/usr/lib/postgresql';
  if (existsSync(base)) {
    const versions = readdirSync(base).filter((v) => existsSync(path.join(base, v, 'bin', 'initdb')));
    versions.sort((a, b) => Number(b) - Number(a));
    if (versions[0]) return path.join(base, versions[0], 'bin');
  }
  const found = spawnSync('sh', ['-c', 'command -v initdb'], { encoding: 'utf8' }).stdout.trim();
  return found ? path.dirname(found) : null;
}

export const redisBin = (): string | null =>
  spawnSync('sh', ['-c', 'command -v redis-server'], { encoding: 'utf8' }).stdout.trim() || null;

/** What a fault run needs that this machine lacks, or null. */
export function missingServices(): string | null {
  if (!postgresBin()) return 'PostgreSQL server binaries (initdb, pg_ctl)';
  if (!redisBin()) return 'redis-server';
  return null;
}

export async function freePort(): Promise<number> {
  for (;;) {
    const port = await new Promise<number>((resolve, reject) => {
      const server = net.createServer().once('error', reject);
      server.listen(0, '127.0.0.1', () => {
        const { port: p } = server.address() as net.AddressInfo;
        server.close(() => resolve(p));
      });
    });
    if (!MACHINE_PORTS.has(port)) return port;
  }
}

const AS_ROOT = process.getuid?.() === 0;

/** A PostgreSQL cluster of our own; PostgreSQL refuses to run as root, so its tools run as `postgres` then. */
export class PrivatePostgres {
  readonly data: string;
  private readonly bin: string;
  constructor(
    readonly dir: string,
    readonly port: number,
  ) {
    this.data = path.join(dir, 'data');
    const bin = postgresBin();
    if (!bin) throw new Error('PostgreSQL server binaries (initdb, pg_ctl) are not installed');
    this.bin = bin;
  }

  static async create(dir: string): Promise<PrivatePostgres> {
    const postgres = new PrivatePostgres(dir, await freePort());
    postgres.init();
    postgres.start();
    return postgres;
  }

  get url(): string {
    return `postgresql://postgres@127.0.0.1:${this.port}/postgres`;
  }

  private tool(name: string, args: string[]): { status: number | null; output: string } {
    const bin = path.join(this.bin, name);
    const [cmd, argv] = AS_ROOT ? ['runuser', ['-u', 'postgres', '--', bin, ...args]] : [bin, args];
    const r = spawnSync(cmd, argv, { encoding: 'utf8', timeout: 120_000 });
    return { status: r.status, output: `${r.stdout ?? ''}${r.stderr ?? ''}` };
  }

  init(): void {
    if (AS_ROOT) {
      const [uid, gid] = ['-u', '-g'].map((flag) => Number(spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' }).stdout.trim()));
      chownSync(this.dir, uid!, gid!);
    }
    const r = this.tool('initdb', ['-D', this.data, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--locale=C', '--no-sync']);
    if (r.status !== 0) throw new Error(`initdb failed:\n${r.output}`);
  }

  start(): void {
    const options = `-p ${this.port} -k ${this.dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=60`;
    const r = this.tool('pg_ctl', ['-D', this.data, '-l', path.join(this.dir, 'postgres.log'), '-o', options, '-w', '-t', '60', 'start']);
    if (r.status !== 0) throw new Error(`pg_ctl start failed:\n${r.output}`);
  }

  stop(mode: 'fast' | 'immediate' = 'fast'): { status: number | null; output: string } {
    return this.tool('pg_ctl', ['-D', this.data, '-m', mode, '-w', '-t', '60', 'stop']);
  }

  /** The postmaster and every backend it forked: what SIGSTOP must reach to freeze the whole server. */
  private pids(): number[] {
    const file = path.join(this.data, 'postmaster.pid');
    if (!existsSync(file)) return [];
    const main = Number(readFileSync(file, 'utf8').split('\n')[0]);
    const children = readdirSync('/proc')
      .filter((d) => /^\d+$/.test(d))
      .filter((d) => {
        try {
          // Field 4 of /proc/PID/stat is the parent pid (after the command in parentheses).
          const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
          return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === main;
        } catch {
          return false;
        }
      })
      .map(Number);
    return [main, ...children];
  }

  /** Freezes the server (every one of its processes stops running; sockets stay open). */
  freeze(): void {
    for (const pid of this.pids()) process.kill(pid, 'SIGSTOP');
  }

  thaw(): void {
    for (const pid of this.pids()) process.kill(pid, 'SIGCONT');
  }

  async query<T extends pg.QueryResultRow>(sql: string, params: unknown[] = [], database = 'postgres'): Promise<T[]> {
    const url = new URL(this.url);
    url.pathname = `/${database}`;
    const client = new pg.Client({ connectionString: url.toString() });
    await client.connect();
    try {
      return (await client.query<T>(sql, params)).rows;
    } finally {
      await client.end();
    }
  }
}

/** Whether a Redis on this loopback port answers PING (a raw RESP exchange: no client, no retries). */
export function redisAnswers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.setTimeout(5_000, () => (socket.destroy(), resolve(false)));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (d) => (socket.destroy(), resolve(d.toString().startsWith('+PONG'))));
    socket.once('error', () => resolve(false));
  });
}

export class PrivateRedis {
  proc: ChildProcess | null = null;
  constructor(readonly port: number) {}

  static async create(): Promise<PrivateRedis> {
    const redis = new PrivateRedis(await freePort());
    await redis.start();
    return redis;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    const bin = redisBin();
    if (!bin) throw new Error('redis-server is not installed');
    this.proc = spawn(bin, ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    const deadline = Date.now() + 20_000;
    while (!(await redisAnswers(this.port))) {
      if (Date.now() > deadline) throw new Error('private redis-server did not start');
      await sleep(100);
    }
  }

  /** An outage, not a polite shutdown: SIGKILL. */
  async stop(): Promise<void> {
    const proc = this.proc;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = new Promise((resolve) => proc.once('exit', resolve));
    proc.kill('SIGKILL');
    await exited;
    this.proc = null;
  }
}

export type ServerProcess = {
  proc: ChildProcess;
  baseUrl: string;
  output: () => string;
  onLine: (listener: (line: string) => void) => void;
  exit: Promise<number | string>;
};

export const parseJson = (line: string): Record<string, unknown> | null => {
  try {
    return JSON.parse(line) as Record<string, unknown>;
  } catch {
    return null;
  }
};

/**
 * The service (`node --import tsx [--import preload] src/main.ts`) with only the environment given
 * (nothing of this process's environment leaks into its config), on a port the OS picks; resolved
 * once it logs "listening", and with `ready` once /readyz answers 200. `preload` modules run inside
 * the server process (a busy loop). A server that fails to start is killed, never left behind.
 */
export async function startServer(
  env: Record<string, string>,
  { preload = [] as string[], startTimeoutMs = 180_000, ready = false } = {},
): Promise<ServerProcess> {
  const args = ['--import', 'tsx', ...preload.flatMap((p) => ['--import', p]), 'src/main.ts'];
  const proc = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', NODE_ENV: 'production', METRICS_TOKEN: 'harness-metrics-token-0123456789', HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (text: string) => void (output = (output + text).slice(-200_000)); // the tail explains a failure
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
  const server = { proc, baseUrl: '', output: () => output, onLine: (f: (line: string) => void) => void listeners.push(f), exit };
  try {
    server.baseUrl = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`server did not listen in time:\n${output}`)), startTimeoutMs);
      listeners.push((line) => {
        const entry = parseJson(line);
        if (entry?.msg === 'listening') (clearTimeout(timer), resolve(entry.baseUrl as string));
      });
      void exit.then((code) => (clearTimeout(timer), reject(new Error(`server exited (${code}) before listening:\n${output}`))));
    });
    if (ready) await untilReady(server, startTimeoutMs);
    return server;
  } catch (error) {
    proc.kill('SIGKILL'); // never leave a half-started server behind
    throw error;
  }
}

/** Polls /readyz until it answers 200 (migrations done, database reachable). */
async function untilReady(server: ServerProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while ((await fetch(`${server.baseUrl}/readyz`).then((r) => r.status, () => 0)) !== 200) {
    if (Date.now() > deadline) throw new Error(`server never became ready:\n${server.output()}`);
    await sleep(200);
  }
}

/** SIGKILL unless already gone; resolves once it has exited. */
export async function killServer(server: ServerProcess | undefined): Promise<void> {
  if (!server || server.proc.exitCode !== null || server.proc.signalCode !== null) return;
  server.proc.kill('SIGKILL');
  await server.exit;
}
