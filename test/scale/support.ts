/**
 * What the scale tests run on: databases on the server of DATABASE_URL, private PostgreSQL
 * clusters (a primary and its standby, initdb/pg_basebackup in a temp dir on free ports), a private
 * PgBouncer, and the app as a real process. Never the machine's shared server for anything that
 * stops, pauses or reconfigures a database.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { chownSync, existsSync, readdirSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { MIGRATION_LOCK_KEY } from '../../src/db/migration-adapters.js';
import { freePort } from '../../scripts/soak/services.js';
import { skipIfMissing } from '../helpers/prerequisites.js';

export { freePort };

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const AS_ROOT = process.getuid?.() === 0;

/** skipIfMissing (CI fails instead), plus the one line saying what to install when it skips locally. */
export function skipWithout(missing: string | null, suite: string): boolean {
  const skip = skipIfMissing(missing);
  if (skip) console.warn(`${suite}: skipped, ${missing} missing on this machine`);
  return skip;
}

export const withDatabase = (url: string, name: string) => Object.assign(new URL(url), { pathname: `/${name}` }).toString();

export async function query<T extends pg.QueryResultRow = any>(url: string, sql: string, params: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(sql, params)).rows;
  } finally {
    await client.end();
  }
}

export async function createDatabase(serverUrl: string, prefix: string): Promise<string> {
  const name = `${prefix}_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
  await query(serverUrl, `CREATE DATABASE ${name}`);
  return name;
}

export const dropDatabase = (serverUrl: string, name: string) => query(serverUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);

/** Sessions holding the migration lock in this database, as pg_locks shows them. */
export const advisoryLocks = (url: string) =>
  query<{ pid: number; granted: boolean }>(
    url,
    `SELECT pid, granted FROM pg_locks WHERE locktype = 'advisory' AND classid = 0 AND objid = $1 AND objsubid = 1
     AND database = (SELECT oid FROM pg_database WHERE datname = current_database()) ORDER BY pid`,
    [MIGRATION_LOCK_KEY],
  );

// ---- binaries ------------------------------------------------------------------------------

/** The newest PostgreSQL server binaries on this machine (Debian layout first, then PATH). */
function postgresBin(): string | null {
  const base = '/usr/lib/postgresql';
  if (existsSync(base)) {
    const versions = readdirSync(base).filter((v) => existsSync(path.join(base, v, 'bin', 'pg_basebackup')));
    versions.sort((a, b) => Number(b) - Number(a));
    if (versions[0]) return path.join(base, versions[0], 'bin');
  }
  const found = spawnSync('sh', ['-c', 'command -v initdb'], { encoding: 'utf8' }).stdout.trim();
  return found ? path.dirname(found) : null;
}
const which = (name: string) => spawnSync('sh', ['-c', `command -v ${name} || ls /usr/sbin/${name} 2>/dev/null`], { encoding: 'utf8' }).stdout.trim().split('\n')[0] || null;

export const PG_BIN = postgresBin();
export const PGBOUNCER_BIN = which('pgbouncer');

/** PostgreSQL and PgBouncer refuse to run as root: run them as the `postgres` user then. */
function asServiceUser(bin: string, args: string[]): [string, string[]] {
  return AS_ROOT ? ['runuser', ['-u', 'postgres', '--', bin, ...args]] : [bin, args];
}
function giveToServiceUser(dir: string) {
  if (!AS_ROOT) return;
  const [uid, gid] = ['-u', '-g'].map((flag) => Number(spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' }).stdout.trim()));
  chownSync(dir, uid!, gid!);
}
function pgTool(tool: string, args: string[]): string {
  const [cmd, argv] = asServiceUser(path.join(PG_BIN!, tool), args);
  const r = spawnSync(cmd, argv, { encoding: 'utf8', timeout: 120_000 });
  const output = `${r.stdout ?? ''}${r.stderr ?? ''}`;
  if (r.status !== 0) throw new Error(`${tool} ${args.join(' ')} failed:\n${output}`);
  return output;
}


// ---- private PostgreSQL clusters -----------------------------------------------------------

export class Cluster {
  readonly data: string;
  constructor(readonly dir: string, readonly port: number) {
    this.data = path.join(dir, `data-${port}`);
  }
  url(database = 'postgres') {
    return `postgresql://postgres@127.0.0.1:${this.port}/${database}`;
  }
  /** A new primary; its default pg_hba trusts local replication connections. */
  static async primary(dir: string): Promise<Cluster> {
    giveToServiceUser(dir);
    const cluster = new Cluster(dir, await freePort());
    pgTool('initdb', ['-D', cluster.data, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--locale=C', '--no-sync']);
    cluster.start();
    return cluster;
  }
  /** A streaming standby of `primary` (pg_basebackup -R writes its primary_conninfo). */
  static async standbyOf(primary: Cluster): Promise<Cluster> {
    const cluster = new Cluster(primary.dir, await freePort());
    pgTool('pg_basebackup', ['-h', '127.0.0.1', '-p', String(primary.port), '-U', 'postgres', '-D', cluster.data, '-R', '-X', 'stream', '--checkpoint=fast', '--no-sync']);
    cluster.start();
    return cluster;
  }
  start() {
    const options = `-p ${this.port} -k ${this.dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=100`;
    pgTool('pg_ctl', ['-D', this.data, '-l', `${this.data}.log`, '-o', options, '-w', '-t', '60', 'start']);
  }
  stop(mode: 'fast' | 'immediate' = 'fast') {
    try {
      pgTool('pg_ctl', ['-D', this.data, '-m', mode, '-w', '-t', '60', 'stop']);
    } catch {
      // already stopped
    }
  }
}

// ---- a private PgBouncer -------------------------------------------------------------------

export class Pgbouncer {
  proc: ChildProcess | null = null;
  constructor(readonly dir: string, readonly port: number) {}
  url(database: string) {
    return `postgresql://postgres@127.0.0.1:${this.port}/${database}`;
  }
  /** Transaction pooling in front of `databases` (name -> server URL), as docs/scaling.md configures it, otherwise PgBouncer's defaults. */
  async start(databases: Record<string, string>, settings: Record<string, string | number> = {}) {
    const lines = Object.entries(databases).map(([name, url]) => {
      const u = new URL(url);
      return `${name} = host=${u.hostname} port=${u.port} dbname=${u.pathname.slice(1)} user=${u.username}`;
    });
    const config = {
      listen_addr: '127.0.0.1',
      listen_port: this.port,
      unix_socket_dir: '',
      auth_type: 'any', // the test servers trust local connections; production uses scram-sha-256
      pool_mode: 'transaction',
      max_client_conn: 500,
      default_pool_size: 20,
      // No ignore_startup_parameters: PgBouncer's default, which refuses any startup parameter it does not know.
      logfile: path.join(this.dir, `pgbouncer-${this.port}.log`),
      ...settings,
    };
    const file = path.join(this.dir, `pgbouncer-${this.port}.ini`);
    await writeFile(file, `[databases]\n${lines.join('\n')}\n[pgbouncer]\n${Object.entries(config).map(([k, v]) => `${k} = ${v}`).join('\n')}\n`);
    giveToServiceUser(this.dir);
    // Its own -u (not runuser), so the process spawned is PgBouncer itself and stop() reaches it.
    this.proc = spawn(PGBOUNCER_BIN!, AS_ROOT ? ['-u', 'postgres', file] : [file], { stdio: 'ignore' });
    for (let i = 0; i < 100; i++) {
      if (await query(this.url(Object.keys(databases)[0]!), 'SELECT 1').then(() => true, () => false)) return;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error('PgBouncer did not start');
  }
  stop() {
    this.proc?.kill('SIGTERM'); // immediate shutdown
  }
}

// ---- the app as a process ------------------------------------------------------------------

export type ServerProcess = { proc: ChildProcess; baseUrl: string; output: () => string; exit: Promise<number | string> };

/** `node --import tsx src/main.ts` with only the given environment; resolves once /readyz is 200. */
export async function startServer(env: Record<string, string>, timeoutMs: number): Promise<ServerProcess> {
  const server = spawnServer(env);
  const deadline = Date.now() + timeoutMs;
  try {
    const baseUrl = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`server did not listen within ${timeoutMs} ms:\n${server.output()}`)), timeoutMs);
      const check = () => {
        const listening = /"baseUrl":"([^"]+)"[^\n]*"msg":"listening"/.exec(server.output());
        if (listening) (clearTimeout(timer), resolve(listening[1]!));
      };
      server.proc.stdout!.on('data', check);
      void server.exit.then((code) => (clearTimeout(timer), reject(new Error(`server exited (${code}) before listening:\n${server.output()}`))));
    });
    while ((await fetch(`${baseUrl}/readyz`).then((r) => r.status, () => 0)) !== 200) {
      if (Date.now() > deadline) throw new Error(`server not ready within ${timeoutMs} ms:\n${server.output()}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    return { ...server, baseUrl };
  } catch (error) {
    server.proc.kill('SIGKILL');
    throw error;
  }
}

export function spawnServer(env: Record<string, string>): Omit<ServerProcess, 'baseUrl'> {
  const proc = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', NODE_ENV: 'production', METRICS_TOKEN: 'harness-metrics-token-0123456789', HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  proc.stdout!.on('data', (chunk: Buffer) => void (output += chunk));
  proc.stderr!.on('data', (chunk: Buffer) => void (output += chunk));
  const exit = new Promise<number | string>((resolve) => proc.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')));
  return { proc, output: () => output, exit };
}

export async function stopServer(server: Pick<ServerProcess, 'proc' | 'exit'> | undefined): Promise<void> {
  if (!server || server.proc.exitCode !== null || server.proc.signalCode !== null) return;
  server.proc.kill('SIGKILL');
  await server.exit;
}

/** Resolves once `check` answers true (hooks cannot use expect.poll); fails naming `what` after `timeoutMs`. */
export async function waitFor(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 30_000, everyMs = 50): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
