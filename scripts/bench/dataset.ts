// The bench dataset: one large realistic account (contacts, deals, invoices, a lead form with
// submissions, a few team members) plus many small accounts beside it, so the large one's queries
// run on a table shared with other tenants. Bulk-loaded with one multi-row INSERT ... unnest() per
// chunk: ~15x faster than Prisma createMany here, which matters at 1,000,000 contacts.
import { randomFillSync } from 'node:crypto';
import pg from 'pg';
import { openDatabase } from '../../src/db/client.js';
import { createLeadForm, createLeadFormInput } from '../../src/forms/form.service.js';
import { formatInvoiceNumber } from '../../src/invoices/invoice.service.js';
import { parseInput } from '../../src/validation.js';
import { dropDatabase, ensureMigrated } from './common.js';

export type DatasetSize = { contacts: number; deals: number; invoices: number; submissions: number; smallAccounts: number };
export type Dataset = DatasetSize & {
  url: string;
  accountId: string;
  ownerId: string;
  memberIds: string[];
  formId: string;
  /** When generation finished: rows created later are the bench's own writes. */
  completedAt: Date;
};
export type Phase = 'contacts' | 'deals' | 'invoices' | 'submissions' | 'small accounts' | 'vacuum';
export type Progress = { phase: Phase; done: number; total: number };

/** 20% deals, 20% invoices, 10% submissions of the contacts; 50 small accounts. */
export const sizeFor = (contacts: number, overrides: Partial<DatasetSize> = {}): DatasetSize => ({
  contacts,
  deals: Math.round(contacts * 0.2),
  invoices: Math.round(contacts * 0.2),
  submissions: Math.round(contacts * 0.1),
  smallAccounts: 50,
  ...overrides,
});

export const totalRows = (s: DatasetSize) => s.contacts + s.deals + s.invoices + s.submissions;

const CHUNK = 5000;
const SMALL_MIN = 100;
const SMALL_MAX = 1000;
const DAY = 86_400_000;

const marker = (s: DatasetSize) => `bench:main:${s.contacts}:${s.deals}:${s.invoices}:${s.submissions}:${s.smallAccounts}`;

/** The finished dataset of this size in the database at `url`, or null. */
export async function findDataset(url: string, size: DatasetSize): Promise<Dataset | null> {
  return withClient(url, async (client) => {
    const { rows } = await client.query<{ id: string; owner_id: string; updated_at: Date }>(
      'SELECT id, owner_id, updated_at FROM accounts WHERE name = $1',
      [marker(size)],
    );
    const account = rows[0];
    if (!account) return null;
    const members = await client.query<{ user_id: string }>('SELECT user_id FROM team_members WHERE account_id = $1 ORDER BY user_id', [account.id]);
    const form = await client.query<{ id: string }>('SELECT id FROM lead_forms WHERE account_id = $1 ORDER BY created_at LIMIT 1', [account.id]);
    return {
      ...size,
      url,
      accountId: account.id,
      ownerId: account.owner_id,
      memberIds: members.rows.map((r) => r.user_id),
      formId: form.rows[0]!.id,
      completedAt: account.updated_at,
    };
  });
}

/**
 * The dataset, generated when the database does not hold a finished one of this size. A partial or
 * different one is thrown away first: only in a database whose name starts with `crm_bench`.
 */
export async function ensureDataset(
  url: string,
  size: DatasetSize,
  opts: { force?: boolean; onProgress?: (p: Progress) => void; log?: (line: string) => void } = {},
): Promise<Dataset> {
  const log = opts.log ?? (() => {});
  const { applied } = await ensureMigrated(url);
  if (!opts.force) {
    const found = await findDataset(url, size);
    if (found) {
      log(`dataset: found ${describe(size)} in ${new URL(url).pathname.slice(1)}`);
      if (applied.length > 0) {
        // New indexes need statistics before the planner will choose them.
        log(`dataset: migrations applied (${applied.join(', ')}); analyzing`);
        await withClient(url, (c) => c.query('ANALYZE'));
      }
      return found;
    }
  }
  const empty = await withClient(url, async (c) => (await c.query('SELECT 1 FROM accounts LIMIT 1')).rowCount === 0);
  if (!empty) {
    const name = new URL(url).pathname.slice(1);
    if (!name.startsWith('crm_bench')) throw new Error(`database "${name}" holds other data; the bench only replaces data in a crm_bench* database`);
    log(`dataset: replacing the data in ${name}`);
    await dropDatabase(url);
    await ensureMigrated(url);
  }
  log(`dataset: generating ${describe(size)}`);
  return generateDataset(url, size, opts.onProgress);
}

