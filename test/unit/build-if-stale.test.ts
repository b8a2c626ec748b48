import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { STAMP, staleReason } from '../../scripts/build-if-stale.mjs';

// `npm start` compiles only when a source is newer than the last good build (docs/build-and-start.md).
describe('npm start builds only when dist/ is stale', () => {
  let root: string;
  const at = (file: string, seconds: number) => utimesSync(path.join(root, file), seconds, seconds);
  const write = (file: string, seconds: number) => {
    mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    writeFileSync(path.join(root, file), 'x');
    at(file, seconds);
  };

  beforeEach(() => {
    root = mkdtempSync(path.join(tmpdir(), 'build-if-stale-'));
    write('src/main.ts', 1_000);
    write('src/generated/client.ts', 1_000);
    write('tsconfig.json', 1_000);
    for (const dir of ['src', 'src/generated']) at(dir, 1_000);
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('a fresh clone (no stamp) is built', () => {
    expect(staleReason(root)).toBe('no build yet');
  });

  it('a build newer than every source is reused', () => {
    write(STAMP, 2_000);
    expect(staleReason(root)).toBeNull();
  });

  it('an edited source, even deep in src/, makes it stale', () => {
    write(STAMP, 2_000);
    at('src/generated/client.ts', 3_000);
    expect(staleReason(root)).toBe('src changed since the last build');
  });

  it('a deleted source (its folder changed) makes it stale', () => {
    write(STAMP, 2_000);
    rmSync(path.join(root, 'src/generated/client.ts'));
    expect(staleReason(root)).toBe('src changed since the last build');
  });

  it('a changed tsconfig makes it stale', () => {
    write(STAMP, 2_000);
    at('tsconfig.json', 3_000);
    expect(staleReason(root)).toBe('tsconfig.json changed since the last build');
  });
});
