// What every CLI command shares: its shape, the I/O it is given (so tests can hand in their own
// database and capture output), option parsing, and turning expected failures into one-line problems.
import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { z } from 'zod';
import type { Config } from '../config.js';
import type { Database } from '../db/client.js';
import { isAppError } from '../errors.js';
import type { PrismaClient } from '../generated/prisma/client.js';
import { parseInput } from '../validation.js';

export type CliIo = {
  env: NodeJS.ProcessEnv;
  /** The result (a token, an id, a summary): what a script captures. */
  out(line: string): void;
  /** Notes for the person at the terminal; progress bars draw here too. */
  err(line: string): void;
  /** Where a progress bar may draw; absent = no bar. */
  progressStream?: NodeJS.WritableStream;
  /** The validated configuration (throws CliError listing every problem). */
  config(): Config;
  /**
   * Opens the configured database (pending migrations applied first unless `migrate: false`),
   * runs `work`, and always closes it again.
   */
  withDb<T>(work: (db: Database) => Promise<T>, options?: { migrate?: boolean }): Promise<T>;
};

export type Command = {
  name: string;
  /** Arguments after the name, e.g. `--user <uuid> [--expires 7d]`. */
  usage: string;
  summary: string;
  /** Resolves to the exit code (0 when omitted). */
  run(args: string[], io: CliIo): Promise<number | void>;
};

/** An expected failure: each line is one problem, printed as `<command>: <problem>`; exit `code`. */
export class CliError extends Error {
  constructor(readonly problems: string[], readonly code = 1) {
    super(problems.join('\n'));
  }
}

export const usageError = (command: Command, problem: string) =>
  new CliError([`${problem} (usage: npm run cli -- ${command.name} ${command.usage})`], 2);

/** node:util parseArgs, strict, with its errors turned into one usage line. */
export function parseOptions<T extends NonNullable<ParseArgsConfig['options']>>(
  command: Command,
  args: string[],
  options: T,
  allowPositionals = false,
) {
  try {
    return parseArgs({ args, options, strict: true, allowPositionals });
  } catch (error) {
    // Node's messages may span lines and suggest `--`; a problem is reported on one line.
    const message = (error instanceof Error ? error.message : String(error)).replace(/\. To specify a positional argument.*$/s, '').replace(/\s*\n\s*/g, ' ');
    throw usageError(command, message);
  }
}

export function requireOption<T>(command: Command, values: Record<string, T | undefined>, name: string): T {
  const value = values[name];
  if (value === undefined || value === '') throw usageError(command, `--${name} is required`);
  return value;
}

/**
 * Validates with the core's own zod schema (never a copy of its rules); the problems name the
 * command-line flag when `flags` maps the input field to one (`{ accountId: '--account' }`). A value
 * a flag cannot take (`--user abc`, `--expires forever`) is a usage mistake: exit 2, like a missing flag.
 */
export function validate<S extends z.ZodType>(schema: S, value: unknown, flags: Record<string, string> = {}): z.output<S> {
  try {
    return parseInput(schema, value);
  } catch (error) {
    const flagged = isAppError(error) && Object.keys(error.details ?? {}).some((key) => key in flags);
    throw fromCoreError(error, flags, flagged ? 2 : 1) ?? error;
  }
}

/** A core AppError as CLI problems, one per message (exit `code`); null for anything unexpected. */
export function fromCoreError(error: unknown, flags: Record<string, string> = {}, code = 1): CliError | null {
  if (!isAppError(error)) return null;
  if (!error.details) return new CliError([error.message], code);
  const problems = Object.entries(error.details).flatMap(([key, messages]) =>
    messages.map((message) => `${flags[key] ?? key}: ${message}`),
  );
  return new CliError(problems, code);
}

/** Fails with one clear line when the account does not exist; returns its owner. */
export async function findAccount(db: PrismaClient, accountId: string): Promise<{ id: string; ownerId: string; name: string }> {
  const account = await db.account.findUnique({ where: { id: accountId }, select: { id: true, ownerId: true, name: true } });
  if (!account) throw new CliError([`account ${accountId} not found`]);
  return account;
}
