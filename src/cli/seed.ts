import { randomBytes } from 'node:crypto';
import cliProgress from 'cli-progress';
import { z } from 'zod';
import { seedDemo } from '../demo.js';
import { uuid } from '../validation.js';
import { CliError, parseOptions, usageError, validate, type CliIo, type Command } from './command.js';
import { benchDefaults, seedBench, type BenchPhase } from './seed-bench.js';
import { signingSecret } from './token.js';

const count = (max: number) =>
  z.coerce.number().int('Must be a whole number').min(0, `Must be from 0 to ${max}`).max(max, `Must be from 0 to ${max}`).optional();

const benchInput = z.object({
  accountId: uuid.optional(),
  contacts: z.coerce.number().int('Must be a whole number').min(1, 'Must be from 1 to 5000000').max(5_000_000, 'Must be from 1 to 5000000'),
  deals: count(5_000_000),
  invoices: count(5_000_000),
  submissions: count(5_000_000),
  seed: z.coerce.number().int('Must be a whole number').optional(),
});

const BENCH_FLAGS = { accountId: '--account', contacts: '--contacts', deals: '--deals', invoices: '--invoices', submissions: '--submissions', seed: '--seed' };

async function demo(io: CliIo): Promise<void> {
  const config = io.config();
  // The demo data needs no secret; without one (JWKS only) no token can be printed.
  const secret = await signingSecret(config).catch((error: unknown) => (error instanceof CliError ? null : Promise.reject(error)));
  const seeded = await io.withDb((db) => seedDemo(db.prisma, secret ?? randomBytes(32).toString('base64url')));
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  if (secret) io.out(seeded.banner(`http://${host}:${config.port}`).trim());
  else io.out('Demo account ready (no token: tokens come from your identity provider).');
}

async function bench(io: CliIo, args: string[], command: Command): Promise<void> {
  const { values } = parseOptions(command, args, {
    contacts: { type: 'string' }, deals: { type: 'string' }, invoices: { type: 'string' },
    submissions: { type: 'string' }, account: { type: 'string' }, seed: { type: 'string' },
  });
  if (values.contacts === undefined) throw usageError(command, '--contacts is required');
  const input = validate(benchInput, { ...values, accountId: values.account, account: undefined }, BENCH_FLAGS);
  const defaults = benchDefaults(input.contacts);
  const total = input.contacts + (input.deals ?? defaults.deals) + (input.invoices ?? defaults.invoices) + (input.submissions ?? defaults.submissions);
  const bar = io.progressStream
    ? new cliProgress.SingleBar(
        { stream: io.progressStream, format: '{phase} [{bar}] {percentage}% | {value}/{total} rows | ETA {eta_formatted}', hideCursor: true },
        cliProgress.Presets.shades_classic,
      )
    : null;
  const before: Record<BenchPhase, number> = { contacts: 0, deals: 0, invoices: 0, submissions: 0 };
  let offset = 0;
  let started = false;
  try {
    const result = await io.withDb((db) =>
      seedBench(db.prisma, {
        ...input,
        onProgress: ({ phase, done, total: phaseTotal }) => {
          if (!started) bar?.start(total, 0, { phase: phase.padEnd(11) }); // once the database is open: a fair ETA
          started = true;
          if (done === 0) before[phase] = offset;
          if (done === phaseTotal) offset = before[phase] + phaseTotal;
          bar?.update(before[phase] + done, { phase: phase.padEnd(11) });
        },
      }),
    );
    bar?.stop();
    io.out(
      `account ${result.accountId} (owner ${result.ownerId}): ${result.contacts} contacts, ${result.deals} deals, ` +
        `${result.invoices} invoices, form ${result.formId} with ${result.submissions} submissions`,
    );
  } catch (error) {
    bar?.stop();
    if (error instanceof RangeError && error.message.startsWith('seedBench: ')) throw new CliError([error.message.slice(11)]);
    throw error;
  }
}

export const seed: Command = {
  name: 'seed',
  usage: 'demo | bench --contacts <n> [--deals <n>] [--invoices <n>] [--submissions <n>] [--account <uuid>] [--seed <n>]',
  summary: 'seed the demo account (idempotent), or a benchmark dataset (deals and invoices default to 20% of contacts)',
  async run(args, io) {
    const [kind, ...rest] = args;
    if (kind === 'demo') {
      parseOptions(this, rest, {});
      return demo(io);
    }
    if (kind === 'bench') return bench(io, rest, this);
    throw usageError(this, kind ? `unknown dataset "${kind}"` : 'say which dataset: demo or bench');
  },
};
