import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, createContact } from '../factories/index.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

describe('smoke', () => {
  it('lists contacts for a member', async () => {
    const acc = await createAccount(t);
    await createContact(t, acc, { firstName: 'Ada' });
    const r = await t.gql(
      `query($a: ID!) { contacts(accountId: $a) { total nodes { firstName } } }`,
      { a: acc.id },
      { as: acc.member },
    );
    expect(r.errors).toBeUndefined();
    expect(r.data.contacts.total).toBe(1);
  });
});
