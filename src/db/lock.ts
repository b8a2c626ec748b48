/**
 * The embedded database belongs to one process (decisions.md §14, docs/faults.md "One process per
 * DATA_DIR"): PGlite is a single-process PostgreSQL, and a second process writing the same files
 * corrupts them. The opener holds DATA_DIR/service.lock (its pid and command line); another process
 * refuses at once, naming the holder. A lock whose pid no longer runs (or is a zombie) is stale and taken over.
 */
import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import path from 'node:path';

export const LOCK_FILE = 'service.lock';

export class DataDirLockedError extends Error {
  constructor(
    readonly dataDir: string,
    readonly holder: { pid: number; command: string },
  ) {
    super(`DATA_DIR ${dataDir} is in use by pid ${holder.pid} (${holder.command}): stop it first, or use another DATA_DIR`);
    this.name = 'DataDirLockedError';
  }
}

type Holder = { pid: number; command: string };

/**
 * A zombie (exited, not yet reaped by its parent: `npm start` stopped while npm lingers) still
 * answers kill(pid, 0), yet holds no files: where /proc tells the state, Z counts as gone.
 */
const zombie = (pid: number): boolean => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.charAt(stat.lastIndexOf(')') + 2) === 'Z'; // "pid (comm) S ...": the name may hold ')'
  } catch {
    return false; // no /proc (macOS), or gone meanwhile: kill() has answered already
  }
};

const running = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM' && !zombie(pid); // alive, someone else's
  }
  return !zombie(pid);
};

function readHolder(file: string): Holder | null {
  try {
    const holder = JSON.parse(readFileSync(file, 'utf8')) as Partial<Holder>;
    return Number.isInteger(holder.pid) ? { pid: holder.pid!, command: String(holder.command ?? '?') } : null;
  } catch {
    return null; // gone meanwhile, or half-written by a process that died while writing it
  }
}

/** Takes the lock or throws DataDirLockedError; returns its release (also run at process exit). */
export function lockDataDir(dataDir: string): () => void {
  const file = path.join(dataDir, LOCK_FILE);
  const me: Holder = { pid: process.pid, command: process.argv.slice(1).join(' ').slice(0, 200) || 'node' };
  for (let attempt = 0; attempt < 5; attempt++) {
    let fd: number;
    try {
      fd = openSync(file, 'wx'); // exclusive create: of two racing processes, exactly one succeeds
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = readHolder(file);
      if (holder && running(holder.pid)) throw new DataDirLockedError(dataDir, holder);
      // Stale (its process is gone) or unreadable: take it over. Unlink then create, so a racer's fresh lock is never read as ours.
      try {
        unlinkSync(file);
      } catch {
        // another process removed it first
      }
      continue;
    }
    writeSync(fd, JSON.stringify(me));
    closeSync(fd);
    let held = true;
    const release = () => {
      if (!held) return;
      held = false;
      process.removeListener('exit', release);
      if (readHolder(file)?.pid === process.pid) unlinkSync(file);
    };
    process.once('exit', release); // a process that exits without closing (Ctrl-C) leaves no lock
    return release;
  }
  throw new Error(`could not take the lock ${file}`);
}
