// npm run cli -- <command> [options]: operator tasks against the configured database (DATABASE_URL,
// else the embedded PGlite in DATA_DIR). Reads .env like the server (development only; the real
// environment wins). Problems are printed one per line; the exit code is 0 on
// success, 1 on a failure, 2 on a usage mistake (a missing or unknown option, or a value an option
// cannot take: docs/cli.md).
import { pathToFileURL } from 'node:url';
import { ConfigError, loadConfig, loadDotenv } from '../config.js';
import { isDatabaseUnavailable, openDatabase } from '../db/client.js';
import { DataDirLockedError } from '../db/lock.js';
import { applyMigrations } from '../db/migrate.js';
import { accountCreate } from './account-create.js';
import { apiKey } from './api-key.js';
import { CliError, type CliIo, type Command } from './command.js';
import { exportCommand } from './export.js';
import { formCreate } from './form-create.js';
import { memberAdd } from './member-add.js';
import { migrate } from './migrate.js';
import { seed } from './seed.js';
import { token } from './token.js';
import { webhookListen } from './webhook-listen.js';

export const COMMANDS: Command[] = [token, accountCreate, memberAdd, apiKey, formCreate, migrate, seed, exportCommand, webhookListen];

export function usage(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  return [
    'usage: npm run cli -- <command> [options]',
    '',
    ...COMMANDS.flatMap((c) => [`  ${c.name.padEnd(width)}  ${c.summary}`, `  ${' '.repeat(width)}  ${c.name} ${c.usage}`]),
    '',
    'Uses DATABASE_URL when set, else the embedded database in DATA_DIR (default .data): stop the',
    'server first when it runs on the embedded database, which only one process may open.',
    'Like the server, reads .env in the working directory (not when NODE_ENV=production); the real',
    'environment wins.',
  ].join('\n');
}

/** Runs one command line; never throws: every failure becomes lines on stderr and an exit code. */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  const [name, ...args] = argv;
  if (!name || name === 'help' || name === '--help' || name === '-h') {
    (name ? io.out : io.err)(usage());
    return name ? 0 : 2;
  }
  const command = COMMANDS.find((c) => c.name === name);
  if (!command) {
    io.err(`unknown command "${name}"; run \`npm run cli -- help\` for the list`);
    return 2;
  }
  if (args.includes('--help') || args.includes('-h')) {
    io.out(`usage: npm run cli -- ${command.name} ${command.usage}\n  ${command.summary}`);
    return 0;
  }
  try {
    return (await command.run(args, io)) ?? 0;
  } catch (error) {
    for (const line of problemsOf(error)) io.err(`${command.name}: ${line}`);
    return error instanceof CliError ? error.code : 1;
  }
}

function problemsOf(error: unknown): string[] {
  if (error instanceof CliError) return error.problems;
  if (error instanceof ConfigError) return error.message.split('\n').map((line) => `config: ${line}`);
  if (error instanceof DataDirLockedError) return [error.message];
  if (isDatabaseUnavailable(error)) return [`cannot reach the database: ${firstLine(error)}`];
  return [`unexpected error: ${firstLine(error)}`];
}

const firstLine = (error: unknown) => (error instanceof Error ? error.message : String(error)).trim().split('\n')[0]!;

/** The real process: environment, stdout/stderr, and the configured database. */
export function processIo(env: NodeJS.ProcessEnv = process.env): CliIo {
  const config = () => {
    try {
      return loadConfig(env);
    } catch (error) {
      if (error instanceof ConfigError) throw new CliError(error.message.split('\n').map((line) => `config: ${line}`));
      throw error;
    }
  };
  return {
    env,
    out: (line) => process.stdout.write(`${line}\n`),
    err: (line) => process.stderr.write(`${line}\n`),
    progressStream: process.stderr.isTTY ? process.stderr : undefined,
    config,
    async withDb(work, options = {}) {
      const { databaseUrl, databaseDirectUrl: directUrl, dataDir } = config();
      const db = await openDatabase({ databaseUrl, directUrl, dataDir, poolMax: 2, onConnectionError: () => {} });
      try {
        if (options.migrate !== false) await applyMigrations(db);
        return await work(db);
      } finally {
        await db.close();
      }
    },
  };
}

/** The process's whole run: `npm run cli` calls it from the build or through tsx (scripts/cli.mjs). */
export async function main(argv: string[] = process.argv.slice(2)): Promise<void> {
  loadDotenv(); // same rule as src/main.ts, so the CLI and the server find the same database
  const code = await runCli(argv, processIo());
  // Exit once the output is flushed, even if a driver left a timer behind.
  process.stdout.write('', () => process.exit(code));
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
