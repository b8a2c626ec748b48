// node scripts/build-if-stale.mjs [--force]: compiles to dist/ (npm run build) only when a source changed since the
// last good build, so `npm start` serves in seconds after the first start (docs/build-and-start.md).
// Plain JavaScript on purpose: it runs before anything is compiled, and tsx would add a second to every start.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

/** What `tsc -p tsconfig.build.json` reads: its folders (src/generated included) and its configs. */
export const SOURCES = ['src', 'scripts', 'tsconfig.json', 'tsconfig.build.json', 'package.json'];
/**
 * Folders tsc never compiles (its default `exclude`), so never walked: `npm run bench` installs
 * PostGraphile's packages in scripts/bench/postgraphile/node_modules, which must not make the build stale.
 */
export const SKIPPED = new Set(['node_modules']);
/** Written after a build succeeds: its mtime is the build's start, its body the files built and how long it took. */
export const STAMP = path.join('dist', '.build-stamp');
/** What the banner promises before the first build, measured (docs/build-and-start.md#how-long-a-build-takes). */
export const FIRST_BUILD_TIME = '20 s to 4 min: about 20 s on an idle 2-core machine, 1–4 min while tests run beside it';

/** Every file tsc may read under `source` (a file or a folder of `root`): [path relative to root, mtime ms]. */
export function sourceFiles(root, source) {
  const files = [];
  const walk = (relative) => {
    let stat;
    try {
      stat = statSync(path.join(root, relative));
    } catch {
      return; // absent (an optional config) or removed while walking
    }
    if (!stat.isDirectory()) {
      files.push([relative.split(path.sep).join('/'), stat.mtimeMs]);
      return;
    }
    for (const entry of readdirSync(path.join(root, relative)).sort()) {
      if (!SKIPPED.has(entry)) walk(path.join(relative, entry));
    }
  };
  walk(source);
  return files;
}

/** The last good build: its start (ms), its files, and its duration (s); null when there is none or it is unreadable. */
export function readStamp(root) {
  try {
    const stamp = path.join(root, STAMP);
    const body = JSON.parse(readFileSync(stamp, 'utf8'));
    if (!Array.isArray(body.files)) return null;
    return { builtAt: statSync(stamp).mtimeMs, files: body.files, seconds: typeof body.seconds === 'number' ? body.seconds : null };
  } catch {
    return null;
  }
}

/**
 * Why dist/ must be rebuilt in `root`, or null when it is up to date: a source newer than the last
 * build, or a source added, removed or renamed since (compared with the list the stamp keeps, not
 * with folders' mtimes, which change when anything, even a skipped node_modules, appears in them).
 */
export function staleReason(root) {
  const stamp = readStamp(root);
  if (!stamp) return noStampReason(root);
  const built = new Set(stamp.files);
  let count = 0;
  for (const source of SOURCES) {
    for (const [file, mtime] of sourceFiles(root, source)) {
      if (mtime > stamp.builtAt) return `${file} changed since the last build`;
      if (!built.has(file)) return `${file} is new since the last build`;
      count++;
    }
  }
  if (count !== built.size) {
    const now = new Set(SOURCES.flatMap((source) => sourceFiles(root, source).map(([file]) => file)));
    const gone = stamp.files.find((file) => !now.has(file));
    return `${gone ?? 'a source'} was removed since the last build`;
  }
  return null;
}

/** A stamp that is absent, or written by an older version of this script (no list of files): built anew. */
function noStampReason(root) {
  try {
    statSync(path.join(root, STAMP));
    return 'the last build left no list of its files';
  } catch {
    return 'no build yet';
  }
}

/** Rebuilds dist/ from scratch (no stale files of deleted sources) and stamps it; returns tsc's exit code. */
export function build(root) {
  const started = new Date(); // the stamp takes the start time, so a source saved during the build counts as newer
  // Listed before compiling, like the time: a file added during the build is "new" at the next start.
  const files = SOURCES.flatMap((source) => sourceFiles(root, source).map(([file]) => file));
  rmSync(path.join(root, 'dist'), { recursive: true, force: true });
  const tsc = spawnSync(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], {
    cwd: root,
    stdio: 'inherit',
  });
  if (tsc.status !== 0) return tsc.status ?? 1;
  const seconds = Math.round((Date.now() - started.getTime()) / 100) / 10;
  mkdirSync(path.join(root, 'dist'), { recursive: true });
  writeFileSync(path.join(root, STAMP), `${JSON.stringify({ startedAt: started.toISOString(), seconds, files })}\n`);
  utimesSync(path.join(root, STAMP), started, started);
  return 0;
}

/** The build's banner: why it builds and how long it will take, by the last build here when there was one. */
export function banner(reason, lastSeconds) {
  const time = lastSeconds ? `the last build here took ${Math.round(lastSeconds)} s` : `takes ${FIRST_BUILD_TIME}`;
  return `build: compiling TypeScript to dist/ (${reason}; ${time})`;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const root = process.cwd();
  const reason = process.argv.includes('--force') ? 'npm run build' : staleReason(root);
  if (reason) {
    process.stderr.write(`${banner(reason, readStamp(root)?.seconds)}\n`);
    const code = build(root);
    if (code !== 0) process.stderr.write('build: tsc failed; fix the errors above, or run `npm run dev` (no build step)\n');
    process.exit(code);
  }
}
