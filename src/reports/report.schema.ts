/** Account.pipeline · dealSummary · receivables · contactBreakdown · revenue, and the root fields REST's /reports/* read (docs/decisions.md §19, Reports). */
import { AccountRef } from '../accounts/account.schema.js';
import { PipelineStageRef } from '../deals/stage.schema.js';
import { STAGES_PER_ACCOUNT } from '../deals/stage.service.js';
import { ContactSource, ContactType, DealStatus } from '../generated/prisma/enums.js';
import { builder } from '../graphql/builder.js';
import { READS_BEYOND_CONTRACT } from '../graphql/limits.js';
import { checked, type FieldRules } from '../graphql/rules.js';
import { argsOf } from '../graphql/spec-fields.js';
import { parseInput } from '../validation.js';
import {
  AGING_BUCKETS,
  contactBreakdown,
  dealReportArgs,
  dealSummary,
  periodArgs,
  pipeline,
  receivables,
  receivablesArgs,
  receivablesByCurrency,
  receivablesByCurrencyArgs,
  receivablesReport,
  receivablesReportArgs,
  REPORT_ARGS,
  type ReceivablesReport,
  reportArgs,
  revenue,
  revenueArgs,
  revenueReportArgs,
  type RevenueReportArgs,
  type AgingBucket,
  type ContactBreakdown,
  type DealReportArgs,
  type DealSummary,
  type KeyCount,
  type MonthValue,
  type PipelineStageSummary,
  type ReceivablesReportArgs,
  type ReportArgs,
  type StatusCount,
  type Receivables,
} from './report.service.js';

const PipelineStageSummaryRef = builder.objectRef<PipelineStageSummary>('PipelineStageSummary').implement({
  description: 'The open deals of one stage',
  fields: (t) => ({
    stage: t.field({ type: PipelineStageRef, nullable: true, description: 'null: the open deals without a stage', resolve: (s) => s.stage as never }),
    count: t.exposeInt('count'),
    value: t.exposeFloat('value'),
    weightedValue: t.exposeFloat('weightedValue', { description: 'Sum of value × probability / 100' }),
  }),
});

const StatusCountRef = builder.objectRef<StatusCount>('StatusCount').implement({
  fields: (t) => ({ key: t.exposeString('key'), count: t.exposeInt('count'), value: t.exposeFloat('value') }),
});

const MonthValueRef = builder.objectRef<MonthValue>('MonthValue').implement({
  fields: (t) => ({
    month: t.exposeString('month', { description: 'YYYY-MM' }),
    count: t.exposeInt('count'),
    value: t.exposeFloat('value'),
    currency: t.string({ nullable: true, description: "Revenue's currency (ISO 4217); null where the values have none (deals)", resolve: (m) => m.currency ?? null }),
  }),
});

/**
 * What the cost counts wonByMonth as: the period is optional (all time when left out), so the months
 * with won deals are bounded by the account's age only; ten years of them. A MonthValue is leaves, so
 * an older account is undercharged by its extra months alone, never by what they multiply.
 */
const MONTHS_COSTED = 120;

const DealSummaryRef = builder.objectRef<DealSummary>('DealSummary').implement({
  fields: (t) => ({
    byStatus: t.field({ type: [StatusCountRef], description: 'Deals created in the period, every status', maxItems: Object.values(DealStatus).length, resolve: (s) => s.byStatus }),
    wonByMonth: t.field({
      type: [MonthValueRef],
      description: 'Won deals by the UTC month of closedAt in the period, oldest first',
      maxItems: MONTHS_COSTED,
      resolve: (s) => s.wonByMonth,
    }),
  }),
});

const AgingBucketRef = builder.objectRef<AgingBucket>('AgingBucket').implement({
  fields: (t) => ({ label: t.exposeString('label'), count: t.exposeInt('count'), amount: t.exposeFloat('amount') }),
});

/** The fields of one currency's receivables, on Receivables and on REST's ReceivablesReport. */
const receivablesFields = (t: any) => ({
  currency: t.exposeString('currency', { description: 'ISO 4217: every amount here is in it (reports never add currencies)' }),
  total: t.exposeFloat('total'),
  count: t.exposeInt('count'),
  buckets: t.field({ type: [AgingBucketRef], description: 'current, 1-30, 31-60, 61-90, over-90 days past due: always five, in this order', maxItems: AGING_BUCKETS.length, resolve: (r: Receivables) => r.buckets }),
});

const ReceivablesRef = builder.objectRef<Receivables>('Receivables').implement({
  description: 'Outstanding invoices (sent, viewed, partial, overdue) in one currency',
  fields: (t) => receivablesFields(t),
});

/**
 * What the cost counts receivablesByCurrency as: nothing caps the currencies an account bills in;
 * a business bills in a few, an agency in a dozen or two.
 */
const CURRENCIES_COSTED = 20;
const BY_CURRENCY = 'Every currency with outstanding invoices, each apart, by currency code; empty when nothing is owed';

const ReceivablesReportRef = builder.objectRef<ReceivablesReport>('ReceivablesReport').implement({
  description: "Outstanding invoices in one currency (the one asked, else the account's defaultCurrency), and in every currency apart",
  fields: (t) => ({
    ...receivablesFields(t),
    byCurrency: t.field({ type: [ReceivablesRef], description: BY_CURRENCY, maxItems: CURRENCIES_COSTED, resolve: (r) => r.byCurrency }),
  }),
});

const KeyCountRef = builder.objectRef<KeyCount>('KeyCount').implement({
  fields: (t) => ({ key: t.exposeString('key'), count: t.exposeInt('count') }),
});

