// The bench measures the service as `npm start` runs it: the V8 flags the bench gives every server
// (scripts/bench/processes.ts) are the ones package.json's start script gives the service.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { NODE_FLAGS } from '../../scripts/bench/processes.js';

describe('the node flags of the bench', () => {
  it('are the flags npm start gives the service, before its entry point', () => {
    const { scripts } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { scripts: Record<string, string> };
    const serve = scripts.start!.split('&&').map((s) => s.trim()).find((s) => s.endsWith('dist/src/main.js'))!;
    expect(serve.split(/\s+/).slice(1, -1)).toEqual(NODE_FLAGS);
  });
});
