import { randomBytes } from 'node:crypto';
import { chmod, link, mkdir, readFile, stat, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';

const FILE_NAME = 'dev-jwt-secret';
const MIN_LENGTH = 32;

/**
 * Development only: the HS256 secret for demo tokens, kept in the data directory so tokens stay
 * valid across restarts. Created once, readable by the owner only (it can mint any user's token).
 */
export async function loadOrCreateDevSecret(dataDir: string, fileName = FILE_NAME): Promise<string> {
  const file = path.join(dataDir, fileName);
  const existing = await readSecret(file);
  if (existing !== null) return existing;

  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const secret = randomBytes(32).toString('base64url');
  // Write a private temp file, then hard-link it into place: the link either appears complete or
  // fails with EEXIST, so two processes starting at once end up sharing one secret.
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  await writeFile(tmp, `${secret}\n`, { mode: 0o600, flag: 'wx' });
  try {
    await link(tmp, file);
    return secret;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    const winner = await readSecret(file);
    if (winner === null) throw new Error(`${file} vanished while being created`);
    return winner;
  } finally {
    await unlink(tmp).catch(() => undefined);
  }
}

async function readSecret(file: string): Promise<string | null> {
  let content: string;
  try {
    content = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  const secret = content.trim();
  if (secret.length < MIN_LENGTH) {
    throw new Error(`${file} holds no usable secret (under ${MIN_LENGTH} characters); delete it to have a new one created`);
  }
  // Tighten a file someone loosened (e.g. copied with a default umask); a no-op where modes do not apply.
  if (process.platform !== 'win32' && ((await stat(file)).mode & 0o077) !== 0) await chmod(file, 0o600);
  return secret;
}
