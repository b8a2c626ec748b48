import { randomBytes } from 'node:crypto';
import cliProgress from 'cli-progress';
import { z } from 'zod';
import { localBaseUrl, seedDemo } from '../demo.js';
import { uuid } from '../validation.js';
import { CliError, parseOptions, usageError, validate, type CliIo, type Command } from './command.js';
import { seedBench, type BenchPhase, type BenchProgress } from './seed-bench.js';
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
  const seeded = await io.withDb((db) => seedDemo(db.prisma, secret ?? randomBytes(32).toString('base64url'), config.auth)); // the server enforces a configured issuer and audience
  // The port the server will listen on with this same configuration (PORT, .env); 0 = chosen at its start.
  if (secret && config.port === 0) io.err('PORT=0: the server picks its port when it starts; put the one its "listening" line names in place of <port>');
  if (secret) io.out(seeded.banner(localBaseUrl(config.host, config.port || null)).trim());
  else io.out('Demo account ready (no token: tokens come from your identity provider).');
}

async function bench(io: CliIo, args: string[], command: Command): Promise<void> {
  const { values } = parseOptions(command, args, {
    contacts: { type: 'string' }, deals: { type: 'string' }, invoices: { type: 'string' },
    submissions: { type: 'string' }, account: { type: 'string' }, seed: { type: 'string' },
  });
  if (values.contacts === undefined) throw usageError(command, '--contacts is required');
  const input = validate(benchInput, { ...values, accountId: values.account, account: undefined }, BENCH_FLAGS);
  const bars = io.progressStream ? phaseBars(io.progressStream) : null;
  try {
    // The bars start once the database is open, so their ETAs are fair.
    const result = await io.withDb((db) => seedBench(db.prisma, { ...input, onProgress: bars?.update }));
    bars?.stop();
    io.out(
      `account ${result.accountId} (owner ${result.ownerId}): ${result.contacts} contacts, ${result.deals} deals, ` +
        `${result.invoices} invoices, form ${result.formId} with ${result.submissions} submissions`,
    );
  } catch (error) {
    bars?.stop();
    if (error instanceof RangeError && error.message.startsWith('seedBench: ')) throw new CliError([error.message.slice(11)]);
    throw error;
  }
}

/** One bar per phase, each counting that phase's rows ("deals [####] 40% | 1600/4000"), left on screen when done. */
function phaseBars(stream: NodeJS.WritableStream) {
  const multi = new cliProgress.MultiBar(
    { stream, format: '{phase} [{bar}] {percentage}% | {value}/{total} | ETA {eta_formatted}', hideCursor: true, clearOnComplete: false },
    cliProgress.Presets.shades_classic,
  );
  const bars = new Map<BenchPhase, cliProgress.SingleBar>();
  return {
    update: ({ phase, done, total }: BenchProgress) => {
      let bar = bars.get(phase);
      if (!bar) bars.set(phase, (bar = multi.create(total, 0, { phase: phase.padEnd(11) })));
      bar.update(done);
    },
    stop: () => multi.stop(),
  };
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