const ContactBreakdownRef = builder.objectRef<ContactBreakdown>('ContactBreakdown').implement({
  fields: (t) => ({
    byType: t.field({ type: [KeyCountRef], maxItems: Object.values(ContactType).length, resolve: (b) => b.byType }),
    bySource: t.field({ type: [KeyCountRef], maxItems: Object.values(ContactSource).length, resolve: (b) => b.bySource }),
  }),
});

/** Revenue's entries: a month and currency each, so as many months as wonByMonth's times a few currencies. */
const REVENUE_COSTED = MONTHS_COSTED * 4;
const REVENUE = 'Payments by the UTC month of paidAt, less refunds by the month they were made, per currency (never summed across currencies); oldest month first, then currency; count: the payments';

// On Account: whoever sees the account (Query.account: its members, with a session) sees its reports.
builder.prismaObjectFields(AccountRef, (t) => ({
  pipeline: t.field({
    type: [PipelineStageSummaryRef],
    description: 'Open deals per stage: every stage in pipeline order, then those without a stage (stage null) if any',
    maxItems: STAGES_PER_ACCOUNT + 1,
    resolve: (account, _args, ctx) => pipeline(ctx.db, account.id),
  }),
  dealSummary: t.field({
    type: DealSummaryRef,
    args: argsOf(REPORT_ARGS.period, t.arg),
    resolve: (account, args, ctx) => dealSummary(ctx.db, account.id, parseInput(periodArgs, args)),
  }),
  receivables: t.field({
    type: ReceivablesRef,
    description: 'Outstanding invoices in one currency: never a sum across currencies (receivablesByCurrency lists each)',
    args: argsOf(REPORT_ARGS.receivables, t.arg),
    resolve: (account, args, ctx) => receivables(ctx.db, account.id, parseInput(receivablesArgs, args)),
  }),
  receivablesByCurrency: t.field({
    type: [ReceivablesRef],
    description: BY_CURRENCY,
    maxItems: CURRENCIES_COSTED,
    args: argsOf(REPORT_ARGS.receivablesByCurrency, t.arg),
    resolve: (account, args, ctx) => receivablesByCurrency(ctx.db, account.id, parseInput(receivablesByCurrencyArgs, args).asOf),
  }),
  contactBreakdown: t.field({ type: ContactBreakdownRef, resolve: (account, _args, ctx) => contactBreakdown(ctx.db, account.id) }),
  revenue: t.field({
    type: [MonthValueRef],
    description: REVENUE,
    maxItems: REVENUE_COSTED,
    args: argsOf(REPORT_ARGS.revenue, t.arg),
    resolve: (account, args, ctx) => revenue(ctx.db, account.id, parseInput(revenueArgs, args)),
  }),
}));

// The same reports by account id, for API keys and REST's GET /api/v1/reports/* (a key cannot read
// Query.account): each needs the *_READ scope of what it sums.
const rules = (scope: FieldRules['scope'], input: FieldRules['input']): FieldRules => ({
  access: 'member',
  scope,
  input,
  limit: READS_BEYOND_CONTRACT,
});

builder.queryFields((t) => ({
  pipelineReport: t.field({
    type: [PipelineStageSummaryRef],
    nullable: true,
    description: 'Account.pipeline by account id',
    maxItems: STAGES_PER_ACCOUNT + 1,
    args: argsOf(REPORT_ARGS.account, t.arg),
    rules: rules('DEALS_READ', reportArgs),
    resolve: (_root, _args, ctx, info) => pipeline(ctx.db, checked<ReportArgs>(info).input.accountId),
  }),
  dealReport: t.field({
    type: DealSummaryRef,
    nullable: true,
    description: 'Account.dealSummary by account id',
    args: argsOf(REPORT_ARGS.dealReport, t.arg),
    rules: rules('DEALS_READ', dealReportArgs),
    resolve: (_root, _args, ctx, info) => {
      const { accountId, ...period } = checked<DealReportArgs>(info).input;
      return dealSummary(ctx.db, accountId, period);
    },
  }),
  receivablesReport: t.field({
    type: ReceivablesReportRef,
    nullable: true,
    description: 'Account.receivables by account id, with Account.receivablesByCurrency as byCurrency',
    args: argsOf(REPORT_ARGS.receivablesReport, t.arg),
    rules: rules('INVOICES_READ', receivablesReportArgs),
    resolve: (_root, _args, ctx, info) => {
      const { accountId, ...args } = checked<ReceivablesReportArgs>(info).input;
      return receivablesReport(ctx.db, accountId, args);
    },
  }),
  revenueReport: t.field({
    type: [MonthValueRef],
    nullable: true,
    description: 'Account.revenue by account id',
    maxItems: REVENUE_COSTED,
    args: argsOf(REPORT_ARGS.revenueReport, t.arg),
    rules: rules('INVOICES_READ', revenueReportArgs),
    resolve: (_root, _args, ctx, info) => {
      const { accountId, ...args } = checked<RevenueReportArgs>(info).input;
      return revenue(ctx.db, accountId, args);
    },
  }),
  contactReport: t.field({
    type: ContactBreakdownRef,
    nullable: true,
    description: 'Account.contactBreakdown by account id',
    args: argsOf(REPORT_ARGS.account, t.arg),
    rules: rules('CONTACTS_READ', reportArgs),
    resolve: (_root, _args, ctx, info) => contactBreakdown(ctx.db, checked<ReportArgs>(info).input.accountId),
  }),
}));
