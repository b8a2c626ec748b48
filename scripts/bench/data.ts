// npm run bench:data -- [--contacts 100000] [--deals N] [--invoices N] [--submissions N]
//                       [--companies N] [--notes N] [--tasks N] [--small-accounts 50] [--force]
// Creates (and migrates) the bench database and fills it, with a progress bar; a finished dataset
// of the same size is kept unless --force. `npm run bench` calls the same code when data is missing.
import cliProgress from 'cli-progress';
import { benchDatabaseUrl, DEFAULT_CONTACTS, intFlag, parseFlags } from './common.js';
import { describe, ensureDataset, sizeFor, type DatasetSize, type Progress } from './dataset.js';

export const DATA_FLAGS = ['contacts', 'deals', 'invoices', 'submissions', 'companies', 'notes', 'tasks', 'small-accounts', 'force'];

export function sizeFromFlags(flags: Record<string, string>): DatasetSize {
  const contacts = intFlag(flags, 'contacts', DEFAULT_CONTACTS, 1, 1_000_000);
  const base = sizeFor(contacts);
  return {
    contacts,
    deals: intFlag(flags, 'deals', base.deals, 0, 1_000_000),
    invoices: intFlag(flags, 'invoices', base.invoices, 0, 1_000_000),
    submissions: intFlag(flags, 'submissions', base.submissions, 0, 1_000_000),
    companies: intFlag(flags, 'companies', base.companies, 0, 1_000_000),
    notes: intFlag(flags, 'notes', base.notes, 0, 1_000_000),
    tasks: intFlag(flags, 'tasks', base.tasks, 0, 1_000_000),
    smallAccounts: intFlag(flags, 'small-accounts', base.smallAccounts, 0, 1000),
  };
}

/** A progress bar over all rows of the large account, then the small accounts, on stderr (TTY only). */
export function progressBar(size: DatasetSize): { onProgress: (p: Progress) => void; stop(): void } {
  const bar = new cliProgress.SingleBar(
    {
      stream: process.stderr,
      format: '{phase} [{bar}] {percentage}% | {value}/{total} | {rate} rows/s | ETA {eta_formatted}',
      hideCursor: true,
      etaBuffer: 50,
    },
    cliProgress.Presets.shades_classic,
  );
  const order: Progress['phase'][] = ['contacts', 'deals', 'invoices', 'submissions'];
  const sizes = [size.contacts, size.deals, size.invoices, size.submissions];
  const rowsTotal = sizes.reduce((a, b) => a + b, 0);
  const started = Date.now();
  let phase: Progress['phase'] | null = null;
  return {
    onProgress: (p) => {
      const index = order.indexOf(p.phase);
      if (index >= 0) {
        const done = sizes.slice(0, index).reduce((a, b) => a + b, 0) + p.done;
        const rate = Math.round(done / Math.max(0.001, (Date.now() - started) / 1000));
        if (phase === null) bar.start(rowsTotal, 0, { phase: p.phase.padEnd(14), rate });
        bar.update(done, { phase: p.phase.padEnd(14), rate });
      } else {
        if (phase !== p.phase) {
          bar.stop();
          bar.start(p.total, 0, { phase: p.phase.padEnd(14), rate: '-' });
        }
        bar.update(p.done, { phase: p.phase.padEnd(14), rate: '-' });
      }
      phase = p.phase;
    },
    stop: () => bar.stop(),
  };
}

async function main() {
  const flags = parseFlags(process.argv.slice(2), DATA_FLAGS);
  const size = sizeFromFlags(flags);
  const url = benchDatabaseUrl(size.contacts);
  const bar = progressBar(size);
  const started = Date.now();
  try {
    const dataset = await ensureDataset(url, size, {
      force: flags.force === 'true',
      onProgress: bar.onProgress,
      log: (line) => process.stderr.write(`${line}\n`),
    });
    bar.stop();
    const seconds = (Date.now() - started) / 1000;
    process.stdout.write(
      `${describe(size)}\n  database ${new URL(url).pathname.slice(1)}, account ${dataset.accountId}, owner ${dataset.ownerId}, form ${dataset.formId}\n  ready in ${seconds.toFixed(1)} s\n`,
    );
  } finally {
    bar.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((error: unknown) => {
    process.stderr.write(`bench:data: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  });
}
