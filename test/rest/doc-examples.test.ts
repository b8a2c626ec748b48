import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO, seedDemo } from '../../src/demo.js';
import { startImportWorker } from '../../src/imports/worker.js';
import { createLogger } from '../../src/logger.js';
import { createTestApp, TEST_SECRET, type TestApp } from '../helpers/app.js';
import { answerMismatches, examplesOf, globOf, jsonValuesOf, mismatches, parsePatterns } from '../helpers/doc-examples.js';

// docs/rest.md "How the examples are tested": every curl example of README.md and docs/rest.md runs,
// with the real curl, against a server freshly seeded with the demo data (one per file, the examples
// in the file's order, as a reader runs them), and what it prints is compared with its answer block.

const ROOT = resolve(import.meta.dirname, '../..');
const run = promisify(execFile);
/** The address the documents show; the test's server is elsewhere. */
const DOCUMENTED = 'http://127.0.0.1:3000';

describe('the answer patterns the docs use', () => {
  const check = (pattern: string, output: string) => parsePatterns(pattern).flatMap((p, i) => mismatches(p, jsonValuesOf(output)[i]));

  it('`...` stands for any value, the other members, or the rest of a list; nothing else is skipped', () => {
    expect(check('{"id":"...","a":1,...}', '{"id":"x","a":1,"b":2}')).toEqual([]);
    expect(check('{"id":"...","a":1}', '{"id":"x","a":1,"b":2}')).toEqual(['$.b: not in the documented answer']);
    expect(check('{"a":[1,...]}', '{"a":[1,2,3]}')).toEqual([]);
    expect(check('{"a":[1]}', '{"a":[1,2]}')).toEqual(['$.a: expected 1 items, got 2']);
    expect(check('{"a":2}', '{"a":2.5}')).toEqual(['$.a: expected 2, got 2.5']);
    expect(check('{"a":"x"}', '{}')).toEqual(['$.a: missing']);
  });

  it('a timestamp stands for any timestamp, `<name>` and `...` inside a string for any text', () => {
    expect(globOf('2026-11-22T18:25:37.104Z').test('2030-01-01T00:00:00.000Z')).toBe(true);
    expect(globOf('"2026-11-22T18:25:37.104Z"').test('"2030-01-01T00:00:00Z"')).toBe(true);
    expect(globOf('contacts-<date>.csv').test('contacts-2026-11-26.csv')).toBe(true);
    expect(globOf('WyJ...').test('WyJabc')).toBe(true);
    expect(globOf('WyJ...').test('eyJabc')).toBe(false);
  });
});

for (const file of ['README.md', 'docs/rest.md']) {
  describe(`${file}: each curl example answers as documented, against the demo data`, () => {
    const examples = examplesOf(readFileSync(join(ROOT, file), 'utf8'));
    let t: TestApp;
    let dir: string;
    let env: Record<string, string>;
    beforeAll(async () => {
      t = await createTestApp();
      // As `npm start` runs it: an upload wakes this worker, which writes the import's rows.
      t.deps.imports = startImportWorker(t.db, { leaseMs: 60_000, pollMs: 60_000, log: createLogger({ level: 'silent' }) });
      const { token } = await seedDemo(t.db, TEST_SECRET);
      dir = await mkdtemp(join(tmpdir(), 'doc-examples-'));
      env = {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: dir,
        TOKEN: token,
        API: `${t.baseUrl}/api/v1`,
        ACCOUNT: DEMO.accountId,
      };
    });
    afterAll(async () => {
      await t?.deps.imports?.close();
      await t?.close();
      if (dir) await rm(dir, { recursive: true, force: true });
    });

    it('has examples, each followed by its answer block', () => {
      expect(examples.length).toBeGreaterThan(0);
      expect(examples.filter((e) => !e.answer).map((e) => `${file}:${e.line}`)).toEqual([]);
    });

    for (const example of examples) {
      it(`${file}:${example.line} ${example.script.split('\n').find((l) => l.trim() && !l.startsWith('#'))!.slice(0, 80)}`, async () => {
        // Shell variables an example sets (INVOICE=..., ID=...) carry to the next ones, as in the reader's shell.
        const script = `set -a; [ -f .vars ] && . ./.vars\n${example.script.replaceAll(DOCUMENTED, t.baseUrl)}\nexport -p | grep -v '^declare -[a-z]*r' > .vars\n`;
        const { stdout, stderr } = await run('bash', ['-c', script], { cwd: dir, env, maxBuffer: 16 * 1024 * 1024 }).catch((error: { stdout: string; stderr: string }) => error);
        expect(example.answer, 'the answer block right after the example').not.toBeNull();
        const expected = { ...example.answer!, text: example.answer!.text.replaceAll(DOCUMENTED, t.baseUrl) };
        expect(answerMismatches(expected, stdout), `${file}:${expected.line}\n${stdout}\n${stderr}`).toEqual([]);
      });
    }
  });
}
