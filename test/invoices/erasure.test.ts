import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createAccount, createContact } from '../factories/index.js';
import { createTestApp, type GqlResult, type TestApp } from '../helpers/app.js';

// docs/decisions.md §20: an erasure (eraseContact, §12) leaves the person's invoices, their lines and
// their payments (legal retention), unlinked from the person, with their money unchanged.

let t: TestApp;
beforeAll(async () => void (t = await createTestApp()));
afterAll(() => t?.close());

const ok = (r: GqlResult) => {
  expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
  return Object.values(r.data)[0] as Record<string, any>;
};

describe('erasure and billing records', () => {
  test('erasing a contact keeps its invoices, lines and payments, unlinked from the person, money unchanged', async () => {
    const acc = await createAccount(t);
    const contact = await createContact(t, acc, { firstName: 'Erasable' });
    const invoice = ok(
      await t.gql(
        'mutation ($i: CreateInvoiceInput!) { createInvoice(input: $i) { id } }',
        { i: { accountId: acc.id, contactId: contact.id, dueDate: '2030-01-31', currency: 'EUR', lines: [{ description: 'Design', quantity: 3, unitPrice: 0.1 }, { description: 'Print', unitPrice: 19.99, taxRate: 7.25 }] } },
        { as: acc.member },
      ),
    );
    ok(await t.gql('mutation ($id: ID!) { setInvoiceStatus(id: $id, status: sent) { id } }', { id: invoice.id }, { as: acc.member }));
    const payment = ok(await t.gql('mutation ($id: ID!, $i: RecordPaymentInput!) { recordPayment(invoiceId: $id, input: $i) { id } }', { id: invoice.id, i: { amount: 10, method: 'card' } }, { as: acc.member }));
    ok(await t.gql('mutation ($id: ID!) { refundPayment(paymentId: $id, amount: 2.5) { id } }', { id: payment.id }, { as: acc.member }));
    const READ = `query ($id: ID!) { invoice(id: $id) { contact { id } status currency total amountPaid amountDue lines { description amount tax } payments { nodes { id amount refundedAmount } } } }`;
    const before = ok(await t.gql(READ, { id: invoice.id }, { as: acc.member }));
    expect(before.contact).toEqual({ id: contact.id });

    const receipt = ok(await t.gql('mutation ($id: ID!) { eraseContact(id: $id) { invoicesUnlinked } }', { id: contact.id }, { as: acc.owner }));
    expect(receipt.invoicesUnlinked).toBe(1);

    const after = ok(await t.gql(READ, { id: invoice.id }, { as: acc.member }));
    expect(after).toEqual({ ...before, contact: null });
    expect(after).toMatchObject({ status: 'partial', total: 21.74, amountPaid: 7.5, lines: [{ description: 'Design', amount: 0.3, tax: 0 }, { description: 'Print', amount: 19.99, tax: 1.45 }] });
    expect(await t.db.invoiceLine.count({ where: { accountId: acc.id, invoiceId: invoice.id } })).toBe(2);
    expect(await t.db.payment.findMany({ where: { accountId: acc.id }, select: { id: true } })).toEqual([{ id: payment.id }]);
    expect(await t.db.contact.findUnique({ where: { id: contact.id } })).toBeNull();
  });
});
