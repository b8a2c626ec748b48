/**
 * Start-up failures a person can cause and fix (docs/startup-errors.md): each becomes a StartupError
 * whose message is one line naming the setting to change; main.ts prints it and exits 1.
 */
import { mkdir, rm, writeFile } from 'node:fs/promises';
import type { Server } from 'node:http';
import path from 'node:path';
import pg from 'pg';
import type { Config } from './config.js';

export class StartupError extends Error {}

const errnoOf = (error: unknown): string | undefined => (error as NodeJS.ErrnoException | undefined)?.code;

/** Fails unless DATA_DIR is (or can become) a directory this process can write to. */
export async function checkDataDir(dir: string): Promise<void> {
  // A real write, not access(W_OK): that says yes to root on a read-only file system.
  const probe = path.join(dir, `.write-check-${process.pid}`);
  try {
    await mkdir(dir, { recursive: true });
    await writeFile(probe, '');
    await rm(probe, { force: true });
  } catch (error) {
    const why: Record<string, string> = {
      EACCES: 'permission denied',
      EPERM: 'permission denied',
      EROFS: 'read-only file system',
      ENOTDIR: 'a file is in the way: it or a parent is not a directory',
      EEXIST: 'a file is in the way: it or a parent is not a directory',
      ENOSPC: 'no space left on the device',
    };
    const code = errnoOf(error);
    const reason = (code && why[code]) ?? code ?? String(error);
    throw new StartupError(`DATA_DIR ${dir} is not a writable directory (${reason}): set DATA_DIR to one this user can write`);
  }
}

/** DATABASE_URL without its password, for messages. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(unparsable URL)';
  }
}

/** Fails unless PostgreSQL at `url` accepts a connection and a query within `timeoutMs`. */
export async function checkDatabase(url: string, timeoutMs = 10_000): Promise<void> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: timeoutMs });
  client.on('error', () => {}); // a connection lost after the check is the pool's business, not the check's
  try {
    await client.connect();
    await client.query('SELECT 1');
  } catch (error) {
    throw new StartupError(`DATABASE_URL ${redactUrl(url)}: ${databaseProblem(error, url)}`);
  } finally {
    await client.end().catch(() => {});
  }
}

/** What went wrong, and what to do about it. */
function databaseProblem(error: unknown, url: string): string {
  const { hostname, port, username, pathname } = new URL(url);
  const where = `${hostname}:${port || 5432}`;
  const restart = 'start PostgreSQL there or fix DATABASE_URL';
  switch (errnoOf(error)) {
    case 'ECONNREFUSED':
      return `nothing accepts connections at ${where}: ${restart}`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `host ${hostname} not found: fix the host in DATABASE_URL`;
    case 'ETIMEDOUT':
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return `no route to ${where}: ${restart}`;
    case '28P01':
    case '28000':
      return `user ${decodeURIComponent(username) || '(none)'} was refused: fix the user or password in DATABASE_URL (or pg_hba.conf)`;
    case '3D000':
      return `database ${decodeURIComponent(pathname.slice(1))} does not exist: create it (createdb) or fix DATABASE_URL`;
  }
  const message = (error as Error | undefined)?.message ?? String(error);
  // pg's own timeout has no code; anything else: the driver's first line (no stack, no SQL).
  return `${/timeout/i.test(message) ? `no answer from ${where}` : message.split('\n')[0]!}: ${restart}`;
}

/** server.listen that rejects with one line (port in use, no permission, unknown address) instead of crashing. */
export function listen(server: Server, config: Pick<Config, 'port' | 'host'>): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) => {
      const at = `${config.host}:${config.port}`;
      const lines: Record<string, string> = {
        EADDRINUSE: `PORT ${config.port} is already in use on ${config.host}: stop the other process or set PORT to a free port`,
        EACCES: `PORT ${config.port} needs more privileges on ${config.host}: set PORT to 1024 or above`,
        EADDRNOTAVAIL: `HOST ${config.host} is not an address of this machine: set HOST (e.g. 127.0.0.1 or 0.0.0.0)`,
        ENOTFOUND: `HOST ${config.host} does not resolve: set HOST to an address or a known name`,
        EAI_AGAIN: `HOST ${config.host} does not resolve: set HOST to an address or a known name`,
      };
      reject(new StartupError(lines[error.code ?? ''] ?? `cannot listen on ${at} (${error.code ?? error.message}): check HOST and PORT`));
    };
    server.once('error', onError);
    // A deep accept queue (the kernel caps it at net.core.somaxconn): under a burst, a connection waits
    // its turn and is answered (503 when the database is saturated) instead of reset by the kernel.
    server.listen({ port: config.port, host: config.host, backlog: 4096 }, () => {
      server.off('error', onError);
      resolve();
    });
  });
}