export const describe = (s: DatasetSize) =>
  `${s.contacts} contacts, ${s.deals} deals, ${s.invoices} invoices, ${s.submissions} submissions + ${s.smallAccounts} small accounts`;

/** Deletes what bench runs wrote into the dataset (rows newer than the dataset), so runs stay comparable. */
export async function removeBenchWrites(dataset: Dataset): Promise<number> {
  return withClient(dataset.url, async (client) => {
    let removed = 0;
    for (const table of ['form_submissions', 'idempotency_keys', 'export_logs', 'deals', 'contacts']) {
      const result = await client.query(`DELETE FROM ${table} WHERE created_at > $1`, [dataset.completedAt]);
      removed += result.rowCount ?? 0;
    }
    if (removed > 0) await client.query('VACUUM ANALYZE contacts, form_submissions');
    return removed;
  });
}

async function withClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

export async function generateDataset(url: string, size: DatasetSize, onProgress: (p: Progress) => void = () => {}): Promise<Dataset> {
  const random = rng(42);
  const now = Date.now();
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  // Bulk load: losing the last commits on a crash only means generating again.
  await client.query('SET synchronous_commit = off');
  const prisma = await openDatabase({ databaseUrl: url, dataDir: '', poolMax: 1, onConnectionError: () => {} });
  try {
    const owner = await insertUser(client, now, 'Bench Owner');
    const accountId = uuidv7(now);
    await client.query('INSERT INTO accounts (id, name, owner_id, created_at, updated_at) VALUES ($1, $2, $3, $4, $4)', [accountId, 'bench:main', owner, new Date(now - 730 * DAY)]);
    const memberIds: string[] = [];
    for (let i = 0; i < 3; i++) {
      const id = await insertUser(client, now + i + 1, `Bench Member ${i + 1}`);
      await client.query("INSERT INTO team_members (account_id, user_id, role, email) VALUES ($1, $2, 'member', $3)", [accountId, id, `member${i + 1}@example.com`]);
      memberIds.push(id);
    }
    const formId = (await createLeadForm(prisma.prisma, parseInput(createLeadFormInput, benchFormInput(accountId)))).id;
    await fillAccount(client, random, { accountId, formId, ...size, start: now - 730 * DAY, end: now, salt: 0 }, onProgress);

    // Small accounts: same shape, 100-1000 contacts each, progress counted per account.
    onProgress({ phase: 'small accounts', done: 0, total: size.smallAccounts });
    for (let a = 0; a < size.smallAccounts; a++) {
      const smallOwner = await insertUser(client, now + 100 + a, `Small Owner ${a + 1}`);
      const smallId = uuidv7(now + 100 + a);
      await client.query('INSERT INTO accounts (id, name, owner_id) VALUES ($1, $2, $3)', [smallId, `Small account ${a + 1}`, smallOwner]);
      const smallForm = (await createLeadForm(prisma.prisma, parseInput(createLeadFormInput, benchFormInput(smallId)))).id;
      const contacts = SMALL_MIN + Math.floor(random() * (SMALL_MAX - SMALL_MIN + 1));
      const counts = sizeFor(contacts);
      await fillAccount(client, random, { accountId: smallId, formId: smallForm, ...counts, start: now - 365 * DAY, end: now, salt: a + 1 }, () => {});
      onProgress({ phase: 'small accounts', done: a + 1, total: size.smallAccounts });
    }

    onProgress({ phase: 'vacuum', done: 0, total: 1 });
    // Statistics and the visibility map, as a long-running database would have them (index-only counts).
    await client.query('VACUUM ANALYZE');
    onProgress({ phase: 'vacuum', done: 1, total: 1 });
    const { rows } = await client.query<{ updated_at: Date }>(
      'UPDATE accounts SET name = $2, updated_at = clock_timestamp() WHERE id = $1 RETURNING updated_at',
      [accountId, marker(size)],
    );
    return { ...size, url, accountId, ownerId: owner, memberIds, formId, completedAt: rows[0]!.updated_at };
  } finally {
    await prisma.close();
    await client.end();
  }
}

async function insertUser(client: pg.Client, ms: number, name: string): Promise<string> {
  const id = uuidv7(ms);
  await client.query('INSERT INTO users (id, email, name) VALUES ($1, $2, $3)', [id, `${slug(name)}-${id.slice(-6)}@example.com`, name]);
  return id;
}

type Fill = DatasetSize & { accountId: string; formId: string; start: number; end: number; /** Varies the people per account. */ salt: number };

