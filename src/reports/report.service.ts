// The dashboard reports (docs/decisions.md §19, Reports). Each is one statement over report_sums
// (and record_counts), which triggers keep in every write's transaction: a few hundred rows
// whatever the account's size, and exact, since money is summed as numeric and read as text.
import { z } from 'zod';
import { Prisma, type PrismaClient } from '../generated/prisma/client.js';
import { ContactSource, ContactType, DealStatus } from '../generated/prisma/enums.js';
import { STAGE_ORDER } from '../deals/stage.service.js';
import { argsRuleOf, idField, type FieldSpec } from '../model/field-spec.js';
import { currency } from '../invoices/invoice-money.js';
import { exponentOf, formatMinor, scaled } from '../invoices/money.js';
import { defaultCurrencyOf } from '../accounts/account.service.js';

// ---- arguments -------------------------------------------------------------------------------

const FROM = 'First UTC day, inclusive';
const TO = 'Last UTC day, inclusive; not before `from`';
const AS_OF = 'The day days past due are counted to; default today (UTC)';
const CURRENCY = 'Only this currency (ISO 4217); every currency, each apart, when absent';
const RECEIVABLES_CURRENCY = "The currency reported (ISO 4217); the account's defaultCurrency when absent";

// Each argument declared once: its GraphQL argument (argsOf, src/graphql/spec-fields.ts) and its rule (argsRuleOf).
const ACCOUNT = idField('accountId');
const PERIOD = [
  { name: 'from', type: 'Date', rule: z.date().nullish(), description: FROM },
  { name: 'to', type: 'Date', rule: z.date().nullish(), description: TO },
] as const satisfies readonly FieldSpec[];
const AS_OF_ARG = { name: 'asOf', type: 'Date', rule: z.date().nullish(), description: AS_OF } as const satisfies FieldSpec;
/** `currency`: the one receivables reports (docs/decisions.md §26); the account's defaultCurrency when absent. */
const RECEIVABLES = [AS_OF_ARG, { name: 'currency', type: 'String', rule: currency.nullish(), description: RECEIVABLES_CURRENCY }] as const satisfies readonly FieldSpec[];
/** A currency narrows revenue to it (ISO 4217; lower case is upper-cased; unknown: a 400 on `currency`). */
const REVENUE_ARGS = [...PERIOD, { name: 'currency', type: 'String', rule: currency.nullish(), description: CURRENCY }] as const satisfies readonly FieldSpec[];

/** The arguments of each report: on Account, then by account id. */
export const REPORT_ARGS = {
  period: PERIOD,
  receivables: RECEIVABLES,
  receivablesByCurrency: [AS_OF_ARG],
  revenue: REVENUE_ARGS,
  account: [ACCOUNT],
  dealReport: [ACCOUNT, ...PERIOD],
  receivablesReport: [ACCOUNT, ...RECEIVABLES],
  revenueReport: [ACCOUNT, ...REVENUE_ARGS],
} as const satisfies Record<string, readonly FieldSpec[]>;

/** Both bounds inclusive; `from` after `to` is refused on `from`. */
const inOrder = (p: { from?: Date | null; to?: Date | null }) => !p.from || !p.to || p.from <= p.to;
const FROM_AFTER_TO = { message: 'Must not be after `to`', path: ['from'] };

export const periodArgs = argsRuleOf(REPORT_ARGS.period).refine(inOrder, FROM_AFTER_TO);
export const reportArgs = argsRuleOf(REPORT_ARGS.account);
export const dealReportArgs = argsRuleOf(REPORT_ARGS.dealReport).refine(inOrder, FROM_AFTER_TO);
export const receivablesArgs = argsRuleOf(REPORT_ARGS.receivables);
export const receivablesByCurrencyArgs = argsRuleOf(REPORT_ARGS.receivablesByCurrency);
export const receivablesReportArgs = argsRuleOf(REPORT_ARGS.receivablesReport);
export const revenueArgs = argsRuleOf(REPORT_ARGS.revenue).refine(inOrder, FROM_AFTER_TO);
export const revenueReportArgs = argsRuleOf(REPORT_ARGS.revenueReport).refine(inOrder, FROM_AFTER_TO);

export type ReportArgs = z.output<typeof reportArgs>;
export type Period = z.output<typeof periodArgs>;
export type DealReportArgs = z.output<typeof dealReportArgs>;
export type ReceivablesReportArgs = z.output<typeof receivablesReportArgs>;
export type ReceivablesArgs = z.output<typeof receivablesArgs>;
export type RevenueArgs = z.output<typeof revenueArgs>;
export type RevenueReportArgs = z.output<typeof revenueReportArgs>;

// ---- answers ---------------------------------------------------------------------------------

