// node scripts/build-if-stale.mjs [--force]: compiles to dist/ (npm run build) only when a source is newer than the
// last good build, so `npm start` serves in seconds after the first start (docs/build-and-start.md).
// Plain JavaScript on purpose: it runs before anything is compiled, and tsx would add a second to every start.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

/** What `tsc -p tsconfig.build.json` reads: its folders (src/generated included) and its configs. */
export const SOURCES = ['src', 'scripts', 'tsconfig.json', 'tsconfig.build.json', 'package.json'];
/** Written after a build succeeds; its mtime is the build's time. */
export const STAMP = path.join('dist', '.build-stamp');

/** Newest modification time (ms) of a file or of any file under a folder; 0 when absent. */
export function newestMtime(target) {
  let stat;
  try {
    stat = statSync(target);
  } catch {
    return 0;
  }
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs; // a deleted or renamed file changes its folder's mtime
  for (const entry of readdirSync(target)) newest = Math.max(newest, newestMtime(path.join(target, entry)));
  return newest;
}

/** Why dist/ must be rebuilt in `root`, or null when it is up to date. */
export function staleReason(root) {
  const built = newestMtime(path.join(root, STAMP));
  if (built === 0) return 'no build yet';
  for (const source of SOURCES) {
    if (newestMtime(path.join(root, source)) > built) return `${source} changed since the last build`;
  }
  return null;
}

/** Rebuilds dist/ from scratch (no stale files of deleted sources) and stamps it; returns tsc's exit code. */
export function build(root) {
  const started = new Date(); // the stamp takes the start time, so a source saved during the build counts as newer
  rmSync(path.join(root, 'dist'), { recursive: true, force: true });
  const tsc = spawnSync(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], {
    cwd: root,
    stdio: 'inherit',
  });
  if (tsc.status !== 0) return tsc.status ?? 1;
  mkdirSync(path.join(root, 'dist'), { recursive: true });
  writeFileSync(path.join(root, STAMP), `${started.toISOString()}\n`);
  utimesSync(path.join(root, STAMP), started, started);
  return 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const root = process.cwd();
  const reason = process.argv.includes('--force') ? 'npm run build' : staleReason(root);
  if (reason) {
    process.stderr.write(`build: compiling TypeScript to dist/ (${reason}; takes about 20 s)\n`);
    const code = build(root);
    if (code !== 0) process.stderr.write('build: tsc failed; fix the errors above, or run `npm run dev` (no build step)\n');
    process.exit(code);
  }
}
