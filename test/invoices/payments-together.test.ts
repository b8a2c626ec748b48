import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { waitingOn } from '../../src/db/together.js';
import type { InvoiceStatus } from '../../src/generated/prisma/enums.js';
import { createAccount, type TestAccount } from '../factories/index.js';
import { createTestApp, errorOf, type TestApp } from '../helpers/app.js';
import { holdTable, waitingForLocks } from '../helpers/held-locks.js';
import { skipIfMissing, unsetVariables } from '../helpers/prerequisites.js';

// Payments written together (docs/scaling.md "Statements shared by concurrent requests"): payments
// that arrive while one is written share the next statement. Here the first waits on a lock held on
// the payments table, so the rest are sure to wait for it; each must still be judged against its own
// invoice as it stands, and answered with its own payment or its own refusal, with its own events.
//
// PostgreSQL only: holding a lock while requests run needs a second connection, which PGlite (one
// connection, one statement at a time) has not. On PGlite the same path runs in every payment test.

const PAY = `mutation ($invoiceId: ID!, $input: RecordPaymentInput!) { recordPayment(invoiceId: $invoiceId, input: $input) { id amount invoice { id status amountPaid } } }`;

let t: TestApp;
let acc: TestAccount;
const SKIP = skipIfMissing(unsetVariables('DATABASE_URL'));

beforeAll(async () => {
  if (SKIP) return;
  // Waiting groups run when the statement before them ends, however long: the lock decides, not a clock.
  t = await createTestApp({ env: { DATABASE_SHARED_WAIT_MS: '60000' } });
  acc = await createAccount(t);
});
afterAll(() => t?.close());

let seeded = 0;
const invoice = (amount: number, status: InvoiceStatus = 'sent') =>
  t.db.invoice.create({ data: { accountId: acc.id, invoiceNumber: `TOG-${++seeded}`, amount, status, dueDate: new Date('2027-01-31') } });
const pay = (invoiceId: string, amount: number) => t.gql(PAY, { invoiceId, input: { method: 'card', amount } }, { as: acc.owner });

describe.skipIf(SKIP)('payments written together (PostgreSQL)', () => {
  test('payments that arrive while one is written share the next statement: each judged on its own invoice, with its own answer and events', async () => {
    const [first, whole, part, over, draft] = [await invoice(50), await invoice(100), await invoice(100), await invoice(30), await invoice(80, 'draft')];
    const held = await holdTable(t, 'payments');
    const firstPaid = pay(first.id, 50);
    await expect.poll(() => waitingForLocks(t)).toBe(1);
    // Paid in full, paid in part, more than is due, on a draft.
    const answers = [pay(whole.id, 100), pay(part.id, 40), pay(over.id, 30.01), pay(draft.id, 10)];
    await expect.poll(() => waitingOn(t.db)).toBe(answers.length);
    // A second payment on an invoice waits its turn in the invoice's line, then judges what the first left.
    const second = pay(part.id, 60);
    await held.release();

    expect((await firstPaid).data.recordPayment.invoice).toMatchObject({ status: 'paid', amountPaid: 50 });
    const [paidWhole, paidPart, tooMuch, onDraft] = await Promise.all(answers);
    expect(paidWhole!.data.recordPayment).toMatchObject({ amount: 100, invoice: { id: whole.id, status: 'paid', amountPaid: 100 } });
    // Its invoice is read after the write, when the second payment may have been written too.
    expect(paidPart!.data.recordPayment).toMatchObject({ amount: 40, invoice: { id: part.id } });
    expect(errorOf(tooMuch!).extensions).toMatchObject({ code: 'BAD_USER_INPUT', details: { amount: ['Exceeds the amount due (30.00)'] } });
    expect(errorOf(onDraft!).extensions?.code).toBe('CONFLICT');
    expect((await second).data.recordPayment).toMatchObject({ amount: 60, invoice: { id: part.id, status: 'paid', amountPaid: 100 } });

    const rows = await t.db.invoice.findMany({ where: { accountId: acc.id }, orderBy: { invoiceNumber: 'asc' } });
    expect(rows.map((r) => [r.status, r.amountPaid.toFixed(2)])).toEqual([['paid', '50.00'], ['paid', '100.00'], ['paid', '100.00'], ['sent', '0.00'], ['draft', '0.00']]);
    const payments = await t.db.payment.findMany({ where: { accountId: acc.id } });
    expect(payments.map((p) => [p.invoiceId, p.amount.toFixed(2)]).sort()).toEqual(
      [[first.id, '50.00'], [whole.id, '100.00'], [part.id, '40.00'], [part.id, '60.00']].sort());
    const events = await t.db.event.findMany({ where: { accountId: acc.id }, orderBy: { id: 'asc' } });
    const created = events.filter((e) => e.type === 'payment.created');
    expect(created.map((e) => e.subjectId).sort()).toEqual(payments.map((p) => p.id).sort());
    // Each invoice's moves, in order: sent → paid (first, whole), sent → partial → paid (part).
    const moves = (id: string) => events.filter((e) => e.type === 'invoice.status_changed' && e.subjectId === id).map((e) => (e.data as { object: { status: string } }).object.status);
    expect([moves(first.id), moves(whole.id), moves(part.id), moves(over.id), moves(draft.id)]).toEqual([['paid'], ['paid'], ['partial', 'paid'], [], []]);
  });
});
