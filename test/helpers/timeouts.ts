/**
 * The waits a run allows, read by test/vitest.config.ts and by test/helpers/app.ts for a file run
 * without that config (`npx vitest run <file>` from the root, as IDEs do: Vitest looks for its config
 * only in the directory it starts from, and the repository's top level holds none).
 */
export const TIMEOUTS = {
  testTimeout: 30_000,
  // A file run without the config migrates a database of its own in its beforeAll: about 5 s on a
  // quiet machine, 57 s beside a second copy of the suite on two cores. Ceilings catch hangs only.
  hookTimeout: 180_000,
  // A condition polled without its own ceiling may take this long on a loaded machine (CI runs two
  // files at once beside child servers). Vitest's default is 1 s; a migrator's first "waiting for
  // the lock" line, which the migration-lock test polls for, took 1.1 s there (the engine loads).
  expect: { poll: { timeout: 10_000 } },
};
