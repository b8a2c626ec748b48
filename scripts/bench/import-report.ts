// The import bench's report (scripts/bench/import.ts): its numbers, the targets they are judged
// against, and the text printed at the end.

/** The issue's performance targets for a 1,000,000-row import. */
export const IMPORT_TARGETS = { overLimit: 0.3, rssGrowthMb: 100, listP99Ratio: 2, besideSeconds: 5 };

export type Latencies = { requests: number; failures: number; p50: number; p99: number };
export type ImportReport = {
  startedAt: string; database: string; rows: number; fileMb: number; generateSeconds: number;
  limit: { seconds: number; rowsPerSecond: number } | null;
  import: { id: string; status: string; seconds: number; intakeSeconds: number; rowsPerSecond: number; created: number; updated: number; failed: number; error: string | null };
  /** `storedMb`: the service's RSS when the file was stored (the intake's share of the growth). */
  rss: { beforeMb: number; storedMb: number; peakMb: number; growthMb: number; source: string };
  /** As the bench's client timed the requests, and as the service did (its request log). */
  list: { idle: Latencies; during: Latencies; service: { idle: Latencies; during: Latencies } };
  /** --beside: another account's one-row import posted while this one ran (docs/decisions.md §26). */
  beside?: { seconds: number; status: string; longStatus: string; longRowsProcessed: number } | null;
  verdicts: string[];
};

export function verdicts(r: Omit<ImportReport, 'verdicts'>, pglite: boolean): string[] {
  // The targets are the PostgreSQL deployment's: on PGlite the numbers are shown, not judged.
  const judge = (ok: boolean) => (pglite ? 'info' : ok ? 'PASS' : 'MISS');
  const lines: string[] = [];
  if (r.import.status !== 'completed' || r.import.created !== r.rows) lines.push(`MISS  the import ended ${r.import.status} with ${r.import.created} of ${r.rows} rows created, ${r.import.failed} failed${r.import.error ? `: ${r.import.error}` : ''}`);
  if (r.limit) {
    const ratio = r.import.rowsPerSecond / r.limit.rowsPerSecond;
    lines.push(`${judge(ratio >= IMPORT_TARGETS.overLimit)}  import ${fmt(r.import.rowsPerSecond)} rows/s = ${ratio.toFixed(2)}x COPY's ${fmt(r.limit.rowsPerSecond)} rows/s (target ≥ ${IMPORT_TARGETS.overLimit}x)`);
  }
  lines.push(`${judge(r.rss.growthMb <= IMPORT_TARGETS.rssGrowthMb)}  service RSS growth ${r.rss.growthMb.toFixed(0)} MB during the import (target ≤ ${IMPORT_TARGETS.rssGrowthMb} MB)`);
  const p99 = r.list.during.p99 / Math.max(r.list.idle.p99, 1);
  lines.push(`${judge(p99 <= IMPORT_TARGETS.listP99Ratio && r.list.during.failures === 0)}  GET /contacts p99 ${r.list.during.p99.toFixed(1)} ms during the import = ${p99.toFixed(2)}x idle's ${r.list.idle.p99.toFixed(1)} ms (target ≤ ${IMPORT_TARGETS.listP99Ratio}x)`);
  const { idle, during } = r.list.service;
  lines.push(`info  as the service timed them: p99 ${during.p99.toFixed(1)} ms during = ${(during.p99 / Math.max(idle.p99, 1)).toFixed(2)}x idle's ${idle.p99.toFixed(1)} ms`);
  if (r.beside) {
    const b = r.beside;
    lines.push(`${judge(b.status === 'completed' && b.seconds <= IMPORT_TARGETS.besideSeconds)}  another account's one-row import ${b.status} ${b.seconds.toFixed(2)} s after its POST, beside this one (${b.longStatus} at ${b.longRowsProcessed} rows then; target ≤ ${IMPORT_TARGETS.besideSeconds} s)`);
  }
  return lines;
}

const fmt = (n: number) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : '-');
const latency = (l: Latencies) => `${l.p50.toFixed(1)} / ${l.p99.toFixed(1)} ms (${l.requests} requests, ${l.failures} failed)`;

export function formatImportReport(r: ImportReport): string {
  return [
    `Import bench ${r.startedAt}: ${r.database}`,
    `rows                      ${r.rows} (${r.fileMb.toFixed(1)} MB CSV, generated in ${r.generateSeconds.toFixed(1)} s)`,
    `COPY limit                ${r.limit ? `${fmt(r.limit.rowsPerSecond)} rows/s (${r.limit.seconds.toFixed(1)} s)` : '- (no COPY on PGlite)'}`,
    `import                    ${fmt(r.import.rowsPerSecond)} rows/s (${r.import.seconds.toFixed(1)} s, file stored after ${r.import.intakeSeconds.toFixed(1)} s); ${r.import.status}: ${r.import.created} created, ${r.import.updated} updated, ${r.import.failed} failed`,
    `import / limit            ${r.limit ? (r.import.rowsPerSecond / r.limit.rowsPerSecond).toFixed(2) : '-'}`,
    `service RSS               ${r.rss.beforeMb.toFixed(0)} MB before, ${r.rss.storedMb.toFixed(0)} MB when the file was stored, peak ${r.rss.peakMb.toFixed(0)} MB (${r.rss.source}), growth ${r.rss.growthMb.toFixed(0)} MB`,
    `GET /contacts p50 / p99   idle ${latency(r.list.idle)}; during ${latency(r.list.during)}`,
    `  as the service timed it idle ${latency(r.list.service.idle)}; during ${latency(r.list.service.during)}`,
    ...(r.beside ? [`beside (another account)  a one-row import ${r.beside.status} in ${r.beside.seconds.toFixed(2)} s while this one was ${r.beside.longStatus} at ${r.beside.longRowsProcessed} rows`] : []),
    '',
    'Targets:',
    ...r.verdicts.map((line) => `  ${line}`),
  ].join('\n');
}
