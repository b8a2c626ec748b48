// A benchmark dataset: many realistic contacts, deals and invoices in one account, plus one lead
// form with submissions. The one generator behind `npm run cli -- seed bench` and `npm run bench`.
// Rows go in as one `INSERT ... SELECT FROM unnest(<column arrays>)` per chunk: ~15x faster than
// createMany, which matters at 1,000,000 contacts, and it runs on PGlite and PostgreSQL alike.
import { createLeadForm, createLeadFormInput } from '../forms/form.service.js';
import { SYSTEM } from '../events/types.js';
import { DealStatus, InvoiceStatus, type PrismaClient } from '../generated/prisma/client.js';
import { formatInvoiceNumber } from '../invoices/invoice-numbers.js';
import { parseInput } from '../validation.js';
import { inChunks, type BenchProgress, type BulkTable } from './bulk-insert.js';
import { seedActivities } from './seed-bench-activities.js';
import { AGENTS, DAY, money, person, pick, PRODUCTS, REFERRERS, rng, STAGES, TOPICS, utcDay, uuidv7, weighted } from './seed-bench-data.js';

export type { BenchPhase, BenchProgress } from './bulk-insert.js';

export type SeedBenchOptions = {
  /** An existing account to fill; absent: a new owner and account are created. */
  accountId?: string;
  contacts: number;
  /** Default: 20% of `contacts`. */
  deals?: number;
  /** Default: 20% of `contacts`. */
  invoices?: number;
  /** Submissions of the one bench form; default: 10% of `contacts`. */
  submissions?: number;
  /** Companies, notes and tasks (docs/decisions.md §21); default: 10% of `contacts` each. */
  companies?: number;
  notes?: number;
  tasks?: number;
  /** Same seed, same names and values (ids and times still differ per run). */
  seed?: number;
  /** Days of history the rows are spread over, ending now (default 730). */
  historyDays?: number;
  /** Rows per INSERT (default 5000). */
  chunkSize?: number;
  /** Called after every chunk. */
  onProgress?: (progress: BenchProgress) => void;
};

export type SeedBenchResult = {
  accountId: string;
  ownerId: string;
  formId: string;
  contacts: number;
  deals: number;
  invoices: number;
  submissions: number;
  companies: number;
  notes: number;
  tasks: number;
};

export const benchDefaults = (contacts: number) => ({
  deals: Math.round(contacts * 0.2),
  invoices: Math.round(contacts * 0.2),
  submissions: Math.round(contacts * 0.1),
  companies: Math.round(contacts * 0.1),
  notes: Math.round(contacts * 0.1),
  tasks: Math.round(contacts * 0.1),
});

const CONTACTS: BulkTable = {
  table: 'contacts',
  columns: [
    ['id', 'uuid'], ['account_id', 'uuid'], ['first_name', 'text'], ['last_name', 'text'], ['email', 'text'], ['phone', 'text'],
    ['company', 'text'], ['contact_type', 'text', 'contact_type'], ['source', 'text', 'contact_source'],
    ['created_at', 'timestamptz'], ['updated_at', 'timestamptz'],
  ],
};
const DEALS: BulkTable = {
  table: 'deals',
  columns: [
    ['id', 'uuid'], ['account_id', 'uuid'], ['contact_id', 'uuid'], ['stage_id', 'uuid'], ['title', 'text'], ['value', 'numeric'],
    ['probability', 'float8'], ['status', 'text', 'deal_status'], ['expected_close_date', 'date'], ['closed_at', 'timestamptz'],
    ['created_at', 'timestamptz'], ['updated_at', 'timestamptz'],
  ],
};
const INVOICES: BulkTable = {
  table: 'invoices',
  columns: [
    ['id', 'uuid'], ['account_id', 'uuid'], ['contact_id', 'uuid'], ['invoice_number', 'text'], ['amount', 'numeric'],
    ['status', 'text', 'invoice_status'], ['due_date', 'date'], ['created_at', 'timestamptz'], ['updated_at', 'timestamptz'],
  ],
  // A number someone already typed by hand is left out rather than failing the run.
  suffix: 'ON CONFLICT (account_id, invoice_number) DO NOTHING',
};
const SUBMISSIONS: BulkTable = {
  table: 'form_submissions',
  columns: [
    ['id', 'uuid'], ['account_id', 'uuid'], ['form_id', 'uuid'], ['contact_id', 'uuid'], ['data', 'jsonb'], ['referrer', 'text'],
    ['page', 'text'], ['client_ip', 'text'], ['user_agent', 'text'], ['created_at', 'timestamptz'],
  ],
};

