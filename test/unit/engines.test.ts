import { readFileSync } from 'node:fs';
import semver from 'semver';
import { describe, expect, it } from 'vitest';

// The Node versions package.json claims are ones every installed package accepts (docs/node-versions.md).
const read = (file: string) => JSON.parse(readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8'));
const claimed: string = read('package.json').engines.node;
const lock = read('package-lock.json') as { packages: Record<string, { version?: string; engines?: unknown; dependencies?: Record<string, string> }> };


const needsNode22 = (info: { engines?: unknown }) => {
  const node = (info.engines as { node?: unknown } | undefined)?.node;
  return typeof node === 'string' && !semver.satisfies('20.19.0', node);
};

// PostGraphile 5 and what it brings ask for Node 22: the bench's second reference, installed from its
// own lockfile by `npm run bench` on first use (scripts/bench/postgraphile/install.ts), never by the
// project's install, and run on Node 20 with the one polyfill it needs (scripts/bench/postgraphile/server.ts).
const benchLock = read('scripts/bench/postgraphile/package-lock.json') as typeof lock;

describe('supported Node versions', () => {
  it('this Node is one package.json claims', () => {
    expect(semver.satisfies(process.version, claimed), `${process.version} vs ${claimed}`).toBe(true);
  });

  it.each(['20.19.0', '22.13.0', '24.0.0'])('Node %s: claimed, and accepted by every package the project installs (npm ci prints no EBADENGINE)', (version) => {
    expect(semver.satisfies(version, claimed)).toBe(true);
    const refusing = Object.entries(lock.packages)
      .filter(([path, info]) => path && typeof (info.engines as { node?: unknown } | undefined)?.node === 'string')
      .filter(([, info]) => !semver.satisfies(version, (info.engines as { node: string }).node))
      .map(([path, info]) => `${path}@${info.version} needs ${(info.engines as { node: string }).node}`);
    expect(refusing).toEqual([]);
  });

  // Prisma's CLI asks for @prisma/dev (the server behind `prisma dev`, which this project never runs);
  // its newer versions bring @prisma/streams-local, which declares Node 22. package.json pins the last
  // @prisma/dev without it; the lock must hold that pin, or npm ci warns again on Node 20.
  it('@prisma/dev is held at the version without @prisma/streams-local (Node 22 only)', () => {
    expect(read('package.json').overrides['@prisma/dev']).toBe('0.20.0');
    expect(lock.packages['node_modules/prisma/node_modules/@prisma/dev']?.version ?? lock.packages['node_modules/@prisma/dev']?.version).toBe('0.20.0');
    expect(Object.keys(lock.packages).filter((path) => path.endsWith('@prisma/streams-local'))).toEqual([]);
  });

  it('PostGraphile, which needs Node 22, is in the bench\'s own lockfile and not in the project\'s (no EBADENGINE on npm ci)', () => {
    const paths = (l: typeof lock) => Object.keys(l.packages);
    expect(paths(lock).filter((path) => /(^|\/)node_modules\/(postgraphile|grafast|grafserv|@dataplan\/pg)$/.test(path))).toEqual([]);
    expect(benchLock.packages['node_modules/postgraphile']?.version).toBe('5.1.5');
    expect(Object.values(benchLock.packages).filter(needsNode22).length).toBeGreaterThan(0);
  });

  it('versions some package refuses are not claimed: 21 and 23 (Prisma 7), 22 before 22.13 (the codegen CLI\'s prompts)', () => {
    expect(semver.satisfies('21.7.0', claimed)).toBe(false);
    expect(semver.satisfies('22.12.0', claimed)).toBe(false);
    expect(semver.satisfies('23.11.0', claimed)).toBe(false);
  });
});
