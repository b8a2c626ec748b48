import type { CliIo } from '../../src/cli/command.js';
import { runCli } from '../../src/cli/index.js';
import type { Config } from '../../src/config.js';
import type { Database } from '../../src/db/client.js';

export type CliRun = { code: number; out: string[]; err: string[] };

/** Runs a command line in-process against `db` (a test app's database) and captures its output. */
export async function cli(argv: string[], options: { config: Config; db?: Database; progressStream?: NodeJS.WritableStream }): Promise<CliRun> {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = {
    env: {},
    out: (line) => out.push(line),
    err: (line) => err.push(line),
    config: () => options.config,
    ...(options.progressStream ? { progressStream: options.progressStream } : {}),
    withDb: (work) => {
      if (!options.db) throw new Error('this test gave the command no database');
      return work(options.db);
    },
  };
  const code = await runCli(argv, io);
  return { code, out, err };
}
