import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';

// docs/rest.md "The OpenAPI document" → Linters: the command-line linters integrators run, pinned in
// devDependencies and run from node_modules (CI's second run has no network), over the live
// document. Every warning they leave is one docs/rest.md explains; a new one fails here.

const ROOT = resolve(import.meta.dirname, '../..');
const run = promisify(execFile);
const bin = (path: string) => join(ROOT, 'node_modules', path);
// No update check or telemetry: nothing leaves the machine.
const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' };

type Doc = { paths: Record<string, Record<string, { security?: Record<string, string[]>[] }>> };

let t: TestApp;
let dir: string;
let doc: Doc;
beforeAll(async () => {
  t = await createTestApp();
  dir = await mkdtemp(join(tmpdir(), 'openapi-linters-'));
  const text = await (await fetch(`${t.baseUrl}/api/v1/openapi.json`)).text();
  doc = JSON.parse(text) as Doc;
  await writeFile(join(dir, 'openapi.json'), text);
  await writeFile(join(dir, '.spectral.yaml'), 'extends: ["spectral:oas"]\n');
  await writeFile(join(dir, 'redocly.yaml'), 'extends:\n  - recommended\n');
});
afterAll(async () => {
  await t?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** Each operation that an API key may call: its scope is named in its `apiKey` requirement. */
const keyOperations = () =>
  Object.entries(doc.paths).flatMap(([path, operations]) =>
    Object.entries(operations).flatMap(([method, operation]) => {
      const index = (operation.security ?? []).findIndex((requirement) => (requirement.apiKey ?? []).length > 0);
      return index < 0 ? [] : [`oas3-operation-security-defined paths.${path}.${method}.security.${index}.apiKey.0`];
    }),
  );

describe('the live OpenAPI document under the linters integrators run', () => {
  it('Spectral (spectral:oas): no errors; warnings only the ones docs/rest.md explains (a key scope per operation, two named answers, info.contact)', async () => {
    await run(process.execPath, [bin('@stoplight/spectral-cli/dist/index.js'), 'lint', 'openapi.json', '--ruleset', '.spectral.yaml', '-f', 'json', '-o', 'spectral.json', '-q'], { cwd: dir, env }).catch(
      (error: { stderr?: string }) => expect.fail(`spectral exited non-zero: ${error.stderr ?? ''}`),
    );
    const problems = JSON.parse(await readFile(join(dir, 'spectral.json'), 'utf8')) as { code: string; severity: number; path: string[] }[];
    expect(problems.filter((p) => p.severity === 0)).toEqual([]);
    const keyScopes = keyOperations();
    expect(keyScopes.length).toBeGreaterThan(30);
    expect(problems.map((p) => `${p.code} ${p.path.join('.')}`).sort()).toEqual(
      [
        'info-contact info',
        'oas3-unused-component components.responses.MethodNotAllowed',
        'oas3-unused-component components.responses.RouteNotFound',
        ...keyScopes,
      ].sort(),
    );
  }, 120_000);

  it('Redocly (lint, recommended): valid, no errors; warnings only info-license and the two named answers', async () => {
    const { stdout } = await run(process.execPath, [bin('@redocly/cli/bin/cli.js'), 'lint', 'openapi.json', '--config', 'redocly.yaml', '--format', 'json'], { cwd: dir, env });
    const { problems } = JSON.parse(stdout) as { problems: { ruleId: string; severity: string; location: { pointer: string }[] }[] };
    expect(problems.filter((p) => p.severity === 'error')).toEqual([]);
    expect(problems.map((p) => `${p.ruleId} ${p.location[0]?.pointer ?? ''}`).sort()).toEqual([
      'info-license #/info',
      'no-unused-components #/components/responses/MethodNotAllowed',
      'no-unused-components #/components/responses/RouteNotFound',
    ]);
  }, 120_000);
});
