// The bench FLOOR: what the REST endpoints cost with nothing between HTTP and PostgreSQL. A bare
// node:http + pg server answering the benched requests with hand-written SQL: the same JWT check
// (jose, HS256 allow-list, exp required), the same membership check, the same JSON shapes and the
// same work per request (a page and its total in one round trip; the form submit in one transaction
// under the same advisory lock). Not a product: no rate limits, logging or complete validation.
// Env: DATABASE_URL, AUTH_JWT_SECRET, PORT (0 = any), DATABASE_POOL_MAX (default 10).
import { webcrypto } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { jwtVerify } from 'jose';
import pg from 'pg';
import { uuidv7 } from '../../src/cli/seed-bench-data.js';
import { priceLines } from '../../src/invoices/money.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const CONTACT_TYPES = new Set(['lead', 'client', 'past_client', 'vendor', 'other']);
const SOURCES = new Set(['website', 'referral', 'social_media', 'advertising', 'cold_outreach', 'repeat_client', 'other']);
const DEAL_STATUS = new Set(['open', 'won', 'lost', 'abandoned']);
const INVOICE_STATUS = new Set(['draft', 'sent', 'viewed', 'partial', 'paid', 'overdue', 'cancelled', 'refunded']);
const ISO = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

class HttpError extends Error {
  constructor(readonly status: number, readonly body: object) {
    super(String(status));
  }
}
const unauthorized = () => new HttpError(401, { error: 'Unauthorized' });
const forbidden = () => new HttpError(403, { error: 'Forbidden: no access to this account' });
const invalid = (details: Record<string, string[]>) => new HttpError(400, { error: 'Invalid payload', details });

