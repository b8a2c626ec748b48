// docs/decisions.md §20 "Sending": sendInvoice, hostedUrl, invoice.sent, and the mail outbox
// delivered to a real SMTP server on loopback.
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import type { InvoiceStatus } from '../../src/generated/prisma/enums.js';
import { openEvents } from '../../src/events-runtime.js';
import { createLogger } from '../../src/logger.js';
import { MAIL_ATTEMPTS, OUTCOME_UNKNOWN } from '../../src/invoices/mail-outbox.js';
import { CONTACT_ERASED } from '../../src/contacts/erase.js';
import { NO_ADDRESS } from '../../src/invoices/send.service.js';
import { createAccount, createContact, unique, type TestAccount } from '../factories/index.js';
import { createTestApp, errorOf, type GqlResult, type TestApp } from '../helpers/app.js';
import { startSmtpReceiver, type SmtpReceiver } from './smtp-receiver.js';

const PUBLIC_URL = 'https://billing.example.test';
const SEND = `mutation ($id: ID!, $to: String) { sendInvoice(id: $id, to: $to) { id status issuedAt hostedUrl } }`;

let smtp: SmtpReceiver;
let t: TestApp; // mail configured, a worker delivering it
let plain: TestApp; // no mail configured
beforeAll(async () => {
  smtp = await startSmtpReceiver();
  const env = { SMTP_URL: smtp.url, MAIL_FROM: 'Example Billing <billing@example.test>', MAIL_RETRY_BASE_MS: '20', EVENT_POLL_MS: '30', PUBLIC_URL };
  [t, plain] = await Promise.all([createTestApp({ env, worker: true }), createTestApp()]);
});
afterAll(async () => {
  await t?.close();
  await plain?.close();
  await smtp?.close();
});

const draft = async (app: TestApp, acc: TestAccount, data: { contactId?: string | null; status?: InvoiceStatus } = {}) =>
  app.db.invoice.create({ data: { accountId: acc.id, invoiceNumber: unique('SEND'), amount: 120, dueDate: new Date('2030-06-30'), ...data } });
const withContact = async (acc: TestAccount, email: string | null = `${unique('client')}@example.test`) =>
  draft(t, acc, { contactId: (await createContact(t, acc, { email })).id });
const send = (app: TestApp, acc: TestAccount, id: string, to?: string) => app.gql(SEND, { id, ...(to === undefined ? {} : { to }) }, { as: acc.member });
const ok = (r: GqlResult) => {
  expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
  return r.data.sendInvoice as { id: string; status: string; issuedAt: string | null; hostedUrl: string | null };
};
const mailsTo = (address: string) => smtp.received.filter((m) => m.to && !Array.isArray(m.to) && m.to.value[0]?.address === address);
/** Waits until no mail of the invoices is waiting or under way. */
const settled = (ids: string[]) =>
  vi.waitFor(async () => expect(await t.db.invoiceMail.count({ where: { invoiceId: { in: ids }, status: { in: ['pending', 'sending'] } } })).toBe(0), { timeout: 15_000, interval: 20 });
const eventsOf = (app: TestApp, invoiceId: string, type: string) => app.db.event.findMany({ where: { subjectId: invoiceId, type }, orderBy: { id: 'asc' } });

