import { readdirSync, readFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

// docs/testing-prerequisites.md lists every test file that skips without something (a variable, a
// program, a browser, a platform): it missed six once, so this keeps the list and the files together.
const ROOT = path.resolve(import.meta.dirname, '../..');
const DOC = readFileSync(path.join(ROOT, 'docs/testing-prerequisites.md'), 'utf8');

function testFiles(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const relative = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return entry.name === 'fixtures' ? [] : testFiles(relative);
    return entry.name.endsWith('.test.ts') ? [relative] : [];
  });
}

/** A file that can skip: a describe, it or test with skipIf, runIf or skip. */
const canSkip = (file: string) => /\b(describe|it|test)\.(skipIf|runIf|skip)\(/.test(readFileSync(path.join(ROOT, file), 'utf8'));

describe('docs/testing-prerequisites.md', () => {
  it('names every test file that skips without a prerequisite', () => {
    const skipping = testFiles('test').filter(canSkip).sort();
    expect(skipping.length).toBeGreaterThan(30);
    expect(skipping.filter((file) => !DOC.includes(`\`${file}\``))).toEqual([]);
  });

  it('names only test files that exist', () => {
    const named = [...DOC.matchAll(/`(test\/[\w/.-]+\.test\.ts)`/g)].map((m) => m[1]!);
    expect(named.filter((file) => !existsSync(path.join(ROOT, file)))).toEqual([]);
  });
});