export function createFloor(opts: { databaseUrl: string; jwtSecret: string; poolMax?: number }) {
  const pool = new pg.Pool({ connectionString: opts.databaseUrl, max: opts.poolMax ?? 10 });
  pool.on('error', () => {});
  // Imported once, as the service does (given raw bytes, jose imports the key on every verification).
  const secret = webcrypto.subtle.importKey('raw', new TextEncoder().encode(opts.jwtSecret), { name: 'HMAC', hash: 'SHA-256' }, false, ['verify']);

  async function userOf(req: IncomingMessage): Promise<string> {
    const token = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(req.headers.authorization ?? '')?.[1];
    if (!token) throw unauthorized();
    try {
      const { payload } = await jwtVerify(token, await secret, { algorithms: ['HS256'], requiredClaims: ['exp'], clockTolerance: 30 });
      if (typeof payload.sub !== 'string' || !UUID.test(payload.sub)) throw unauthorized();
      return payload.sub.toLowerCase();
    } catch {
      throw unauthorized();
    }
  }

  /** Owner or team member, else 403 (an unknown account too). */
  async function requireMember(accountId: unknown, userId: string): Promise<string> {
    if (typeof accountId !== 'string' || !UUID.test(accountId)) throw invalid({ account_id: ['Must be a UUID'] });
    const { rows } = await pool.query(
      `SELECT a.owner_id = $2 OR EXISTS (SELECT 1 FROM team_members m WHERE m.account_id = a.id AND m.user_id = $2) AS ok
       FROM accounts a WHERE a.id = $1`,
      [accountId, userId],
    );
    if (!rows[0]?.ok) throw forbidden();
    return accountId;
  }

  type Paging = { page: number; pageSize: number; after: { value: string; id: string } | null };

  /** `page` and `page_size`, or the position a `cursor` holds (the service's format: [fingerprint, value, id, sum]). */
  function paging(q: URLSearchParams): Paging {
    const page = Number(q.get('page') ?? 1);
    const pageSize = Number(q.get('page_size') ?? 25);
    const details: Record<string, string[]> = {};
    if (!Number.isInteger(page) || page < 1) details.page = ['Must be at least 1'];
    if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > 100) details.page_size = ['Must be from 1 to 100'];
    let after: Paging['after'] = null;
    const cursor = q.get('cursor');
    if (cursor !== null) {
      const parts = (() => {
        try {
          return JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown[];
        } catch {
          return null;
        }
      })();
      if (!Array.isArray(parts) || typeof parts[1] !== 'string' || typeof parts[2] !== 'string' || !UUID.test(parts[2])) details.cursor = ['Not a cursor of this list'];
      else after = { value: parts[1], id: parts[2] };
    }
    if (Object.keys(details).length) throw invalid(details);
    return { page, pageSize, after };
  }

  /**
   * One round trip: the page as JSON rows and the total of the same filter; one row more than the
   * page tells whether a next cursor is due. After a cursor, the rows beyond it (keyset), no page number.
   */
  async function list(table: string, columns: string, joins: string, where: string[], params: unknown[], { page, pageSize, after }: Paging) {
    const filter = where.join(' AND ');
    const bounds = [...where];
    if (after) {
      params.push(after.value, after.id);
      bounds.push(`(t.created_at, t.id) < ($${params.length - 1}::timestamptz, $${params.length}::uuid)`);
    }
    params.push(pageSize + 1, after ? 0 : (page - 1) * pageSize);
    const limit = `$${params.length - 1}`;
    const offset = `$${params.length}`;
    // The page is cut first (the index serves ORDER BY ... LIMIT), then formatted and joined: a deep
    // page must not format or join the 50,000 rows it skips.
    const { rows } = await pool.query(
      `SELECT (SELECT count(*) FROM ${table} t WHERE ${filter})::int AS total,
              (SELECT coalesce(json_agg(p), '[]') FROM (
                 SELECT ${columns}, t.created_at::text AS _key FROM (
                   SELECT * FROM ${table} t WHERE ${bounds.join(' AND ')} ORDER BY t.created_at DESC, t.id DESC LIMIT ${limit} OFFSET ${offset}
                 ) t ${joins}
                 ORDER BY t.created_at DESC, t.id DESC) p) AS data`,
      params,
    );
    const all = rows[0].data as { id: string; _key: string }[];
    const data = all.slice(0, pageSize).map(({ _key, ...row }) => row);
    const last = all[pageSize - 1];
    const next = all.length > pageSize && last ? Buffer.from(JSON.stringify(['floor', last._key, last.id, ''])).toString('base64url') : null;
    return { data, total: rows[0].total, ...(after ? {} : { page }), page_size: pageSize, next_cursor: next };
  }

  async function listContacts(req: IncomingMessage, q: URLSearchParams) {
    const accountId = await requireMember(q.get('account_id'), await userOf(req));
    const pages = paging(q);
    const where = ['t.account_id = $1'];
    const params: unknown[] = [accountId];
    const type = q.get('type');
    if (type) {
      if (!CONTACT_TYPES.has(type)) throw invalid({ type: ['Invalid value'] });
      params.push(type);
      where.push(`t.contact_type = $${params.length}::contact_type`);
    }
    const search = q.get('search')?.trim().replace(/[\\%_]/g, '\\$&');
    if (search) {
      params.push(search);
      const s = `$${params.length}`;
      const across = [...search.matchAll(/ /g)].map(({ index }) => {
        params.push(search.slice(0, index), search.slice(index + 1));
        return `(t.first_name ILIKE '%' || $${params.length - 1} AND t.last_name ILIKE $${params.length} || '%')`;
      });
      const anywhere = `'%' || ${s} || '%'`;
      where.push(`(t.first_name ILIKE ${anywhere} OR t.last_name ILIKE ${anywhere} OR t.email ILIKE ${anywhere}${across.map((a) => ` OR ${a}`).join('')})`);
    }
    return list(
      'contacts',
      `t.id, t.first_name, t.last_name, t.email, t.phone, t.company, t.contact_type, t.source, t.external_id, t.company_id, t.owner_id, t.custom_fields, ${ISO('t.created_at')} AS created_at, ${ISO('t.updated_at')} AS updated_at`,
      '', where, params, pages,
    );
  }

  async function listDeals(req: IncomingMessage, q: URLSearchParams) {
    const accountId = await requireMember(q.get('account_id'), await userOf(req));
    const pages = paging(q);
    const where = ['t.account_id = $1'];
    const params: unknown[] = [accountId];
    const status = q.get('status');
    if (status) {
      if (!DEAL_STATUS.has(status)) throw invalid({ status: ['Invalid value'] });
      params.push(status);
      where.push(`t.status = $${params.length}::deal_status`);
    }
    return list(
      'deals',
      `t.id, t.title, t.value::float8 AS value, t.probability, t.status, to_char(t.expected_close_date, 'YYYY-MM-DD') AS expected_close_date, t.external_id, t.company_id, t.owner_id, t.custom_fields,
       CASE WHEN c.id IS NULL THEN NULL ELSE json_build_object('id', c.id, 'first_name', c.first_name, 'last_name', c.last_name) END AS contacts,
       CASE WHEN s.id IS NULL THEN NULL ELSE json_build_object('id', s.id, 'name', s.name) END AS pipeline_stages, ${ISO('t.updated_at')} AS updated_at`,
      'LEFT JOIN contacts c ON c.account_id = t.account_id AND c.id = t.contact_id LEFT JOIN pipeline_stages s ON s.account_id = t.account_id AND s.id = t.stage_id',
      where, params, pages,
    );
  }

  async function listInvoices(req: IncomingMessage, q: URLSearchParams) {
    const accountId = await requireMember(q.get('account_id'), await userOf(req));
    const pages = paging(q);
    const where = ['t.account_id = $1'];
    const params: unknown[] = [accountId];
    const status = q.get('status');
    if (status) {
      if (!INVOICE_STATUS.has(status)) throw invalid({ status: ['Invalid value'] });
      params.push(status);
      where.push(`t.status = $${params.length}::invoice_status`);
    }
    return list(
      'invoices',
      `t.id, t.invoice_number, t.amount::float8 AS amount, t.currency, (t.amount - t.amount_paid)::float8 AS amount_due, t.status, to_char(t.due_date, 'YYYY-MM-DD') AS due_date, t.external_id,
       t.custom_fields, CASE WHEN c.id IS NULL THEN NULL ELSE json_build_object('id', c.id, 'first_name', c.first_name, 'last_name', c.last_name) END AS contacts,
       ${ISO('t.created_at')} AS created_at, ${ISO('t.updated_at')} AS updated_at`,
      'LEFT JOIN contacts c ON c.account_id = t.account_id AND c.id = t.contact_id',
      where, params, pages,
    );
  }

  /** GET /companies (docs/decisions.md §21): page 1 newest first, with the exact total, as the service's item. */
  async function listCompanies(req: IncomingMessage, q: URLSearchParams) {
    const accountId = await requireMember(q.get('account_id'), await userOf(req));
    return list(
      'companies',
      `t.id, t.name, t.domain, t.phone, t.industry, t.website, t.external_id, t.owner_id, t.custom_fields, ${ISO('t.created_at')} AS created_at, ${ISO('t.updated_at')} AS updated_at`,
      '', ['t.account_id = $1'], [accountId], paging(q),
    );
  }

  async function createContact(req: IncomingMessage) {
    const userId = await userOf(req);
    const body = await readJson(req);
    const details: Record<string, string[]> = {};
    const text = (key: string, max: number, required = false): string | null => {
      const value = body[key];
      if (value === undefined || value === null || value === '') {
        if (required) details[key] = ['Required'];
        return null;
      }
      if (typeof value !== 'string' || value.trim().length > max) details[key] = [`Must be at most ${max} characters`];
      return typeof value === 'string' ? value.trim() || null : null;
    };
    const firstName = text('first_name', 100, true);
    const lastName = text('last_name', 100);
    const email = text('email', 254);
    if (email && !EMAIL.test(email)) details.email = ['Must be a valid e-mail address'];
    const phone = text('phone', 50);
    const company = text('company', 200);
    const contactType = (body.contact_type as string | undefined) ?? 'lead';
    const source = (body.source as string | undefined) ?? 'other';
    if (!CONTACT_TYPES.has(contactType)) details.contact_type = ['Invalid value'];
    if (!SOURCES.has(source)) details.source = ['Invalid value'];
    if (typeof body.account_id !== 'string' || !UUID.test(body.account_id)) details.account_id = ['Must be a UUID'];
    if (Object.keys(details).length) throw invalid(details);
    const accountId = await requireMember(body.account_id, userId);
    const { rows } = await pool.query(
      `INSERT INTO contacts (id, account_id, first_name, last_name, email, phone, company, contact_type, source)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8::contact_type, $9::contact_source)
       RETURNING id, first_name, last_name, email, contact_type, source, external_id, custom_fields, ${ISO('created_at')} AS created_at`,
      [uuidv7(Date.now()), accountId, firstName, lastName, email, phone, company, contactType, source],
    );
    return { data: rows[0] };
  }

  /** POST /deals with the service's checks of the bench's body: title, value, probability, same-account contact and stage. */
  async function createDeal(req: IncomingMessage) {
    const userId = await userOf(req);
    const body = await readJson(req);
    const details: Record<string, string[]> = {};
    const title = typeof body.title === 'string' ? body.title.trim() : '';
    if (!title || title.length > 200) details.title = [title ? 'Must be at most 200 characters' : 'Required'];
    const value = body.value ?? 0;
    if (typeof value !== 'number' || value < 0 || value > 9999999999.99) details.value = ['Must be from 0 to 9999999999.99'];
    const probability = body.probability ?? 50;
    if (typeof probability !== 'number' || probability < 0 || probability > 100) details.probability = ['Must be from 0 to 100'];
    if (typeof body.account_id !== 'string' || !UUID.test(body.account_id)) details.account_id = ['Must be a UUID'];
    if (Object.keys(details).length) throw invalid(details);
    const accountId = await requireMember(body.account_id, userId);
    const { rows } = await pool.query(
      `INSERT INTO deals (id, account_id, title, value, probability, status)
       VALUES ($1, $2, $3, $4, $5, 'open')
       RETURNING id, title, value::float8 AS value, probability, status, external_id, custom_fields, ${ISO('created_at')} AS created_at`,
      [uuidv7(Date.now()), accountId, title, value, probability],
    );
    return { data: rows[0] };
  }

  /**
   * POST /invoices with lines (docs/decisions.md §20): the bench body's checks, the same exact pricing,
   * the account's next number (its row locked, as the service's numbering), the invoice and its lines
   * in one transaction; the answer as GET /invoices/{id} shows it.
   */
  async function createInvoice(req: IncomingMessage) {
    const userId = await userOf(req);
    const body = await readJson(req);
    const raw = body.lines;
    if (!Array.isArray(raw) || raw.length < 1 || raw.length > 100) throw invalid({ lines: ['Must have 1 to 100 lines'] });
    const details: Record<string, string[]> = {};
    const lines = (raw as Record<string, unknown>[]).map((l, i) => {
      const description = typeof l.description === 'string' ? l.description.trim() : '';
      if (!description || description.length > 500) details[`lines.${i}.description`] = ['Required'];
      const [quantity, unitPrice, discountPercent, taxRate] = [l.quantity ?? 1, l.unit_price, l.discount_percent ?? 0, l.tax_rate ?? 0];
      if (typeof quantity !== 'number' || quantity <= 0 || quantity > 1_000_000) details[`lines.${i}.quantity`] = ['Must be greater than 0 and at most 1000000'];
      if (typeof unitPrice !== 'number' || unitPrice < 0 || unitPrice > 9999999999.99) details[`lines.${i}.unit_price`] = ['Must be from 0 to 9999999999.99'];
      for (const [key, rate] of [['discount_percent', discountPercent], ['tax_rate', taxRate]] as const) {
        if (typeof rate !== 'number' || rate < 0 || rate > 100) details[`lines.${i}.${key}`] = ['Must be from 0 to 100'];
      }
      return { description, quantity: quantity as number, unitPrice: unitPrice as number, discountPercent: discountPercent as number, taxRate: taxRate as number };
    });
    const currency = typeof body.currency === 'string' ? body.currency.toUpperCase() : 'USD';
    if (typeof body.due_date !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(body.due_date)) details.due_date = ['Must be a date (YYYY-MM-DD)'];
    if (typeof body.account_id !== 'string' || !UUID.test(body.account_id)) details.account_id = ['Must be a UUID'];
    if (Object.keys(details).length) throw invalid(details);
    const accountId = await requireMember(body.account_id, userId);
    const { lines: priced, totals } = priceLines(lines, currency);
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      const { rows: [account] } = await client.query('UPDATE accounts SET next_invoice_number = next_invoice_number + 1 WHERE id = $1 RETURNING next_invoice_number - 1 AS n', [accountId]);
      const id = uuidv7(Date.now());
      const { rows: [invoice] } = await client.query(
        `INSERT INTO invoices (id, account_id, invoice_number, amount, subtotal, discount_total, tax_total, currency, memo, status, due_date)
         VALUES ($1, $2, 'INV-' || lpad($3::text, 6, '0'), $4, $5, $6, $7, $8, $9, 'draft', $10)
         RETURNING id, invoice_number, amount::float8 AS amount, currency, (amount - amount_paid)::float8 AS amount_due, status,
                   to_char(due_date, 'YYYY-MM-DD') AS due_date, external_id, NULL::json AS contacts, custom_fields, ${ISO('created_at')} AS created_at, ${ISO('updated_at')} AS updated_at,
                   subtotal::float8 AS subtotal, discount_total::float8 AS discount_total, tax_total::float8 AS tax_total, amount::float8 AS total,
                   amount_paid::float8 AS amount_paid, memo, paid_at, issued_at, NULL::text AS hosted_url`,
        [id, accountId, account.n, totals.total, totals.subtotal, totals.discountTotal, totals.taxTotal, currency, body.memo ?? null, body.due_date],
      );
      const params: unknown[] = [accountId, id];
      const values = priced.map((l) => {
        params.push(uuidv7(Date.now()), l.position, l.description, String(l.quantity), String(l.unitPrice), String(l.discountPercent), String(l.taxRate), l.amount, l.tax);
        const n = params.length;
        return `($${n - 8}, $1, $2, $${n - 7}, $${n - 6}, $${n - 5}, $${n - 4}, $${n - 3}, $${n - 2}, $${n - 1}, $${n})`;
      });
      const { rows: written } = await client.query(
        `INSERT INTO invoice_lines (id, account_id, invoice_id, position, description, quantity, unit_price, discount_percent, tax_rate, amount, tax) VALUES ${values.join(', ')}
         RETURNING id, position, description, quantity::float8 AS quantity, unit_price::float8 AS unit_price, discount_percent::float8 AS discount_percent,
                   tax_rate::float8 AS tax_rate, amount::float8 AS amount, tax::float8 AS tax`,
        params,
      );
      await client.query('COMMIT');
      return { data: { ...invoice, lines: written } };
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    } finally {
      client.release();
    }
  }

  /**
   * POST /invoices/{id}/payments (docs/decisions.md §20): the invoice read FOR UPDATE, the caller's
   * membership, what is due, the payment and the invoice's new amount paid and status, in one transaction.
   */
  async function recordPayment(req: IncomingMessage, invoiceId: string) {
    const userId = await userOf(req);
    const body = await readJson(req);
    const details: Record<string, string[]> = {};
    if (typeof body.amount !== 'number' || body.amount <= 0 || body.amount > 9999999999.99) details.amount = ['Must be greater than 0'];
    if (!['card', 'bank_transfer', 'cash', 'check', 'other'].includes(body.method as string)) details.method = ['Invalid value'];
    if (!UUID.test(invoiceId)) throw new HttpError(404, { error: 'Not found' });
    if (Object.keys(details).length) throw invalid(details);
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      const { rows: [invoice] } = await client.query(
        `SELECT i.id, i.account_id, i.status, i.currency, (i.amount - i.amount_paid) AS due,
                a.owner_id = $2 OR EXISTS (SELECT 1 FROM team_members m WHERE m.account_id = i.account_id AND m.user_id = $2) AS member
         FROM invoices i JOIN accounts a ON a.id = i.account_id WHERE i.id = $1 FOR UPDATE OF i`,
        [invoiceId, userId],
      );
      if (!invoice?.member) throw new HttpError(404, { error: 'Not found' });
      if (!['sent', 'viewed', 'partial', 'overdue'].includes(invoice.status)) throw new HttpError(409, { error: `A ${invoice.status} invoice takes no payment` });
      if (body.amount as number > Number(invoice.due)) throw invalid({ amount: [`Exceeds the amount due (${invoice.due})`] });
      const { rows: [payment] } = await client.query(
        `INSERT INTO payments (id, account_id, invoice_id, amount, currency, method, reference, paid_at)
         VALUES ($1, $2, $3, $4, $5, $6::payment_method, $7, now())
         RETURNING id, invoice_id, amount::float8 AS amount, currency, method, reference, ${ISO('paid_at')} AS paid_at,
                   refunded_amount::float8 AS refunded_amount, ${ISO('created_at')} AS created_at`,
        [uuidv7(Date.now()), invoice.account_id, invoiceId, body.amount, invoice.currency, body.method, str(body.reference)],
      );
      await client.query(
        `UPDATE invoices SET amount_paid = amount_paid + $2, status = CASE WHEN amount - amount_paid - $2 = 0 THEN 'paid' ELSE 'partial' END::invoice_status,
                paid_at = CASE WHEN amount - amount_paid - $2 = 0 THEN now() END, updated_at = now() WHERE id = $1`,
        [invoiceId, body.amount],
      );
      await client.query('COMMIT');
      return { data: payment };
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    } finally {
      client.release();
    }
  }

  /**
   * The limit a batch of contacts is measured against: the same rows, checked as createContact
   * checks one, in ONE multi-row INSERT (no events: what PostgreSQL takes for the rows alone).
   */
  async function createContactsBatch(req: IncomingMessage) {
    const userId = await userOf(req);
    const body = await readJson(req);
    const records = body.records;
    if (!Array.isArray(records) || records.length < 1 || records.length > 100) throw invalid({ records: ['Must have 1 to 100 records'] });
    const accountId = await requireMember(body.account_id, userId);
    const params: unknown[] = [accountId];
    const values = (records as Record<string, unknown>[]).map((r) => {
      const first = typeof r.first_name === 'string' ? r.first_name.trim() : '';
      if (!first || first.length > 100) throw invalid({ first_name: ['Required'] });
      params.push(uuidv7(Date.now()), first, r.last_name ?? null, r.email ?? null, r.company ?? null, r.contact_type ?? 'lead', r.source ?? 'other');
      const n = params.length;
      return `($${n - 6}, $1, $${n - 5}, $${n - 4}, $${n - 3}, $${n - 2}, $${n - 1}::contact_type, $${n}::contact_source)`;
    });
    const { rows } = await pool.query(
      `INSERT INTO contacts (id, account_id, first_name, last_name, email, company, contact_type, source) VALUES ${values.join(', ')}
       RETURNING id, first_name, last_name, email, phone, company, contact_type, source, external_id, company_id, owner_id, custom_fields, ${ISO('created_at')} AS created_at, ${ISO('updated_at')} AS updated_at`,
      params,
    );
    return { data: rows.map((row, index) => ({ index, status: 'created', id: row.id, data: row })), created: rows.length, updated: 0, unchanged: 0, failed: 0 };
  }

  async function submitForm(req: IncomingMessage, formId: string) {
    const notFound = new HttpError(404, { error: 'Form not found or inactive' });
    if (!UUID.test(formId)) throw notFound;
    const { rows: forms } = await pool.query(
      `SELECT f.id, f.account_id, f.active, f.success_message, f.redirect_url,
              (SELECT json_agg(x ORDER BY x.position) FROM lead_form_fields x WHERE x.form_id = f.id) AS fields
       FROM lead_forms f WHERE f.id = $1`,
      [formId],
    );
    const form = forms[0];
    if (!form?.active) throw notFound;
    const body = await readJson(req);
    const data = (body.data ?? {}) as Record<string, unknown>;
    const metadata = (body.metadata ?? {}) as Record<string, unknown>;
    const values: Record<string, string> = {};
    const contact: Record<string, string> = {};
    const details: Record<string, string[]> = {};
    for (const field of form.fields as { key: string; required: boolean; maps_to: string | null; type: string; max_length: number; options: string[] }[]) {
      const raw = data[field.key];
      if (raw !== undefined && typeof raw !== 'string') { details[field.key] = ['Expected a string']; continue; }
      const value = (raw ?? '').trim();
      if (raw !== undefined) values[field.key] = value;
      if (!value) { if (field.required) details[field.key] = ['Required']; continue; }
      if (value.length > field.max_length) details[field.key] = [`Must be at most ${field.max_length} characters`];
      else if ((field.type === 'email' || field.maps_to === 'email') && !EMAIL.test(value)) details[field.key] = ['Must be a valid e-mail address'];
      else if (field.type === 'select' && !field.options.includes(value)) details[field.key] = ['Must be one of the options'];
      if (field.maps_to) contact[field.maps_to] = value;
    }
    if (Object.keys(details).length) throw invalid(details);
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      let contactId: string | null = null;
      if (contact.email) {
        await client.query('SELECT pg_advisory_xact_lock(hashtextextended($1::text, 0))', [`${form.account_id}:${contact.email.toLowerCase()}`]);
        const found = await client.query(
          'SELECT id FROM contacts WHERE account_id = $1 AND lower(email) = lower($2) ORDER BY created_at, id LIMIT 1',
          [form.account_id, contact.email],
        );
        contactId = found.rows[0]?.id ?? null;
      }
      if (contactId) {
        await client.query(
          `UPDATE contacts SET first_name = coalesce($2, first_name), last_name = coalesce($3, last_name), phone = coalesce($4, phone),
           company = coalesce($5, company), updated_at = now() WHERE id = $1`,
          [contactId, contact.first_name ?? null, contact.last_name ?? null, contact.phone ?? null, contact.company ?? null],
        );
      } else {
        contactId = uuidv7(Date.now());
        await client.query(
          `INSERT INTO contacts (id, account_id, first_name, last_name, email, phone, company, contact_type, source)
           VALUES ($1, $2, $3, $4, $5, $6, $7, 'lead', 'website')`,
          [contactId, form.account_id, contact.first_name ?? contact.email!.split('@')[0], contact.last_name ?? null,
            contact.email ?? null, contact.phone ?? null, contact.company ?? null],
        );
      }
      await client.query(
        `INSERT INTO form_submissions (id, account_id, form_id, contact_id, data, referrer, page, client_ip, user_agent)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
        [uuidv7(Date.now()), form.account_id, form.id, contactId, values, str(metadata.referrer), str(metadata.page),
          req.socket.remoteAddress ?? 'unknown', req.headers['user-agent'] ?? null],
      );
      await client.query('COMMIT');
      return { success: true, contact_id: contactId, successMessage: form.success_message, redirectUrl: form.redirect_url };
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    } finally {
      client.release();
    }
  }

  /**
   * The bench's one GraphQL connection document (run.ts CONNECTION_QUERY): a page of 50 contacts
   * newest first, each with its 10 newest deals, the total and hasNextPage, in one statement.
   */
  async function contactsWithDeals(req: IncomingMessage) {
    const body = await readJson(req);
    const accountId = await requireMember((body.variables as { accountId?: unknown } | undefined)?.accountId, await userOf(req));
    const { rows } = await pool.query(
      `WITH page AS (
         SELECT id, first_name, last_name, email, created_at FROM contacts t
         WHERE t.account_id = $1 ORDER BY t.created_at DESC, t.id DESC LIMIT 51)
       SELECT (SELECT count(*) FROM contacts t WHERE t.account_id = $1)::int AS total,
              (SELECT count(*) FROM page) > 50 AS more,
              (SELECT coalesce(json_agg(json_build_object(
                  'id', p.id, 'firstName', p.first_name, 'lastName', p.last_name, 'email', p.email, 'createdAt', ${ISO('p.created_at')},
                  'deals', json_build_object('nodes', (
                    SELECT coalesce(json_agg(json_build_object('id', d.id, 'title', d.title, 'value', d.value, 'status', d.status)
                                             ORDER BY d.created_at DESC, d.id DESC), '[]')
                    FROM (SELECT * FROM deals d WHERE d.account_id = $1 AND d.contact_id = p.id
                          ORDER BY d.created_at DESC, d.id DESC LIMIT 10) d))
                ) ORDER BY p.created_at DESC, p.id DESC), '[]')
               FROM (SELECT * FROM page ORDER BY created_at DESC, id DESC LIMIT 50) p) AS nodes`,
      [accountId],
    );
    const { total, more, nodes } = rows[0];
    return { data: { account: { contacts: { totalCount: total, pageInfo: { hasNextPage: more }, nodes } } } };
  }

  async function route(req: IncomingMessage): Promise<[number, object]> {
    const url = new URL(req.url ?? '/', 'http://floor');
    const path = url.pathname;
    if (req.method === 'GET' && path === '/healthz') return [200, { status: 'ok' }];
    if (req.method === 'GET' && path === '/api/v1/contacts') return [200, await listContacts(req, url.searchParams)];
    if (req.method === 'POST' && path === '/api/v1/contacts') return [201, await createContact(req)];
    if (req.method === 'POST' && path === '/api/v1/contacts/batch') return [200, await createContactsBatch(req)];
    if (req.method === 'GET' && path === '/api/v1/deals') return [200, await listDeals(req, url.searchParams)];
    if (req.method === 'POST' && path === '/api/v1/deals') return [201, await createDeal(req)];
    if (req.method === 'GET' && path === '/api/v1/invoices') return [200, await listInvoices(req, url.searchParams)];
    if (req.method === 'GET' && path === '/api/v1/companies') return [200, await listCompanies(req, url.searchParams)];
    if (req.method === 'POST' && path === '/api/v1/invoices') return [201, await createInvoice(req)];
    const payments = /^\/api\/v1\/invoices\/([^/]+)\/payments$/.exec(path);
    if (req.method === 'POST' && payments) return [201, await recordPayment(req, decodeURIComponent(payments[1]!))];
    if (req.method === 'POST' && path === '/graphql') return [200, await contactsWithDeals(req)];
    const submit = /^\/api\/v1\/forms\/([^/]+)\/submit$/.exec(path);
    if (req.method === 'POST' && submit) return [200, await submitForm(req, decodeURIComponent(submit[1]!))];
    return [404, { error: 'Not found' }];
  }

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    route(req).then(
      ([status, body]) => send(res, status, body),
      (error: unknown) => {
        if (error instanceof HttpError) return send(res, error.status, error.body);
        console.error(error);
        send(res, 500, { error: 'Internal server error' });
      },
    );
  });
  return { server, close: async () => { await new Promise((r) => server.close(r)); await pool.end(); } };
}

const str = (value: unknown) => (typeof value === 'string' && value.trim() ? value.trim().slice(0, 2048) : null);

function send(res: ServerResponse, status: number, body: object) {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > 1 << 20) throw new HttpError(413, { error: 'Payload too large' });
    chunks.push(chunk as Buffer);
  }
  try {
    const value = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value;
  } catch { /* below */ }
  throw invalid({ body: ['Expected a JSON object'] });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const databaseUrl = process.env.DATABASE_URL;
  const jwtSecret = process.env.AUTH_JWT_SECRET;
  if (!databaseUrl || !jwtSecret) {
    process.stderr.write('floor: DATABASE_URL and AUTH_JWT_SECRET are required\n');
    process.exit(1);
  }
  const floor = createFloor({ databaseUrl, jwtSecret, poolMax: Number(process.env.DATABASE_POOL_MAX) || 10 });
  floor.server.keepAliveTimeout = 65_000;
  floor.server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
    const address = floor.server.address();
    process.stdout.write(`listening ${typeof address === 'object' && address ? address.port : ''}\n`);
  });
  const stop = () => void floor.close().then(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
