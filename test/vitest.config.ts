import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export default defineConfig({
  root,
  resolve: {
    // Without this Vitest may load graphql twice ("Cannot use GraphQLSchema from another realm").
    alias: { graphql: path.join(root, 'node_modules/graphql/index.js') },
  },
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // A condition polled without its own ceiling may take this long on a loaded machine (CI runs two
    // files at once beside child servers). Vitest's default is 1 s; a migrator's first "waiting for
    // the lock" line, which the migration-lock test polls for, took 1.1 s there (the engine loads).
    expect: { poll: { timeout: 10_000 } },
    pool: 'forks',
    // Two files at a time fits two cores: most files wait on PGlite, sockets or child processes, and
    // Vitest's default (cores - 1) ran them one by one (docs/testing-prerequisites.md has the timings).
    maxWorkers: 2,
    // A worker keeps its modules between files: the app, Prisma and the schema load once per worker,
    // not once per file (half the CPU of a run). Files share no state: each builds its own app and database.
    isolate: false,
  },
});
