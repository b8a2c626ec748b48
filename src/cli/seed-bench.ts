// A benchmark dataset: many realistic contacts, deals and invoices in one account, plus one lead
// form with submissions. Bulk-inserted in chunks (createMany); `seedBench` is the reusable seam.
import { randomFillSync } from 'node:crypto';
import { createLeadForm, createLeadFormInput } from '../forms/form.service.js';
import { DealStatus, InvoiceStatus, type Prisma, type PrismaClient } from '../generated/prisma/client.js';
import { formatInvoiceNumber } from '../invoices/invoice.service.js';
import { parseInput } from '../validation.js';
import { AGENTS, DAY, money, person, pick, PRODUCTS, rng, STAGES, TOPICS, utcDay, weighted } from './seed-bench-data.js';

export type BenchPhase = 'contacts' | 'deals' | 'invoices' | 'submissions';
export type BenchProgress = { phase: BenchPhase; done: number; total: number };

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
  /** Same seed, same names and values (ids and times still differ per run). */
  seed?: number;
  /** Rows per INSERT (default 1000). */
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
};

export const benchDefaults = (contacts: number) => ({
  deals: Math.round(contacts * 0.2),
  invoices: Math.round(contacts * 0.2),
  submissions: Math.round(contacts * 0.1),
});