type Stage = { id: string; accountId: string; name: string; position: number };
export type PipelineStageSummary = { stage: Stage | null; count: number; value: number; weightedValue: number };
export type StatusCount = { key: string; count: number; value: number };
/** `currency`: revenue's (its entries are per currency); null in wonByMonth (a deal's value has none). */
export type MonthValue = { month: string; count: number; value: number; currency?: string | null };
export type DealSummary = { byStatus: StatusCount[]; wonByMonth: MonthValue[] };
export type AgingBucket = { label: string; count: number; amount: number };
export type Receivables = { currency: string; total: number; count: number; buckets: AgingBucket[] };
/** REST's /reports/receivables: the one currency's, and every currency's apart (`by_currency`). */
export type ReceivablesReport = Receivables & { byCurrency: Receivables[] };
export type KeyCount = { key: string; count: number };
export type ContactBreakdown = { byType: KeyCount[]; bySource: KeyCount[] };

/** Days past due: the upper bound of each bucket (inclusive), in the order they are answered. */
export const AGING_BUCKETS = [
  { label: 'current', upTo: 0 },
  { label: '1-30', upTo: 30 },
  { label: '31-60', upTo: 60 },
  { label: '61-90', upTo: 90 },
  { label: 'over-90', upTo: Infinity },
] as const;

type SumRow = { key: string; n: string; value: string; weighted: string };

const account = (id: string) => Prisma.sql`CAST(${id} AS uuid)`;
const day = (d: Date) => Prisma.sql`CAST(${d.toISOString().slice(0, 10)} AS date)`;
/** Every slot of a report's keys, summed; numbers as text so no digit is lost on the way. */
const sums = (accountId: string, report: string, keyExpr: Prisma.Sql, extra: Prisma.Sql = Prisma.empty) => Prisma.sql`
  SELECT ${keyExpr} AS key, sum(n)::text AS n, sum(value)::text AS value, (sum(weighted) / 100)::text AS weighted
  FROM report_sums WHERE account_id = ${account(accountId)} AND report = ${report} ${extra}
  GROUP BY 1 HAVING sum(n) <> 0`;

const byKey = (rows: SumRow[]) => new Map(rows.map((r) => [r.key, r]));
const count = (row: SumRow | undefined) => Number(row?.n ?? 0);
const money = (text: string | undefined) => Number(text ?? 0);

/** Every stage in pipeline order (zeros included), then the open deals without a stage when there are any. */
export async function pipeline(db: PrismaClient, accountId: string): Promise<PipelineStageSummary[]> {
  const [rows, stages] = await Promise.all([
    db.$queryRaw<SumRow[]>(sums(accountId, 'pipeline', Prisma.sql`key`)),
    db.pipelineStage.findMany({ where: { accountId }, orderBy: STAGE_ORDER }),
  ]);
  const found = byKey(rows);
  const summary = (stage: Stage | null, row: SumRow | undefined) => ({ stage, count: count(row), value: money(row?.value), weightedValue: money(row?.weighted) });
  const answer = stages.map((stage) => summary(stage, found.get(stage.id)));
  const none = found.get('');
  if (none) answer.push(summary(null, none));
  return answer;
}

/** byStatus: deals created from `from` to `to` (UTC days, inclusive), every status; wonByMonth: won deals by the month of closedAt in the same days. */
export async function dealSummary(db: PrismaClient, accountId: string, { from, to }: Period): Promise<DealSummary> {
  const days = Prisma.join([Prisma.sql`AND TRUE`, ...(from ? [Prisma.sql`day >= ${day(from)}`] : []), ...(to ? [Prisma.sql`day <= ${day(to)}`] : [])], ' AND ');
  const [created, won] = await Promise.all([
    db.$queryRaw<SumRow[]>(sums(accountId, 'deals_created', Prisma.sql`key`, days)),
    db.$queryRaw<SumRow[]>(Prisma.sql`${sums(accountId, 'deals_won', Prisma.sql`to_char(day, 'YYYY-MM')`, days)} ORDER BY 1`),
  ]);
  const found = byKey(created);
  return {
    byStatus: Object.values(DealStatus).map((key) => ({ key, count: count(found.get(key)), value: money(found.get(key)?.value) })),
    wonByMonth: won.map((row) => ({ month: row.key, count: count(row), value: money(row.value) })),
  };
}

/** The aging bucket (its index, as text) of an entry's due day on `asOf`. */
function bucketOf(asOf: Date | null | undefined): Prisma.Sql {
  const pastDue = Prisma.sql`(${day(asOf ?? new Date())} - day)`;
  const whens = AGING_BUCKETS.slice(0, -1).map((b, i) => Prisma.sql`WHEN ${pastDue} <= ${Prisma.raw(String(b.upTo))} THEN '${Prisma.raw(String(i))}'`);
  return Prisma.sql`CASE ${Prisma.join(whens, ' ')} ELSE '${Prisma.raw(String(AGING_BUCKETS.length - 1))}' END`;
}

