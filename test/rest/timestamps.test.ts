import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, type TestAccount } from '../factories/index.js';
import { createTestApp, errorOf, type TestApp } from '../helpers/app.js';

// docs/decisions.md §3 (dates and timestamps taken): ISO 8601 with a time zone, a real day, one the database
// can store (years 1 to 9999); anything else is the client's mistake, a 400 naming the field, never a 500.

let t: TestApp;
let acc: TestAccount;
beforeAll(async () => {
  t = await createTestApp();
  acc = await createAccount(t);
});
afterAll(() => t?.close());

const RANGE = 'Must be from 0001-01-01T00:00:00Z to 9999-12-31T23:59:59Z';
const FORMAT = 'Must be an ISO 8601 timestamp with a time zone';

describe('a timestamp the database cannot hold is a 400, never a 500', () => {
  it.each([
    ['/api/v1/invoices', 'created_since', '0000-01-01T00:00:00Z', RANGE],
    ['/api/v1/contacts', 'updated_since', '0000-06-01T00:00:00Z', RANGE],
    // The offset carries the first instant of year 1 back into year 0 (UTC).
    ['/api/v1/deals', 'created_since', '0001-01-01T00:00:00+01:00', RANGE],
    ['/api/v1/deals', 'created_since', '9999-12-31T23:00:00-05:00', RANGE],
    // Not a real day: Date alone would read it as 2 March.
    ['/api/v1/invoices', 'updated_since', '2026-02-30T00:00:00Z', FORMAT],
  ])('GET %s?%s=%s is a 400 naming it', async (path, param, value, message) => {
    const r = await t.rest('GET', `${path}?account_id=${acc.id}&${param}=${encodeURIComponent(value)}`, { as: acc.owner });
    expect(r.status).toBe(400);
    expect(r.body.details).toEqual({ [param]: [message] });
  });

  it('the first and last storable instants are read as given', async () => {
    for (const value of ['0001-01-01T00:00:00Z', '9999-12-31T23:59:59Z', '2024-02-29T12:00:00+05:30']) {
      const r = await t.rest('GET', `/api/v1/contacts?account_id=${acc.id}&updated_since=${encodeURIComponent(value)}`, { as: acc.owner });
      expect(r.status, value).toBe(200);
    }
  });

  it('/graphql: a DateTime and a Date of year 0 are BAD_USER_INPUT', async () => {
    const filter = await t.gql('query ($id: ID!, $at: DateTime) { account(id: $id) { contacts(filter: { createdBefore: $at }) { totalCount } } }', { id: acc.id, at: '0000-01-01T00:00:00Z' }, { as: acc.owner });
    expect(errorOf(filter).extensions?.code).toBe('BAD_USER_INPUT');
    const day = await t.gql('query ($id: ID!) { account(id: $id) { invoices(filter: { dueAfter: "0000-01-01" }) { totalCount } } }', { id: acc.id }, { as: acc.owner });
    expect(errorOf(day).extensions?.code).toBe('BAD_USER_INPUT');
  });
});
