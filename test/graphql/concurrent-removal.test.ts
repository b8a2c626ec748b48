import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createAccount, createContact, type TestAccount } from '../factories/index.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

// A record removed by one request while another changes or removes it: the loser is told the record
// is gone (NOT_FOUND, as for an id never seen; REST 404), never an internal error, and the record
// is gone whatever the order (docs/decisions.md §12).

let t: TestApp;
let acc: TestAccount;
beforeAll(async () => {
  t = await createTestApp();
  acc = await createAccount(t);
});
afterAll(() => t?.close());

type Result = { data?: any; errors?: { extensions?: { code?: unknown } }[] };
const codes = (results: Result[]) => results.flatMap((r) => (r.errors ?? []).map((e) => e.extensions?.code));

describe('changes racing a removal', () => {
  test('14 concurrent deleteContact of one contact: one deletes it, every other is NOT_FOUND', async () => {
    for (let round = 0; round < 2; round++) { // 28 deletes: under the member's 30 a minute
      const c = await createContact(t, acc);
      const results: Result[] = await Promise.all(
        Array.from({ length: 14 }, () => t.gql('mutation ($id: ID!) { deleteContact(id: $id) { id } }', { id: c.id }, { as: acc.member })),
      );
      expect(results.filter((r) => !r.errors && r.data.deleteContact?.id === c.id)).toHaveLength(1);
      expect(codes(results).every((code) => code === 'NOT_FOUND'), JSON.stringify(codes(results))).toBe(true);
    }
  });

  test("setDealStatus and setInvoiceStatus racing their record's deletion: done or refused with a code of the change, never internal", async () => {
    // CONFLICT: deleteInvoice of an invoice that is no longer a draft.
    const expected = new Set(['NOT_FOUND', 'FORBIDDEN', 'INVALID_TRANSITION', 'CONFLICT']);
    for (let round = 0; round < 5; round++) {
      const deal = await t.db.deal.create({ data: { accountId: acc.id, title: 'Racing' } });
      const invoice = await t.db.invoice.create({ data: { accountId: acc.id, invoiceNumber: `R-${randomUUID()}`, amount: 10, dueDate: new Date('2027-01-01') } });
      const results: Result[] = await Promise.all([
        ...Array.from({ length: 6 }, (_, i) =>
          t.gql('mutation ($id: ID!, $s: DealStatus!) { setDealStatus(id: $id, status: $s) { id status } }', { id: deal.id, s: i % 2 ? 'won' : 'open' }, { as: acc.member })),
        t.gql('mutation ($id: ID!) { deleteDeal(id: $id) { id } }', { id: deal.id }, { as: acc.member }),
        ...Array.from({ length: 6 }, () => t.gql('mutation ($id: ID!) { setInvoiceStatus(id: $id, status: sent) { id status } }', { id: invoice.id }, { as: acc.member })),
        t.gql('mutation ($id: ID!) { deleteInvoice(id: $id) { id } }', { id: invoice.id }, { as: acc.member }),
      ]);
      expect(codes(results).filter((code) => !expected.has(String(code))), JSON.stringify(codes(results))).toEqual([]);
      expect(await t.db.deal.count({ where: { id: deal.id } })).toBe(0);
    }
  });
});
