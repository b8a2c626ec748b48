import { readFileSync } from 'node:fs';
import { generate } from '@graphql-codegen/cli';
import { describe, expect, it } from 'vitest';
import config from '../../codegen.js';
import { printedSchema } from '../../src/schema.js';
import { FRAGMENT_FILES } from '../../src/rest/record-fragments.js';

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');

describe('committed generated files', () => {
  it('schema.graphql is the printed, sorted schema (run `npm run generate` when this fails)', () => {
    expect(read('schema.graphql')).toBe(printedSchema());
  });

  it.each(Object.keys(FRAGMENT_FILES))("the REST operations in %s are those the record models and page fields write (run `npm run generate` when this fails)", (file) => {
    expect(read(file)).toBe(FRAGMENT_FILES[file]!());
  });

  it('the REST operations typed by codegen are up to date (run `npm run generate` when this fails)', async () => {
    const [output] = await generate({ ...config, silent: true }, false);
    expect(read('src/rest/operations/generated.ts')).toBe(output!.content);
  }, 60_000);
});