const iso = (ms: number) => new Date(ms).toISOString();
const day = (ms: number) => utcDay(ms).toISOString().slice(0, 10);

export async function seedBench(db: PrismaClient, options: SeedBenchOptions): Promise<SeedBenchResult> {
  const counts = { ...benchDefaults(options.contacts), ...definedOnly(options) };
  for (const [name, n] of Object.entries(counts)) {
    if (!Number.isInteger(n) || n < 0) throw new RangeError(`seedBench: ${name} must be a whole number ≥ 0`);
  }
  if (counts.contacts === 0 && (counts.deals > 0 || counts.invoices > 0 || counts.submissions > 0 || counts.notes > 0 || counts.tasks > 0)) {
    throw new RangeError('seedBench: deals, invoices, submissions, notes and tasks need contacts');
  }
  const seed = options.seed ?? Date.now();
  const random = rng(seed);
  const chunk = { chunkSize: options.chunkSize ?? 5000, onProgress: options.onProgress };
  const now = Date.now();
  const start = now - (options.historyDays ?? 730) * DAY;
  const step = (now - start) / Math.max(1, counts.contacts);
  const bornAt = (i: number) => Math.floor(start + i * step);
  const after = (ms: number) => Math.floor(ms + random() * (now - ms));

  const account = await benchAccount(db, options.accountId, counts.contacts, now);
  const { accountId } = account;
  const stageIds = await benchStages(db, accountId);
  const form = await benchForm(db, accountId);

  const contactIds: string[] = new Array(counts.contacts);
  const inserted = { ...counts };
  inserted.contacts = await inChunks(db, CONTACTS, 'contacts', counts.contacts, chunk, (i) => {
    const p = person(seed, i);
    const createdAt = bornAt(i);
    contactIds[i] = uuidv7(createdAt);
    return [contactIds[i], accountId, p.firstName, p.lastName, p.email, p.phone, p.company, p.contactType, p.source, iso(createdAt), iso(createdAt)];
  });

  inserted.deals = await inChunks(db, DEALS, 'deals', counts.deals, chunk, () => {
    const c = Math.floor(random() * counts.contacts);
    const who = person(seed, c);
    const createdAt = after(bornAt(c));
    const status = weighted(random, [[DealStatus.open, 60], [DealStatus.won, 20], [DealStatus.lost, 15], [DealStatus.abandoned, 5]]);
    return [
      uuidv7(createdAt), accountId, contactIds[c], pick(random, stageIds),
      `${who.company ?? `${who.firstName} ${who.lastName ?? ''}`.trim()}: ${pick(random, PRODUCTS)}`,
      money(random, 200, 150_000).toFixed(2), 10 * (1 + Math.floor(random() * 9)), status,
      day(createdAt + (15 + Math.floor(random() * 120)) * DAY),
      status === DealStatus.open ? null : iso(after(createdAt)), iso(createdAt), iso(createdAt),
    ];
  });

  // A block of the account's own numbering, so later createInvoice calls continue after it.
  const { nextInvoiceNumber } = await db.account.update({
    where: { id: accountId },
    data: { nextInvoiceNumber: { increment: counts.invoices } },
    select: { nextInvoiceNumber: true },
  });
  const firstNumber = nextInvoiceNumber - counts.invoices;
  inserted.invoices = await inChunks(db, INVOICES, 'invoices', counts.invoices, chunk, (i) => {
    const c = Math.floor(random() * counts.contacts);
    const createdAt = after(bornAt(c));
    const status = weighted(random, [
      [InvoiceStatus.draft, 15], [InvoiceStatus.sent, 20], [InvoiceStatus.viewed, 10], [InvoiceStatus.partial, 5],
      [InvoiceStatus.paid, 40], [InvoiceStatus.overdue, 7], [InvoiceStatus.cancelled, 2], [InvoiceStatus.refunded, 1],
    ]);
    return [
      uuidv7(createdAt), accountId, contactIds[c], formatInvoiceNumber(firstNumber + i), money(random, 50, 25_000).toFixed(2),
      status, day(createdAt + 30 * DAY), iso(createdAt), iso(createdAt),
    ];
  });

  inserted.submissions = await inChunks(db, SUBMISSIONS, 'submissions', counts.submissions, chunk, () => {
    // The form requires an e-mail, so a submission comes from a contact that has one (92% do).
    let c = Math.floor(random() * counts.contacts);
    let who = person(seed, c);
    for (let tries = 0; !who.email && tries < 20; tries++) who = person(seed, (c = Math.floor(random() * counts.contacts)));
    // A submission is how its contact arrived: same values, same moment.
    const createdAt = bornAt(c) + Math.floor(random() * 1000);
    const values = {
      first_name: who.firstName,
      ...(who.lastName ? { last_name: who.lastName } : {}),
      ...(who.email ? { email: who.email } : {}),
      ...(who.company ? { company: who.company } : {}),
      topic: pick(random, TOPICS),
      message: `Hello, I would like to hear more about your ${pick(random, PRODUCTS)}.`,
    };
    return [
      uuidv7(createdAt), accountId, form.id, contactIds[c], JSON.stringify(values),
      random() < 0.5 ? pick(random, REFERRERS) : null, '/contact', `203.0.113.${1 + Math.floor(random() * 254)}`,
      pick(random, AGENTS), iso(createdAt),
    ];
  });

  Object.assign(inserted, await seedActivities(db, { accountId, contactIds, bornAt, counts, random, now, chunk }));

  return { accountId, ownerId: account.ownerId, formId: form.id, ...inserted };
}

