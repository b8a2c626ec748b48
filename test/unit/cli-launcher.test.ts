import { mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SOURCES, sourceFiles, STAMP } from '../../scripts/build-if-stale.mjs';
import { cliEntry } from '../../scripts/cli.mjs';

// Through tsx a CLI call took 4.5 s idle and 11.8 s on a busy machine; from dist/ 1.2 s and 5.0 s (docs/cli.md).
describe('npm run cli runs the build when it is current, the sources through tsx otherwise', () => {
  let root: string;
  const write = (file: string, seconds: number) => {
    mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    writeFileSync(path.join(root, file), 'x');
    utimesSync(path.join(root, file), seconds, seconds);
  };

  const stamp = () => {
    const files = SOURCES.flatMap((source) => sourceFiles(root, source).map(([file]) => file));
    mkdirSync(path.join(root, 'dist'), { recursive: true });
    writeFileSync(path.join(root, STAMP), JSON.stringify({ seconds: 20, files }));
    utimesSync(path.join(root, STAMP), 2_000, 2_000);
  };

  beforeEach(() => {
    root = mkdtempSync(path.join(tmpdir(), 'cli-launcher-'));
    write('src/cli/index.ts', 1_000);
    write('tsconfig.json', 1_000);
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('npm run cli goes through the launcher', () => {
    const { scripts } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { scripts: Record<string, string> };
    expect(scripts.cli).toBe('node scripts/cli.mjs');
  });

  it('without a build it runs the sources through tsx', () => {
    expect(cliEntry(root)).toEqual({ from: 'tsx', file: path.join(root, 'src/cli/index.ts'), reason: 'no build yet' });
  });

  it('a current build is run from dist/', () => {
    stamp();
    expect(cliEntry(root)).toEqual({ from: 'dist', file: path.join(root, 'dist/src/cli/index.js') });
  });

  it('a source edited since the build runs through tsx, so the CLI never runs old code', () => {
    stamp();
    write('src/cli/index.ts', 3_000);
    expect(cliEntry(root)).toMatchObject({ from: 'tsx', reason: 'src/cli/index.ts changed since the last build' });
  });
});