/** Contacts, then deals, invoices and submissions that point at them; all inside [start, end]. */
async function fillAccount(client: pg.Client, random: Random, f: Fill, onProgress: (p: Progress) => void) {
  const ids: string[] = new Array(f.contacts);
  const born = new Float64Array(f.contacts);
  const step = (f.end - f.start) / Math.max(1, f.contacts);
  const after = (ms: number) => Math.floor(ms + random() * (f.end - ms));
  const stages = await insertStages(client, f.accountId);

  await chunked('contacts', f.contacts, onProgress, async (from, to) => {
    const cols = columns(11);
    for (let i = from; i < to; i++) {
      const p = personOf(f.salt, i);
      const at = Math.floor(f.start + i * step);
      born[i] = at;
      ids[i] = uuidv7(at);
      const created = new Date(at).toISOString();
      push(cols, ids[i], f.accountId, p.firstName, p.lastName, p.email, p.phone, p.company, p.contactType, p.source, created, created);
    }
    await client.query(
      `INSERT INTO contacts (id, account_id, first_name, last_name, email, phone, company, contact_type, source, created_at, updated_at)
       SELECT id, account_id, first_name, last_name, email, phone, company, contact_type::contact_type, source::contact_source, created_at, updated_at
       FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::timestamptz[], $11::timestamptz[])
         AS t(id, account_id, first_name, last_name, email, phone, company, contact_type, source, created_at, updated_at)`,
      cols,
    );
  });

  await chunked('deals', f.deals, onProgress, async (from, to) => {
    const cols = columns(12);
    for (let i = from; i < to; i++) {
      const c = Math.floor(random() * f.contacts);
      const at = after(born[c]!);
      const status = weighted(random, [['open', 60], ['won', 20], ['lost', 15], ['abandoned', 5]]);
      const created = new Date(at).toISOString();
      push(cols, uuidv7(at), f.accountId, ids[c], pick(random, stages), `${pick(random, COMPANY_A)} ${pick(random, COMPANY_B)}: ${pick(random, PRODUCTS)}`,
        money(random, 200, 150_000), 10 * (1 + Math.floor(random() * 9)), status, day(at + (15 + Math.floor(random() * 120)) * DAY),
        status === 'open' ? null : new Date(after(at)).toISOString(), created, created);
    }
    await client.query(
      `INSERT INTO deals (id, account_id, contact_id, stage_id, title, value, probability, status, expected_close_date, closed_at, created_at, updated_at)
       SELECT id, account_id, contact_id, stage_id, title, value, probability, status::deal_status, expected_close_date, closed_at, created_at, updated_at
       FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::uuid[], $5::text[], $6::numeric[], $7::float8[], $8::text[], $9::date[], $10::timestamptz[], $11::timestamptz[], $12::timestamptz[])
         AS t(id, account_id, contact_id, stage_id, title, value, probability, status, expected_close_date, closed_at, created_at, updated_at)`,
      cols,
    );
  });

  await client.query('UPDATE accounts SET next_invoice_number = $2 WHERE id = $1', [f.accountId, f.invoices + 1]);
  await chunked('invoices', f.invoices, onProgress, async (from, to) => {
    const cols = columns(9);
    for (let i = from; i < to; i++) {
      const c = Math.floor(random() * f.contacts);
      const at = after(born[c]!);
      const created = new Date(at).toISOString();
      const status = weighted(random, [['draft', 15], ['sent', 20], ['viewed', 10], ['partial', 5], ['paid', 40], ['overdue', 7], ['cancelled', 2], ['refunded', 1]]);
      push(cols, uuidv7(at), f.accountId, ids[c], formatInvoiceNumber(i + 1), money(random, 50, 25_000), status, day(at + 30 * DAY), created, created);
    }
    await client.query(
      `INSERT INTO invoices (id, account_id, contact_id, invoice_number, amount, status, due_date, created_at, updated_at)
       SELECT id, account_id, contact_id, invoice_number, amount, status::invoice_status, due_date, created_at, updated_at
       FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::text[], $5::numeric[], $6::text[], $7::date[], $8::timestamptz[], $9::timestamptz[])
         AS t(id, account_id, contact_id, invoice_number, amount, status, due_date, created_at, updated_at)`,
      cols,
    );
  });

  await chunked('submissions', f.submissions, onProgress, async (from, to) => {
    const cols = columns(9);
    for (let i = from; i < to; i++) {
      // A submission is how its contact arrived: same values, same moment.
      const c = Math.floor(random() * f.contacts);
      const p = personOf(f.salt, c);
      const at = born[c]! + Math.floor(random() * 1000);
      const data = { first_name: p.firstName, last_name: p.lastName, email: p.email ?? `visitor${c}@example.com`, topic: pick(random, TOPICS), message: `Hello, I would like to hear more about your ${pick(random, PRODUCTS)}.` };
      push(cols, uuidv7(at), f.accountId, f.formId, ids[c], JSON.stringify(data), random() < 0.5 ? pick(random, REFERRERS) : null,
        '/contact', `203.0.113.${1 + Math.floor(random() * 254)}`, new Date(at).toISOString());
    }
    await client.query(
      `INSERT INTO form_submissions (id, account_id, form_id, contact_id, data, referrer, page, client_ip, user_agent, created_at)
       SELECT id, account_id, form_id, contact_id, data, referrer, page, client_ip, $10, created_at
       FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::uuid[], $5::jsonb[], $6::text[], $7::text[], $8::text[], $9::timestamptz[])
         AS t(id, account_id, form_id, contact_id, data, referrer, page, client_ip, created_at)`,
      [...cols, AGENT],
    );
  });
}

