// npm run cli -- <command>: runs the compiled CLI (dist/src/cli/index.js) when dist/ is current, else the
// sources through tsx. Measured on 2 cores (farm-bench, medians), `token`: see docs/cli.md.
// Plain JavaScript on purpose, like build-if-stale.mjs: it must run before anything is compiled.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { staleReason } from './build-if-stale.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Where the CLI runs from in `root`: the build when it matches every source, else the sources (and why). */
export function cliEntry(root = ROOT) {
  const stale = staleReason(root);
  return stale === null
    ? { from: 'dist', file: path.join(root, 'dist/src/cli/index.js') }
    : { from: 'tsx', file: path.join(root, 'src/cli/index.ts'), reason: stale };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const entry = cliEntry();
  if (entry.from === 'dist') {
    const { main } = await import(pathToFileURL(entry.file).href);
    await main(process.argv.slice(2));
  } else {
    // Never builds (20–90 s): a stale dist/ waits for the next `npm start` or `npm run build`.
    const run = spawnSync(process.execPath, ['--import', import.meta.resolve('tsx'), entry.file, ...process.argv.slice(2)], { stdio: 'inherit' });
    process.exit(run.status ?? 1);
  }
}