describe('sendInvoice', () => {
  test('sending moves a draft to sent with issuedAt and an absolute hostedUrl on PUBLIC_URL', async () => {
    const acc = await createAccount(t);
    const invoice = await withContact(acc);
    const before = await t.gql('query ($id: ID!) { invoice(id: $id) { status issuedAt hostedUrl } }', { id: invoice.id }, { as: acc.member });
    expect(before.data.invoice).toMatchObject({ status: 'draft', issuedAt: null, hostedUrl: null });
    const sent = ok(await send(t, acc, invoice.id));
    expect(sent.status).toBe('sent');
    expect(Date.parse(sent.issuedAt!)).toBeGreaterThan(Date.now() - 60_000);
    expect(sent.hostedUrl).toMatch(new RegExp(`^${PUBLIC_URL}/i/[A-Za-z0-9_-]+$`));
  });

  test('the page token has at least 128 random bits (base64url) and is not derived from the id', async () => {
    const acc = await createAccount(plain);
    const tokens = new Set<string>();
    for (let i = 0; i < 3; i++) {
      const invoice = await draft(plain, acc);
      const { hostedUrl } = ok(await send(plain, acc, invoice.id));
      const token = hostedUrl!.split('/i/')[1]!;
      expect(token).toMatch(/^[A-Za-z0-9_-]+$/);
      expect(Buffer.from(token, 'base64url').length).toBeGreaterThanOrEqual(16);
      const hex = invoice.id.replaceAll('-', '');
      expect(token).not.toContain(invoice.id);
      expect(Buffer.from(token, 'base64url').toString('hex')).not.toContain(hex.slice(0, 12));
      tokens.add(token);
    }
    expect(tokens.size).toBe(3);
  });

  test('sending again mails again and changes no state (status, issuedAt, hostedUrl)', async () => {
    const acc = await createAccount(t);
    const address = `${unique('again')}@example.test`;
    const invoice = await withContact(acc, address);
    const first = ok(await send(t, acc, invoice.id));
    await settled([invoice.id]);
    await t.db.invoice.update({ where: { id: invoice.id }, data: { status: 'viewed' } });
    const second = ok(await send(t, acc, invoice.id));
    expect(second).toEqual({ ...first, status: 'viewed' });
    await settled([invoice.id]);
    expect(mailsTo(address)).toHaveLength(2);
    expect((await eventsOf(t, invoice.id, 'invoice.status_changed')).length).toBe(1);
    expect((await eventsOf(t, invoice.id, 'invoice.sent')).length).toBe(2);
  });

  test('a manual move of a draft to sent (setInvoiceStatus) issues it too, without mail', async () => {
    const acc = await createAccount(plain);
    const invoice = await draft(plain, acc);
    const r = await plain.gql('mutation ($id: ID!) { setInvoiceStatus(id: $id, status: sent) { status issuedAt hostedUrl } }', { id: invoice.id }, { as: acc.member });
    expect(r.data.setInvoiceStatus.issuedAt).toEqual(expect.any(String));
    expect(r.data.setInvoiceStatus.hostedUrl).toMatch(/^http:\/\/127\.0\.0\.1:3000\/i\/[A-Za-z0-9_-]{22}$/);
  });
});

