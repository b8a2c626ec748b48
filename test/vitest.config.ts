import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { TIMEOUTS } from './helpers/timeouts.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export default defineConfig({
  root,
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    ...TIMEOUTS,
    pool: 'forks',
    // Two files at a time fits two cores: most files wait on PGlite, sockets or child processes, and
    // Vitest's default (cores - 1) ran them one by one (docs/testing-prerequisites.md has the timings).
    maxWorkers: 2,
    // A worker keeps its modules between files: the app, Prisma and the schema load once per worker,
    // not once per file (half the CPU of a run). Files share no state: each builds its own app and database.
    isolate: false,
  },
});
