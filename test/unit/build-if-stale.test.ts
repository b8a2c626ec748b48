import { mkdirSync, mkdtempSync, renameSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { banner, FIRST_BUILD_TIME, SOURCES, sourceFiles, STAMP, staleReason } from '../../scripts/build-if-stale.mjs';

// `npm start` compiles only when a source changed since the last good build (docs/build-and-start.md).
describe('npm start builds only when dist/ is stale', () => {
  let root: string;
  const at = (file: string, seconds: number) => utimesSync(path.join(root, file), seconds, seconds);
  const write = (file: string, seconds: number) => {
    mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    writeFileSync(path.join(root, file), 'x');
    at(file, seconds);
  };
  /** What a good build leaves: the list of the files it compiled, stamped at its start. */
  const stamp = (seconds: number, body?: string) => {
    const files = SOURCES.flatMap((source) => sourceFiles(root, source).map(([file]) => file));
    mkdirSync(path.join(root, 'dist'), { recursive: true });
    writeFileSync(path.join(root, STAMP), body ?? JSON.stringify({ startedAt: new Date(seconds * 1000).toISOString(), seconds: 19.6, files }));
    at(STAMP, seconds);
  };

  beforeEach(() => {
    root = mkdtempSync(path.join(tmpdir(), 'build-if-stale-'));
    write('src/main.ts', 1_000);
    write('src/generated/client.ts', 1_000);
    write('scripts/bench/postgraphile/server.ts', 1_000);
    write('tsconfig.json', 1_000);
    for (const dir of ['src', 'src/generated', 'scripts', 'scripts/bench', 'scripts/bench/postgraphile']) at(dir, 1_000);
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('a fresh clone (no stamp) is built', () => {
    expect(staleReason(root)).toBe('no build yet');
  });

  it('a stamp without its list of files (an older build script) is built anew', () => {
    stamp(2_000, '1970-01-01T00:33:20.000Z\n');
    expect(staleReason(root)).toBe('the last build left no list of its files');
  });

  it('a build newer than every source is reused', () => {
    stamp(2_000);
    expect(staleReason(root)).toBeNull();
  });

  it('an edited source, even deep in src/, makes it stale', () => {
    stamp(2_000);
    at('src/generated/client.ts', 3_000);
    expect(staleReason(root)).toBe('src/generated/client.ts changed since the last build');
  });

  it('a deleted source makes it stale', () => {
    stamp(2_000);
    rmSync(path.join(root, 'src/generated/client.ts'));
    expect(staleReason(root)).toBe('src/generated/client.ts was removed since the last build');
  });

  it('a renamed source makes it stale, though it keeps its old mtime', () => {
    stamp(2_000);
    renameSync(path.join(root, 'src/main.ts'), path.join(root, 'src/index.ts'));
    expect(staleReason(root)).toBe('src/index.ts is new since the last build');
  });

  it('a changed tsconfig makes it stale', () => {
    stamp(2_000);
    at('tsconfig.json', 3_000);
    expect(staleReason(root)).toBe('tsconfig.json changed since the last build');
  });

  it("packages npm run bench installs under scripts/ (PostGraphile's node_modules) do not make it stale", () => {
    stamp(2_000);
    // As `npm ci` in scripts/bench/postgraphile leaves it: new files, a new folder, the parent's mtime moved.
    write('scripts/bench/postgraphile/node_modules/postgraphile/package.json', 3_000);
    write('scripts/bench/postgraphile/node_modules/.package-lock.json', 3_000);
    at('scripts/bench/postgraphile/node_modules', 3_000);
    at('scripts/bench/postgraphile', 3_000);
    expect(staleReason(root)).toBeNull();
    // ... while a real source beside them still does.
    at('scripts/bench/postgraphile/server.ts', 3_000);
    expect(staleReason(root)).toBe('scripts/bench/postgraphile/server.ts changed since the last build');
  });
});

// The banner said "about 20 s" where 56–88 s was measured: it gives the measured range before a
// first build, and the last build's own time after one (docs/build-and-start.md#how-long-a-build-takes).
describe('the build banner promises the time builds take here', () => {
  it('before the first build: the measured range, idle and busy', () => {
    expect(banner('no build yet', null)).toBe(`build: compiling TypeScript to dist/ (no build yet; takes ${FIRST_BUILD_TIME})`);
    expect(FIRST_BUILD_TIME).toMatch(/^20 s to 4 min/);
  });

  it('after one: how long the last build here took', () => {
    expect(banner('src/main.ts changed since the last build', 76.8)).toBe(
      'build: compiling TypeScript to dist/ (src/main.ts changed since the last build; the last build here took 77 s)',
    );
  });
});
