// `npm run bench` end to end on a tiny dataset, so the benchmark cannot rot between the runs that
// matter: it generates data, starts the service, the floor and PostGraphile, drives every case,
// measures both exports and prints the table. Real PostgreSQL: runs when DATABASE_URL is set, else skips (fails in CI).
import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_DATABASE_URL, dropDatabase, withDatabase } from '../../scripts/bench/common.js';
import { CASE_NAMES, formatReport, runBench, type BenchReport } from '../../scripts/bench/run.js';
import { skipIfMissing, unsetVariables } from '../helpers/prerequisites.js';

/** The cases PostGraphile has an equivalent request for (scripts/bench/postgraphile-cases.ts). */
const POSTGRAPHILE_CASES = ['contacts-first', 'contacts-type', 'deals', 'invoices', 'companies', 'graphql-contacts', 'graphql-connection', 'create-contact', 'create-deal'];

const url = withDatabase(process.env.DATABASE_URL || DEFAULT_DATABASE_URL, `crm_bench_smoke_${randomUUID().slice(0, 8)}`);

describe.skipIf(skipIfMissing(unsetVariables('DATABASE_URL')))('npm run bench (500 contacts, 2 s per case)', () => {
  let report: BenchReport;
  afterAll(() => dropDatabase(url));

  it('runs every case against the service, the floor and PostGraphile (where it has a twin) and prints the table', async () => {
    const lines: string[] = [];
    report = await runBench({
      size: { contacts: 500, deals: 100, invoices: 100, submissions: 50, companies: 50, notes: 50, tasks: 50, smallAccounts: 2 },
      databaseUrl: url,
      // Two seconds: on a busy 2-core machine the slowest cases (Query.search over six types, a
      // contact's timeline) can take over one at 16 connections, and a window with no answer says
      // nothing about whether the case still works, which is what this test judges.
      duration: 2,
      rounds: 1,
      warmup: 0.1,
      connections: 16,
      poolMax: 5,
      deepPage: 3,
      search: 'an',
      type: 'client',
      exports: true,
      logLevel: 'warn',
      log: (line) => lines.push(line),
    });

    expect(report.cases.map((c) => c.name)).toEqual(CASE_NAMES);
    for (const c of report.cases) {
      // Same status, same shape and the same first row from the floor, the same rows and total from
      // PostGraphile without `errors` (no CHECK FAILED), and every server answered.
      expect(c.check, c.name).toBe('ok');
      expect(c.service.rps, c.name).toBeGreaterThan(0);
      expect(c.service.failures, c.name).toBe(0);
      expect(c.floor?.rps ?? 1, c.name).toBeGreaterThan(0);
      if (POSTGRAPHILE_CASES.includes(c.name)) {
        expect(c.postgraphile?.rps, c.name).toBeGreaterThan(0);
        expect(c.postgraphile?.failures, c.name).toBe(0);
      } else {
        expect(c.postgraphile, c.name).toBeNull();
      }
    }
    const [csv, json] = report.exports;
    expect(csv).toMatchObject({ name: 'export-csv', rows: 500 });
    // Contacts, deals, invoices, submissions, stages, members, the form and its fields, the audit row.
    expect(json!.rows).toBeGreaterThan(750);
    expect(csv!.rssPeak).toBeGreaterThanOrEqual(csv!.rssBefore);

    const table = formatReport(report);
    expect(table).toContain('| case | service req/s | floor req/s | ratio | PostGraphile req/s | ratio |');
    expect(table).toContain("x PostGraphile's req/s");
    expect(table).toContain('GET /contacts (page 1)');
    expect(table).toContain('Targets:');
    // Issue #53: the timeline is judged against a contacts page.
    expect(table).toMatch(/(met|NOT met) +POST \/graphql \(a contact's timeline, 50 notes and tasks\): p50 [\d.]+x, p99 [\d.]+x/);
  }, 600_000);
});
