import { readFileSync } from 'node:fs';
import semver from 'semver';
import { describe, expect, it } from 'vitest';

// The Node versions package.json claims are ones every installed package accepts (docs/node-versions.md).
const read = (file: string) => JSON.parse(readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8'));
const claimed: string = read('package.json').engines.node;
const lock = read('package-lock.json') as { packages: Record<string, { version?: string; engines?: unknown; dependencies?: Record<string, string> }> };

// Prisma's CLI brings it for `prisma dev` (a local database server), which this project never runs.
const KNOWN = ['node_modules/@prisma/streams-local@0.1.11 needs >=22.0.0'];

/** The installed packages `from` needs, itself included (npm's resolution: nested first, then up the tree). */
function closureOf(from: string): Set<string> {
  const seen = new Set<string>();
  const visit = (path: string) => {
    if (seen.has(path) || !lock.packages[path]) return;
    seen.add(path);
    for (const name of Object.keys(lock.packages[path]!.dependencies ?? {})) {
      let dir = path;
      while (!lock.packages[`${dir}/node_modules/${name}`] && dir.includes('/node_modules/')) dir = dir.slice(0, dir.lastIndexOf('/node_modules/'));
      visit(lock.packages[`${dir}/node_modules/${name}`] ? `${dir}/node_modules/${name}` : `node_modules/${name}`);
    }
  };
  visit(from);
  return seen;
}
// PostGraphile 5 and what it brings ask for Node 22: a dev dependency that only `npm run bench` starts,
// as its second reference, on Node 20 with the one polyfill it needs (scripts/bench/postgraphile.ts).
const BENCH_ONLY = closureOf('node_modules/postgraphile');

describe('supported Node versions', () => {
  it('this Node is one package.json claims', () => {
    expect(semver.satisfies(process.version, claimed), `${process.version} vs ${claimed}`).toBe(true);
  });

  it.each(['20.19.0', '22.13.0', '24.0.0'])('Node %s: claimed, and accepted by every installed package but Prisma\'s `prisma dev` helper and the bench\'s PostGraphile', (version) => {
    expect(semver.satisfies(version, claimed)).toBe(true);
    const refusing = Object.entries(lock.packages)
      .filter(([path, info]) => path && !BENCH_ONLY.has(path) && typeof (info.engines as { node?: unknown } | undefined)?.node === 'string')
      .filter(([, info]) => !semver.satisfies(version, (info.engines as { node: string }).node))
      .map(([path, info]) => `${path}@${info.version} needs ${(info.engines as { node: string }).node}`);
    expect(refusing).toEqual(version === '20.19.0' ? KNOWN : []);
  });

  it('the bench-only packages that need Node 22 are reached by no dependency of the service', () => {
    expect(BENCH_ONLY.has('node_modules/postgraphile')).toBe(true);
    const service = new Set(Object.keys(read('package.json').dependencies as Record<string, string>).flatMap((name) => [...closureOf(`node_modules/${name}`)]));
    const needs22 = [...BENCH_ONLY].filter((path) => {
      const node = (lock.packages[path]!.engines as { node?: unknown } | undefined)?.node;
      return typeof node === 'string' && !semver.satisfies('20.19.0', node);
    });
    expect(needs22.length).toBeGreaterThan(0);
    expect(needs22.filter((path) => service.has(path))).toEqual([]);
  });

  it('versions some package refuses are not claimed: 21 and 23 (Prisma 7), 22 before 22.13 (the codegen CLI\'s prompts)', () => {
    expect(semver.satisfies('21.7.0', claimed)).toBe(false);
    expect(semver.satisfies('22.12.0', claimed)).toBe(false);
    expect(semver.satisfies('23.11.0', claimed)).toBe(false);
  });
});
