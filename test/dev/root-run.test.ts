import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/server-process.js';

/**
 * graphql 16's package.json says `"main": "index"`: Node (and so Pothos, Yoga and every library)
 * loads index.js, while Vite's resolver, which compiles our own files under Vitest, tries .mjs first
 * and took index.mjs: two graphql modules, and "Cannot use GraphQLObjectType from another module or
 * realm" when a file ran without test/vitest.config.ts's alias. Importing 'graphql/index.js' names
 * the one file both resolvers agree on (docs/development.md).
 */
describe('running one test file as a developer or an IDE does', () => {
  it('no file imports graphql by its bare name', () => {
    const files = (dir: string): string[] => readdirSync(path.join(ROOT, dir), { withFileTypes: true })
      .flatMap((e) => e.isDirectory() ? (e.name === 'postgraphile' ? [] /* a package of its own */ : files(path.join(dir, e.name))) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : []);
    const bare = ['src', 'test', 'scripts'].flatMap(files)
      .filter((file) => /(from|import\()\s*'graphql'/.test(readFileSync(path.join(ROOT, file), 'utf8')));
    expect(bare).toEqual([]);
  });

  it('`npx vitest run <file>` from the repository root runs the file (no config: its own database, one graphql)', async () => {
    const child = spawn('npx', ['vitest', 'run', 'test/dev/one-file.test.ts'], { cwd: ROOT, env: { ...process.env, NO_COLOR: '1' } });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => { output += chunk; });
    child.stderr.on('data', (chunk: Buffer) => { output += chunk; });
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(output, output).toMatch(/Tests\s+2 passed \(2\)/);
    expect(code, output).toBe(0);
  }, 360_000); // above the child's own hook ceiling (test/helpers/timeouts.ts): against a hang only
});