async function chunked(phase: Phase, total: number, onProgress: (p: Progress) => void, insert: (from: number, to: number) => Promise<void>) {
  onProgress({ phase, done: 0, total });
  for (let from = 0; from < total; from += CHUNK) {
    const to = Math.min(total, from + CHUNK);
    await insert(from, to);
    onProgress({ phase, done: to, total });
  }
}

async function insertStages(client: pg.Client, accountId: string): Promise<string[]> {
  const ids: string[] = [];
  for (const [position, name] of STAGES.entries()) {
    const id = uuidv7(Date.now() + position);
    await client.query('INSERT INTO pipeline_stages (id, account_id, name, position) VALUES ($1, $2, $3, $4)', [id, accountId, name, position]);
    ids.push(id);
  }
  return ids;
}

const benchFormInput = (accountId: string) => ({
  accountId,
  name: 'Website enquiry',
  fields: [
    { key: 'first_name', label: 'First name', type: 'text', required: true, mapsTo: 'first_name' },
    { key: 'last_name', label: 'Last name', type: 'text', mapsTo: 'last_name' },
    { key: 'email', label: 'E-mail', type: 'email', required: true, mapsTo: 'email' },
    { key: 'company', label: 'Company', type: 'text', mapsTo: 'company' },
    { key: 'topic', label: 'Topic', type: 'select', options: TOPICS },
    { key: 'message', label: 'Message', type: 'textarea', maxLength: 2000 },
  ],
});

const columns = (n: number): unknown[][] => Array.from({ length: n }, () => []);
const push = (cols: unknown[][], ...values: unknown[]) => values.forEach((v, i) => cols[i]!.push(v));

// ---- realistic values ---------------------------------------------------------------------------

export type Random = () => number;

