// The four dashboard reports (docs/decisions.md §19, Reports) computed by plain SQL over the tables
// themselves, in the shape GraphQL answers them: what the API must equal.
import type { PrismaClient } from '../../src/generated/prisma/client.js';

export type ReportArgs = { from?: string | null; to?: string | null; asOf?: string; currency?: string };

type Sum = { key: string | null; n: number; value: string; weighted?: string };
const num = (text: string | null | undefined) => Number(text ?? 0);

export async function reportsBySql(db: PrismaClient, accountId: string, { from = null, to = null, asOf, currency }: ReportArgs) {
  const stages = await db.$queryRaw<(Sum & { id: string })[]>`
    SELECT s.id::text AS id, count(d.id)::int AS n, coalesce(sum(d.value), 0)::text AS value, coalesce(sum(d.value * d.probability::numeric / 100), 0)::text AS weighted
    FROM pipeline_stages s LEFT JOIN deals d ON d.account_id = s.account_id AND d.stage_id = s.id AND d.status = 'open'
    WHERE s.account_id = ${accountId}::uuid GROUP BY s.id, s.position, s.created_at ORDER BY s.position, s.created_at, s.id`;
  const [none] = await db.$queryRaw<Sum[]>`
    SELECT count(*)::int AS n, coalesce(sum(value), 0)::text AS value, coalesce(sum(value * probability::numeric / 100), 0)::text AS weighted
    FROM deals WHERE account_id = ${accountId}::uuid AND status = 'open' AND stage_id IS NULL`;
  const pipeline = stages.map((s) => ({ stage: { id: s.id }, count: s.n, value: num(s.value), weightedValue: num(s.weighted) }));
  if (none!.n > 0) pipeline.push({ stage: null as never, count: none!.n, value: num(none!.value), weightedValue: num(none!.weighted) });

  const byStatus = await db.$queryRaw<Sum[]>`
    SELECT s.status::text AS key, count(d.id)::int AS n, coalesce(sum(d.value), 0)::text AS value
    FROM unnest(enum_range(NULL::deal_status)) WITH ORDINALITY AS s(status, ord)
    LEFT JOIN deals d ON d.account_id = ${accountId}::uuid AND d.status = s.status
      AND (${from}::date IS NULL OR (d.created_at AT TIME ZONE 'UTC')::date >= ${from}::date)
      AND (${to}::date IS NULL OR (d.created_at AT TIME ZONE 'UTC')::date <= ${to}::date)
    GROUP BY s.status, s.ord ORDER BY s.ord`;
  const won = await db.$queryRaw<Sum[]>`
    SELECT to_char(closed_at AT TIME ZONE 'UTC', 'YYYY-MM') AS key, count(*)::int AS n, sum(value)::text AS value
    FROM deals WHERE account_id = ${accountId}::uuid AND status = 'won' AND closed_at IS NOT NULL
      AND (${from}::date IS NULL OR (closed_at AT TIME ZONE 'UTC')::date >= ${from}::date)
      AND (${to}::date IS NULL OR (closed_at AT TIME ZONE 'UTC')::date <= ${to}::date)
    GROUP BY 1 ORDER BY 1`;

  const on = asOf ?? new Date().toISOString().slice(0, 10);
  // Receivables are one currency's (docs/decisions.md §26): the one asked, else the account's default.
  const code = currency ?? (await db.account.findUniqueOrThrow({ where: { id: accountId }, select: { defaultCurrency: true } })).defaultCurrency;
  const buckets = await db.$queryRaw<(Sum & { label: string })[]>`
    SELECT b.label, count(i.id)::int AS n, coalesce(sum(i.amount - i.amount_paid), 0)::text AS value
    FROM (VALUES (1, 'current', -1000000, 0), (2, '1-30', 1, 30), (3, '31-60', 31, 60), (4, '61-90', 61, 90), (5, 'over-90', 91, 1000000)) AS b(ord, label, lo, hi)
    LEFT JOIN invoices i ON i.account_id = ${accountId}::uuid AND i.status IN ('sent', 'viewed', 'partial', 'overdue') AND i.currency = ${code}
      AND ${on}::date - i.due_date BETWEEN b.lo AND b.hi
    GROUP BY b.ord, b.label ORDER BY b.ord`;
  const [outstanding] = await db.$queryRaw<Sum[]>`
    SELECT count(*)::int AS n, coalesce(sum(amount - amount_paid), 0)::text AS value FROM invoices
    WHERE account_id = ${accountId}::uuid AND status IN ('sent', 'viewed', 'partial', 'overdue') AND currency = ${code}`;

  const keyCounts = (column: 'contact_type' | 'source', type: 'contact_type' | 'contact_source') => db.$queryRawUnsafe<{ key: string; count: number }[]>(
    `SELECT k.key::text AS key, count(c.id)::int AS count FROM unnest(enum_range(NULL::${type})) WITH ORDINALITY AS k(key, ord)
     LEFT JOIN contacts c ON c.account_id = $1::uuid AND c.${column} = k.key GROUP BY k.key, k.ord ORDER BY k.ord`,
    accountId,
  );

  return {
    pipeline,
    dealSummary: {
      byStatus: byStatus.map((s) => ({ key: s.key, count: s.n, value: num(s.value) })),
      wonByMonth: won.map((m) => ({ month: m.key, count: m.n, value: num(m.value) })),
    },
    receivables: {
      currency: code,
      total: num(outstanding!.value),
      count: outstanding!.n,
      buckets: buckets.map((b) => ({ label: b.label, count: b.n, amount: num(b.value) })),
    },
    contactBreakdown: { byType: await keyCounts('contact_type', 'contact_type'), bySource: await keyCounts('source', 'contact_source') },
  };
}

/** The selection of all four reports on Account (GraphQL's shape, which reportsBySql answers). */
export const REPORTS_SELECTION = `
  pipeline { stage { id } count value weightedValue }
  dealSummary(from: $from, to: $to) { byStatus { key count value } wonByMonth { month count value } }
  receivables(asOf: $asOf, currency: $currency) { currency total count buckets { label count amount } }
  contactBreakdown { byType { key count } bySource { key count } }`;

export const ACCOUNT_REPORTS = `query ($id: ID!, $from: Date, $to: Date, $asOf: Date, $currency: String) { account(id: $id) { ${REPORTS_SELECTION} } }`;