/** One currency's receivables from its buckets' sums (bucket index -> row). */
function receivablesOf(currency: string, found: Map<string, SumRow>): Receivables {
  const buckets = AGING_BUCKETS.map((b, i) => ({ label: b.label, count: count(found.get(String(i))), amount: money(found.get(String(i))?.value) }));
  const exponent = exponentOf(currency);
  return {
    currency,
    count: buckets.reduce((n, b) => n + b.count, 0),
    // Summed in SQL would be one more statement; the five amounts are exact in the currency's minor units, so is their sum.
    total: Number(formatMinor(buckets.reduce((n, b) => n + scaled(b.amount, exponent), 0n), exponent)),
    buckets,
  };
}

/**
 * Outstanding invoices (sent, viewed, partial, overdue) in one currency (default: the account's
 * defaultCurrency) by days past due on `asOf` (default: today, UTC). Never a sum across currencies
 * (docs/decisions.md §26): the entries are keyed by the invoice's currency.
 */
export async function receivables(db: PrismaClient, accountId: string, { asOf, currency }: ReceivablesArgs): Promise<Receivables> {
  const code = currency ?? (await defaultCurrencyOf(db, accountId));
  const found = byKey(await db.$queryRaw<SumRow[]>(sums(accountId, 'receivables', bucketOf(asOf), Prisma.sql`AND key = ${code}`)));
  return receivablesOf(code, found);
}

/** Every currency with outstanding invoices, each apart, by currency code; none owed: an empty list. */
export async function receivablesByCurrency(db: PrismaClient, accountId: string, asOf: Date | null | undefined): Promise<Receivables[]> {
  const rows = await db.$queryRaw<(SumRow & { currency: string })[]>`
    SELECT key AS currency, bucket AS key, sum(n)::text AS n, sum(value)::text AS value, '0' AS weighted FROM (
      SELECT key, ${bucketOf(asOf)} AS bucket, n, value FROM report_sums WHERE account_id = ${account(accountId)} AND report = 'receivables'
    ) AS e GROUP BY 1, 2 HAVING sum(n) <> 0 ORDER BY 1, 2`;
  const byCurrency = new Map<string, Map<string, SumRow>>();
  for (const row of rows) {
    if (!byCurrency.has(row.currency)) byCurrency.set(row.currency, new Map());
    byCurrency.get(row.currency)!.set(row.key, row);
  }
  return [...byCurrency].map(([code, found]) => receivablesOf(code, found));
}

/** REST's /reports/receivables: the one currency asked (or the account's), with every currency's apart. */
export async function receivablesReport(db: PrismaClient, accountId: string, args: ReceivablesArgs): Promise<ReceivablesReport> {
  const [one, byCurrency] = await Promise.all([receivables(db, accountId, args), receivablesByCurrency(db, accountId, args.asOf)]);
  return { ...one, byCurrency };
}

/**
 * Payments by the UTC month of paidAt less refunds by the month they were made, per currency (never
 * summed across currencies), month then currency code; `count` is the payments. Months with neither
 * are left out; a month with refunds alone has count 0 and a negative value.
 */
export async function revenue(db: PrismaClient, accountId: string, { from, to, currency }: RevenueArgs): Promise<MonthValue[]> {
  const where = [Prisma.sql`AND TRUE`, ...(from ? [Prisma.sql`AND day >= ${day(from)}`] : []), ...(to ? [Prisma.sql`AND day <= ${day(to)}`] : []), ...(currency ? [Prisma.sql`AND key = ${currency}`] : [])];
  const rows = await db.$queryRaw<{ month: string; currency: string; n: string; value: string }[]>`
    SELECT to_char(day, 'YYYY-MM') AS month, key AS currency, sum(n)::text AS n, sum(value)::text AS value
    FROM report_sums WHERE account_id = ${account(accountId)} AND report = 'revenue' ${Prisma.join(where, ' ')}
    GROUP BY 1, 2 HAVING sum(n) <> 0 OR sum(value) <> 0 ORDER BY 1, 2`;
  return rows.map((row) => ({ month: row.month, currency: row.currency, count: Number(row.n), value: money(row.value) }));
}

/** Every contact type and source, zeros included, in the order the API lists their values. */
export async function contactBreakdown(db: PrismaClient, accountId: string): Promise<ContactBreakdown> {
  const rows = await db.$queryRaw<{ kind: string; key: string; n: string }[]>`
    SELECT 'type' AS kind, key, sum(n)::text AS n FROM record_counts
    WHERE account_id = ${account(accountId)} AND table_name = 'contacts' GROUP BY key
    UNION ALL
    SELECT 'source', key, sum(n)::text FROM report_sums
    WHERE account_id = ${account(accountId)} AND report = 'contact_source' GROUP BY key`;
  const found = new Map(rows.map((r) => [`${r.kind}:${r.key}`, Number(r.n)]));
  const counts = (kind: string, keys: string[]) => keys.map((key) => ({ key, count: found.get(`${kind}:${key}`) ?? 0 }));
  return { byType: counts('type', Object.values(ContactType)), bySource: counts('source', Object.values(ContactSource)) };
}