/** mulberry32: small, fast, seedable. */
export function rng(seed: number): Random {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pick = <T>(random: Random, list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
const weighted = <T extends string>(random: Random, table: [T, number][]): T => {
  let r = random() * table.reduce((sum, [, w]) => sum + w, 0);
  for (const [value, weight] of table) if ((r -= weight) < 0) return value;
  return table[table.length - 1]![0];
};
const money = (random: Random, min: number, max: number) => (Math.round(Math.exp(Math.log(min) + random() * Math.log(max / min)) * 100) / 100).toFixed(2);
const slug = (text: string) => text.toLowerCase().replace(/[^a-z0-9]+/g, '');
const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** UUIDv7 for `ms`, like the database's own ids: time-ordered, so bulk rows index like real ones. */
export function uuidv7(ms: number): string {
  const bytes = randomFillSync(new Uint8Array(16));
  for (let i = 5, t = ms; i >= 0; i--, t = Math.floor(t / 256)) bytes[i] = t % 256;
  bytes[6] = (bytes[6]! & 0x0f) | 0x70;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = Buffer.from(bytes).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

const FIRST = ['Ada', 'Aiko', 'Alan', 'Amara', 'Ana', 'Anders', 'Arjun', 'Astrid', 'Ben', 'Bianca', 'Carla', 'Chen', 'Chloe', 'Dario', 'Daniel', 'Diego', 'Elena', 'Elif', 'Emma', 'Ezra', 'Farah', 'Felix', 'Freya', 'Grace', 'Hana', 'Hugo', 'Ines', 'Isaac', 'Ivan', 'Jamal', 'Jana', 'Joon', 'Kai', 'Kenji', 'Kofi', 'Lara', 'Leo', 'Lina', 'Lucas', 'Malik', 'Maya', 'Mateo', 'Mei', 'Mia', 'Nadia', 'Nils', 'Noah', 'Olga', 'Omar', 'Oscar', 'Priya', 'Rafael', 'Ravi', 'Rosa', 'Sam', 'Sara', 'Sofia', 'Soren', 'Tariq', 'Theo', 'Uma', 'Victor', 'Wen', 'Yara', 'Yusuf', 'Zoe', 'Zane', 'Zara'];
const LAST = ['Adams', 'Ahmed', 'Andersson', 'Bauer', 'Becker', 'Brown', 'Castro', 'Chen', 'Costa', 'Dubois', 'Evans', 'Fischer', 'Garcia', 'Gupta', 'Hansen', 'Hughes', 'Ibrahim', 'Ito', 'Jensen', 'Kim', 'Kowalski', 'Larsen', 'Lopez', 'Martin', 'Meyer', 'Moreau', 'Murphy', 'Nakamura', 'Nguyen', 'Novak', "O'Brien", 'Okafor', 'Park', 'Patel', 'Petrov', 'Rossi', 'Santos', 'Schmidt', 'Silva', 'Singh', 'Smith', 'Suzuki', 'Tanaka', 'Taylor', 'Torres', 'Virtanen', 'Walker', 'Weber', 'Wilson', 'Wong', 'Yilmaz', 'Zhang'];
// Real name lists are long-tailed: most surnames are rare. Syllables make that tail.
const SYLLABLES = ['ber', 'cal', 'dor', 'fen', 'gar', 'hol', 'kin', 'lan', 'mar', 'nor', 'pel', 'quist', 'ros', 'sten', 'tor', 'val', 'wick', 'zel'];
const COMPANY_A = ['Blue', 'Bright', 'Cedar', 'Clear', 'Copper', 'Delta', 'Green', 'Harbor', 'Iron', 'Lumen', 'North', 'Oak', 'Pine', 'Quartz', 'River', 'Silver', 'Summit', 'Sun', 'Vertex', 'West'];
const COMPANY_B = ['Analytics', 'Bakery', 'Builders', 'Consulting', 'Design', 'Dynamics', 'Foods', 'Health', 'Labs', 'Logistics', 'Media', 'Motors', 'Partners', 'Robotics', 'Studio', 'Systems', 'Textiles', 'Travel', 'Ventures', 'Works'];
const SUFFIX = ['', ' Ltd', ' Inc', ' GmbH', ' LLC', ' & Co'];
// Reserved names only (RFC 2606): generated data must never reach a real mailbox.
const MAIL_DOMAINS = ['example.com', 'example.net', 'example.org', 'mail.example'];
const PRODUCTS = ['website redesign', 'annual retainer', 'photo shoot', 'catering', 'consulting package', 'support plan', 'workshop', 'migration project'];
const STAGES = ['Lead in', 'Qualified', 'Proposal', 'Negotiation', 'Closing'];
const TOPICS = ['Pricing', 'Support', 'Partnership', 'Other'];
const REFERRERS = ['https://www.google.com/', 'https://duckduckgo.com/', 'https://www.linkedin.com/'];
const AGENT = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36';

/** Contact number `i` of an account: the same every time it is asked for (its submission repeats it). */
const personOf = (salt: number, i: number) => person(rng(Math.imul(salt ^ 0x9e3779b9, 0x85ebca6b) + i * 7919), i);

function person(random: Random, i: number) {
  const firstName = pick(random, FIRST);
  const lastName = random() < 0.6 ? pick(random, LAST) : cap(pick(random, SYLLABLES) + pick(random, SYLLABLES) + pick(random, ['', 'son', 'er', 'ov', 'a']));
  const company = random() < 0.7 ? `${pick(random, COMPANY_A)} ${pick(random, COMPANY_B)}${pick(random, SUFFIX)}` : null;
  const f = slug(firstName);
  const l = slug(lastName);
  const local = pick(random, [`${f}.${l}`, `${f[0]}${l}`, `${f}${l[0]}`, `${f}_${l}`, f]);
  const domain = company && random() < 0.6 ? `${slug(company.split(' ').slice(0, 2).join(''))}.example` : pick(random, MAIL_DOMAINS);
  return {
    firstName,
    lastName: random() < 0.95 ? lastName : null,
    company,
    email: random() < 0.92 ? `${local}${i}@${domain}` : null,
    phone: random() < 0.6 ? `+1 ${200 + Math.floor(random() * 700)} 555 01${String(Math.floor(random() * 100)).padStart(2, '0')}` : null,
    contactType: weighted(random, [['lead', 45], ['client', 30], ['past_client', 15], ['vendor', 5], ['other', 5]]),
    source: weighted(random, [['website', 35], ['referral', 20], ['social_media', 15], ['advertising', 10], ['cold_outreach', 10], ['repeat_client', 5], ['other', 5]]),
  };
}

const cap = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