describe('events', () => {
  test('invoice.sent carries emailed_to (the contact\'s address, or to) and the draft\'s move emits invoice.status_changed', async () => {
    const acc = await createAccount(t);
    const invoice = await withContact(acc);
    const contact = await t.db.contact.findUniqueOrThrow({ where: { id: invoice.contactId! } });
    ok(await send(t, acc, invoice.id));
    ok(await send(t, acc, invoice.id, 'Accounts@Example.test'));
    const [moved] = await eventsOf(t, invoice.id, 'invoice.status_changed');
    expect(moved!.data).toMatchObject({ object: { id: invoice.id, status: 'sent' }, previous: { status: 'draft' } });
    const sent = await eventsOf(t, invoice.id, 'invoice.sent');
    expect(sent.map((e) => (e.data as { emailed_to: string }).emailed_to)).toEqual([contact.email, 'Accounts@Example.test']);
    expect((sent[0]!.data as { object: Record<string, unknown> }).object).toMatchObject({ status: 'sent', issued_at: expect.any(String) });
    // The token opens the client's page: events never carry it.
    expect(JSON.stringify(sent[0]!.data)).not.toMatch(/page_token|\/i\//);
    await settled([invoice.id]);
  });

  test('without mail configured invoice.sent carries emailed_to null, and a second send changes nothing and emits nothing', async () => {
    const acc = await createAccount(plain);
    const invoice = await draft(plain, acc);
    ok(await send(plain, acc, invoice.id));
    ok(await send(plain, acc, invoice.id, 'someone@example.test'));
    const sent = await eventsOf(plain, invoice.id, 'invoice.sent');
    expect(sent.map((e) => (e.data as { emailed_to: unknown }).emailed_to)).toEqual([null]);
    expect(await plain.db.invoiceMail.count({ where: { invoiceId: invoice.id } })).toBe(0);
  });
});

describe('the mail outbox', () => {
  test('each send is mailed exactly once, with the page\'s link and the PDF attached, even with two workers polling (at most once)', async () => {
    const log = createLogger({ level: 'silent' });
    const second = await openEvents(t.deps.config, t.db, log, { worker: true, listen: t.deps.db.listen });
    try {
      const acc = await createAccount(t);
      const addresses = Array.from({ length: 8 }, (_, i) => `${unique(`twice${i}`)}@example.test`);
      const invoices = await Promise.all(addresses.map((address) => withContact(acc, address)));
      const sent = await Promise.all(invoices.map((invoice) => send(t, acc, invoice.id).then(ok)));
      await settled(invoices.map((i) => i.id));
      for (const [i, address] of addresses.entries()) {
        const mails = mailsTo(address);
        expect(mails, address).toHaveLength(1);
        expect(mails[0]!.subject).toBe(`Invoice ${invoices[i]!.invoiceNumber} from ${(await t.db.account.findUniqueOrThrow({ where: { id: acc.id } })).name}`);
        expect(mails[0]!.from?.value[0]?.address).toBe('billing@example.test');
        expect(mails[0]!.text).toContain(sent[i]!.hostedUrl!);
        expect(mails[0]!.text).toContain('120.00 USD');
        const [pdf, ...more] = mails[0]!.attachments;
        expect(more).toHaveLength(0);
        expect([pdf!.filename, pdf!.contentType]).toEqual([`invoice-${invoices[i]!.invoiceNumber}.pdf`, 'application/pdf']);
        expect(pdf!.content.subarray(0, 5).toString('latin1')).toBe('%PDF-');
      }
      const rows = await t.db.invoiceMail.findMany({ where: { accountId: acc.id } });
      expect(rows.map((r) => [r.status, r.attempts])).toEqual(rows.map(() => ['sent', 1]));
    } finally {
      await second.close();
    }
  });

  test('the mail has an HTML part beside its text part, with the same facts (name, amount due, due date, link, PDF) and every value escaped', async () => {
    const acc = await createAccount(t, 'Smith & <b>Sons</b>');
    const address = `${unique('html')}@example.test`;
    const contact = await createContact(t, acc, { email: address, firstName: 'Zoë <script>', lastName: 'Ångström' });
    const invoice = await draft(t, acc, { contactId: contact.id });
    const { hostedUrl } = ok(await send(t, acc, invoice.id));
    await settled([invoice.id]);
    const [mail] = mailsTo(address);
    const html = mail!.html as string;
    expect(typeof html).toBe('string');
    for (const fact of ['Hello Zoë &lt;script&gt; Ångström,', 'Smith &amp; &lt;b&gt;Sons&lt;/b&gt; sent you invoice', '120.00 USD', '30 Jun 2030', `href="${hostedUrl}"`, `invoice-${invoice.invoiceNumber}.pdf`]) {
      expect(html, fact).toContain(fact);
    }
    expect(html).not.toMatch(/<script|<b>/);
    for (const fact of ['Hello Zoë <script> Ångström,', 'Smith & <b>Sons</b> sent you invoice', '120.00 USD', '30 Jun 2030', hostedUrl!, `invoice-${invoice.invoiceNumber}.pdf`]) {
      expect(mail!.text, fact).toContain(fact);
    }
  });

  test('a mail the server refuses for now (451) is retried with backoff and arrives once', async () => {
    const acc = await createAccount(t);
    const address = `${unique('retry')}@example.test`;
    const invoice = await withContact(acc, address);
    const from = smtp.attempts();
    smtp.answerWith((n) => (n === from + 1 ? { code: 451, message: '4.3.0 Try again later' } : null));
    try {
      ok(await send(t, acc, invoice.id));
      await settled([invoice.id]);
    } finally {
      smtp.answerWith(() => null);
    }
    const [row] = await t.db.invoiceMail.findMany({ where: { invoiceId: invoice.id } });
    expect([row!.status, row!.attempts]).toEqual(['sent', 2]);
    expect(mailsTo(address)).toHaveLength(1);
  });

  test(`a mail refused every time is given up after ${MAIL_ATTEMPTS} attempts; a permanent refusal (5xx) at once`, async () => {
    const acc = await createAccount(t);
    const [busy, refused] = [`${unique('busy')}@example.test`, `${unique('refused')}@example.test`];
    const invoices = [await withContact(acc, busy), await withContact(acc, refused)];
    smtp.answerWith(() => ({ code: 451, message: '4.3.0 Try again later' }));
    try {
      ok(await send(t, acc, invoices[0]!.id));
      await settled([invoices[0]!.id]);
      smtp.answerWith(() => ({ code: 550, message: '5.1.1 No such mailbox' }));
      ok(await send(t, acc, invoices[1]!.id));
      await settled([invoices[1]!.id]);
    } finally {
      smtp.answerWith(() => null);
    }
    const rows = await Promise.all(invoices.map((i) => t.db.invoiceMail.findFirstOrThrow({ where: { invoiceId: i.id } })));
    expect(rows.map((r) => [r.status, r.attempts])).toEqual([['failed', MAIL_ATTEMPTS], ['failed', 1]]);
    expect(rows[0]!.lastError).toContain('451');
    expect(rows[1]!.lastError).toContain('550');
    expect([...mailsTo(busy), ...mailsTo(refused)]).toHaveLength(0);
  });

  test('a mail whose instance stopped while sending it is never sent again; one still leased is left alone', async () => {
    const acc = await createAccount(t);
    const [lost, leased] = [`${unique('lost')}@example.test`, `${unique('leased')}@example.test`];
    const invoice = await withContact(acc);
    ok(await send(t, acc, invoice.id, 'first@example.test'));
    await settled([invoice.id]);
    const past = new Date(Date.now() - 1000);
    const future = new Date(Date.now() + 60 * 60_000);
    const rows = await Promise.all([
      t.db.invoiceMail.create({ data: { accountId: acc.id, invoiceId: invoice.id, to: lost, status: 'sending', attempts: 1, lockedUntil: past } }),
      t.db.invoiceMail.create({ data: { accountId: acc.id, invoiceId: invoice.id, to: leased, status: 'sending', attempts: 1, lockedUntil: future } }),
    ]);
    await vi.waitFor(async () => expect((await t.db.invoiceMail.findFirstOrThrow({ where: { id: rows[0].id } })).status).toBe('failed'), { timeout: 10_000, interval: 20 });
    const [given, kept] = await Promise.all(rows.map((r) => t.db.invoiceMail.findFirstOrThrow({ where: { id: r.id } })));
    expect([given!.lastError, given!.attempts]).toEqual([OUTCOME_UNKNOWN, 1]);
    expect([kept!.status, kept!.attempts]).toEqual(['sending', 1]);
    expect([...mailsTo(lost), ...mailsTo(leased)]).toHaveLength(0);
  });

  test("erasing the contact takes its address out of the invoice mail, and gives up a mail still waiting for its retry", async () => {
    const acc = await createAccount(t);
    const address = `${unique('erased')}@example.test`;
    const invoice = await withContact(acc, address);
    ok(await send(t, acc, invoice.id));
    await settled([invoice.id]);
    const waiting = await t.db.invoiceMail.create({ data: { accountId: acc.id, invoiceId: invoice.id, to: address.toUpperCase(), attempts: 1, nextAttemptAt: new Date(Date.now() + 60 * 60_000) } });
    const r = await t.gql('mutation ($id: ID!) { eraseContact(id: $id) { contactId } }', { id: invoice.contactId }, { as: acc.owner });
    expect(r.errors).toBeUndefined();
    const rows = await t.db.invoiceMail.findMany({ where: { invoiceId: invoice.id }, orderBy: { createdAt: 'asc' } });
    expect(rows.map((m) => [m.to, m.status])).toEqual([['', 'sent'], ['', 'failed']]);
    expect(rows.find((m) => m.id === waiting.id)!.lastError).toBe(CONTACT_ERASED);
  });
});

describe('POST /api/v1/invoices/{id}/send', () => {
  test('sends the invoice, with {"to"} or {}, and answers the invoice with issued_at and hosted_url', async () => {
    const acc = await createAccount(t);
    const [a, b] = [await withContact(acc), await withContact(acc)];
    const r = await t.rest('POST', `/api/v1/invoices/${a.id}/send`, { as: acc.member, body: { to: 'ap@example.test' } });
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({ id: a.id, status: 'sent', issued_at: expect.any(String), hosted_url: expect.stringMatching(`^${PUBLIC_URL}/i/`) });
    // A blank "to" is none, as every optional text (docs/decisions.md §4): the contact's address.
    const bare = await t.rest('POST', `/api/v1/invoices/${b.id}/send`, { as: acc.member, body: { to: ' ' } });
    expect([bare.status, bare.body.data?.status]).toEqual([200, 'sent']);
    const read = await t.rest('GET', `/api/v1/invoices/${a.id}`, { as: acc.member });
    expect(read.body.data).toMatchObject({ issued_at: r.body.data.issued_at, hosted_url: r.body.data.hosted_url });
    await settled([a.id, b.id]);
    expect(mailsTo('ap@example.test')).toHaveLength(1);
  });

  test('a "to" that is not an e-mail address is a 400 naming to; no address with mail configured is a 400 on to', async () => {
    const acc = await createAccount(t);
    const invoice = await withContact(acc, null);
    const bad = await t.rest('POST', `/api/v1/invoices/${invoice.id}/send`, { as: acc.member, body: { to: 'not-an-address' } });
    expect([bad.status, bad.body.details]).toEqual([400, { to: ['Must be a valid e-mail address'] }]);
    expect(errorOf(await send(t, acc, invoice.id, 'nope')).extensions).toMatchObject({ code: 'BAD_USER_INPUT', details: { to: ['Must be a valid e-mail address'] } });
    const none = await t.rest('POST', `/api/v1/invoices/${invoice.id}/send`, { as: acc.member, body: {} });
    expect([none.status, none.body.details]).toEqual([400, { to: [NO_ADDRESS] }]);
    expect((await t.db.invoice.findUniqueOrThrow({ where: { id: invoice.id } })).status).toBe('draft');
    // Without mail configured there is nobody to write to: the draft is sent all the same.
    const elsewhere = await createAccount(plain);
    expect(ok(await send(plain, elsewhere, (await draft(plain, elsewhere)).id)).status).toBe('sent');
  });

  test("another account's invoice is a 404; a paid, cancelled or refunded one is a 409 (CONFLICT) and changes nothing", async () => {
    const [acc, other] = await Promise.all([createAccount(t), createAccount(t)]);
    const theirs = await withContact(other);
    const foreign = await t.rest('POST', `/api/v1/invoices/${theirs.id}/send`, { as: acc.member, body: {} });
    expect(foreign.status).toBe(404);
    expect(errorOf(await send(t, acc, theirs.id)).extensions?.code).toBe('NOT_FOUND');
    for (const status of ['paid', 'cancelled', 'refunded'] as const) {
      const invoice = await draft(t, acc, { status, contactId: (await createContact(t, acc)).id });
      const r = await t.rest('POST', `/api/v1/invoices/${invoice.id}/send`, { as: acc.member, body: {} });
      expect([r.status, status]).toEqual([409, status]);
      expect(errorOf(await send(t, acc, invoice.id)).extensions?.code).toBe('CONFLICT');
      expect((await t.db.invoice.findUniqueOrThrow({ where: { id: invoice.id } })).status).toBe(status);
    }
    expect(await t.db.invoiceMail.count({ where: { accountId: { in: [acc.id, other.id] } } })).toBe(0);
    expect(await t.db.event.count({ where: { accountId: acc.id, type: 'invoice.sent' } })).toBe(0);
  });
});
