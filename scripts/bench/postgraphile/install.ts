// PostGraphile 5 (the bench's second reference) asks for Node 22 and brings ~180 packages: kept out of
// the project's own install, so `npm ci` stays quiet on Node 20, and installed here, from this
// folder's own lockfile, the first time `npm run bench` needs it.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const POSTGRAPHILE_DIR = path.dirname(fileURLToPath(import.meta.url));

/** Installs this folder's lockfile unless PostGraphile is already there; throws if npm fails. */
export function ensurePostGraphile(log: (message: string) => void = (m) => process.stderr.write(`${m}\n`)): void {
  if (existsSync(path.join(POSTGRAPHILE_DIR, 'node_modules', 'postgraphile', 'package.json'))) return;
  log('installing PostGraphile for the bench (first run only): npm ci in scripts/bench/postgraphile');
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const result = spawnSync(npm, ['ci', '--no-audit', '--no-fund'], { cwd: POSTGRAPHILE_DIR, stdio: 'inherit' });
  if (result.status !== 0) throw new Error(`npm ci in ${POSTGRAPHILE_DIR} failed (exit ${result.status ?? result.signal})`);
}

if (import.meta.url === `file://${process.argv[1]}`) ensurePostGraphile();