function definedOnly(options: SeedBenchOptions) {
  const { contacts, deals, invoices, submissions, companies, notes, tasks } = options;
  return Object.fromEntries(Object.entries({ contacts, deals, invoices, submissions, companies, notes, tasks }).filter(([, v]) => v !== undefined)) as { contacts: number } & Partial<ReturnType<typeof benchDefaults>>;
}

async function benchAccount(db: PrismaClient, accountId: string | undefined, contacts: number, now: number) {
  if (accountId) {
    const found = await db.account.findUnique({ where: { id: accountId }, select: { id: true, ownerId: true } });
    if (!found) throw new RangeError(`seedBench: account ${accountId} not found`);
    return { accountId: found.id, ownerId: found.ownerId };
  }
  const ownerId = uuidv7(now);
  await db.user.create({ data: { id: ownerId, email: `bench-owner-${ownerId.slice(-8)}@example.com`, name: 'Bench Owner' } });
  const account = await db.account.create({
    data: { name: `Bench: ${contacts} contacts (${new Date(now).toISOString().slice(0, 10)})`, ownerId },
  });
  return { accountId: account.id, ownerId };
}

/** The account's stages, or a five-stage pipeline when it has none yet. */
async function benchStages(db: PrismaClient, accountId: string): Promise<string[]> {
  const existing = await db.pipelineStage.findMany({ where: { accountId }, select: { id: true }, orderBy: { position: 'asc' } });
  if (existing.length > 0) return existing.map((s) => s.id);
  await db.pipelineStage.createMany({ data: STAGES.map((name, position) => ({ accountId, name, position })) });
  return (await db.pipelineStage.findMany({ where: { accountId }, select: { id: true }, orderBy: { position: 'asc' } })).map((s) => s.id);
}

/** Created through the forms service, so the bench form obeys the same rules as any other. */
function benchForm(db: PrismaClient, accountId: string) {
  return createLeadForm(db, parseInput(createLeadFormInput, {
    accountId,
    name: 'Website enquiry (bench)',
    fields: [
      { key: 'first_name', label: 'First name', type: 'text', required: true, mapsTo: 'first_name' },
      { key: 'last_name', label: 'Last name', type: 'text', mapsTo: 'last_name' },
      { key: 'email', label: 'E-mail', type: 'email', required: true, mapsTo: 'email' },
      { key: 'company', label: 'Company', type: 'text', mapsTo: 'company' },
      { key: 'topic', label: 'Topic', type: 'select', options: TOPICS },
      { key: 'message', label: 'Message', type: 'textarea', maxLength: 2000 },
    ],
  }), SYSTEM);
}