/** UUIDv7 for `ms`, like the database's own ids: time-ordered, so bulk rows index like real ones. */
function uuidv7(ms: number): string {
  const bytes = randomFillSync(new Uint8Array(16));
  for (let i = 5, t = ms; i >= 0; i--, t = Math.floor(t / 256)) bytes[i] = t % 256;
  bytes[6] = (bytes[6]! & 0x0f) | 0x70;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = Buffer.from(bytes).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** Builds rows `0..total-1` and inserts them `chunkSize` at a time, reporting after each chunk. */
async function inChunks<Row>(
  phase: BenchPhase,
  total: number,
  options: Required<Pick<SeedBenchOptions, 'chunkSize'>> & Pick<SeedBenchOptions, 'onProgress'>,
  row: (index: number) => Row,
  insert: (rows: Row[]) => Promise<{ count: number }>,
): Promise<number> {
  let inserted = 0;
  options.onProgress?.({ phase, done: 0, total });
  for (let start = 0; start < total; start += options.chunkSize) {
    const rows: Row[] = [];
    for (let i = start; i < Math.min(total, start + options.chunkSize); i++) rows.push(row(i));
    inserted += (await insert(rows)).count;
    options.onProgress?.({ phase, done: start + rows.length, total });
  }
  return inserted;
}

export async function seedBench(db: PrismaClient, options: SeedBenchOptions): Promise<SeedBenchResult> {
  const counts = { ...benchDefaults(options.contacts), ...definedOnly(options) };
  for (const [name, n] of Object.entries(counts)) {
    if (!Number.isInteger(n) || n < 0) throw new RangeError(`seedBench: ${name} must be a whole number ≥ 0`);
  }
  if (counts.contacts === 0 && (counts.deals > 0 || counts.invoices > 0 || counts.submissions > 0)) {
    throw new RangeError('seedBench: deals, invoices and submissions need contacts');
  }
  const seed = options.seed ?? Date.now();
  const random = rng(seed);
  const chunk = { chunkSize: options.chunkSize ?? 1000, onProgress: options.onProgress };
  const now = Date.now();
  const start = now - 730 * DAY; // two years of history
  const step = (now - start) / Math.max(1, counts.contacts);
  const bornAt = (i: number) => Math.floor(start + i * step);
  const after = (ms: number) => Math.floor(ms + random() * (now - ms));

  const account = await benchAccount(db, options.accountId, counts.contacts, now);
  const { accountId } = account;
  const stageIds = await benchStages(db, accountId);
  const form = await benchForm(db, accountId);

  const contactIds: string[] = new Array(counts.contacts);
  const inserted = { ...counts };
  inserted.contacts = await inChunks('contacts', counts.contacts, chunk, (i): Prisma.ContactCreateManyInput => {
    const { email, phone, company, firstName, lastName, contactType, source } = person(seed, i);
    const createdAt = new Date(bornAt(i));
    contactIds[i] = uuidv7(createdAt.getTime());
    return { id: contactIds[i], accountId, firstName, lastName, email, phone, company, contactType, source, createdAt, updatedAt: createdAt };
  }, (data) => db.contact.createMany({ data }));

  inserted.deals = await inChunks('deals', counts.deals, chunk, (): Prisma.DealCreateManyInput => {
    const c = Math.floor(random() * counts.contacts);
    const who = person(seed, c);
    const createdAt = after(bornAt(c));
    const status = weighted(random, [[DealStatus.open, 60], [DealStatus.won, 20], [DealStatus.lost, 15], [DealStatus.abandoned, 5]]);
    return {
      id: uuidv7(createdAt),
      accountId,
      contactId: contactIds[c],
      stageId: pick(random, stageIds),
      title: `${who.company ?? `${who.firstName} ${who.lastName}`}: ${pick(random, PRODUCTS)}`,
      value: money(random, 200, 150_000),
      probability: 10 * (1 + Math.floor(random() * 9)),
      status,
      expectedCloseDate: utcDay(createdAt + (15 + Math.floor(random() * 120)) * DAY),
      closedAt: status === DealStatus.open ? null : new Date(after(createdAt)),
      createdAt: new Date(createdAt),
      updatedAt: new Date(createdAt),
    };
  }, (data) => db.deal.createMany({ data }));

  // A block of the account's own numbering, so later createInvoice calls continue after it.
  const { nextInvoiceNumber } = await db.account.update({
    where: { id: accountId },
    data: { nextInvoiceNumber: { increment: counts.invoices } },
    select: { nextInvoiceNumber: true },
  });
  const firstNumber = nextInvoiceNumber - counts.invoices;
  // skipDuplicates: a number someone already typed by hand is left out rather than failing the run.
  inserted.invoices = await inChunks('invoices', counts.invoices, chunk, (i): Prisma.InvoiceCreateManyInput => {
    const c = Math.floor(random() * counts.contacts);
    const createdAt = after(bornAt(c));
    return {
      id: uuidv7(createdAt),
      accountId,
      contactId: contactIds[c],
      invoiceNumber: formatInvoiceNumber(firstNumber + i),
      amount: money(random, 50, 25_000),
      status: weighted(random, [
        [InvoiceStatus.draft, 15], [InvoiceStatus.sent, 20], [InvoiceStatus.viewed, 10], [InvoiceStatus.partial, 5],
        [InvoiceStatus.paid, 40], [InvoiceStatus.overdue, 7], [InvoiceStatus.cancelled, 2], [InvoiceStatus.refunded, 1],
      ]),
      dueDate: utcDay(createdAt + 30 * DAY),
      createdAt: new Date(createdAt),
      updatedAt: new Date(createdAt),
    };
  }, (data) => db.invoice.createMany({ data, skipDuplicates: true }));

  inserted.submissions = await inChunks('submissions', counts.submissions, chunk, (): Prisma.FormSubmissionCreateManyInput => {
    // The form requires an e-mail, so a submission comes from a contact that has one (92% do).
    let c = Math.floor(random() * counts.contacts);
    let who = person(seed, c);
    for (let tries = 0; !who.email && tries < 20; tries++) who = person(seed, (c = Math.floor(random() * counts.contacts)));
    const createdAt = bornAt(c) + Math.floor(random() * 1000);
    const values = {
      first_name: who.firstName,
      last_name: who.lastName,
      ...(who.email ? { email: who.email } : {}),
      ...(who.company ? { company: who.company } : {}),
      topic: pick(random, TOPICS),
      message: `Hello, I would like to hear more about your ${pick(random, PRODUCTS)}.`,
    };
    return {
      id: uuidv7(createdAt),
      accountId,
      formId: form.id,
      contactId: contactIds[c],
      data: values,
      referrer: random() < 0.5 ? pick(random, ['https://www.google.com/', 'https://duckduckgo.com/', 'https://www.linkedin.com/']) : null,
      page: 'https://www.example.com/contact',
      clientIp: `203.0.113.${1 + Math.floor(random() * 254)}`,
      userAgent: pick(random, AGENTS),
      createdAt: new Date(createdAt),
    };
  }, (data) => db.formSubmission.createMany({ data }));

  return { accountId, ownerId: account.ownerId, formId: form.id, ...inserted };
}

function definedOnly(options: SeedBenchOptions) {
  const { contacts, deals, invoices, submissions } = options;
  return Object.fromEntries(Object.entries({ contacts, deals, invoices, submissions }).filter(([, v]) => v !== undefined)) as { contacts: number } & Partial<ReturnType<typeof benchDefaults>>;
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
  }));
}
