/**
 * A cookie-authenticated POST /graphql from another site holding a mutation is refused as a whole,
 * before anything executes (decisions.md §1, docs/faults.md "Cross-site GraphQL mutations"): HTTP 403,
 * a GraphQL error body with extensions.code FORBIDDEN and message "Forbidden: cross-site request".
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, unique, type TestAccount } from '../factories/index.js';
import { createTestApp, TEST_ORIGIN, type TestApp } from '../helpers/app.js';

describe('the cross-site rule on POST /graphql', () => {
  let t: TestApp;
  let acc: TestAccount;
  beforeAll(async () => {
    t = await createTestApp();
    acc = await createAccount(t);
  });
  afterAll(() => t?.close());

  const create = (name: string, headers: Record<string, string>) =>
    fetch(`${t.baseUrl}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({
        query: 'mutation ($input: CreateContactInput!) { createContact(input: $input) { id } }',
        variables: { input: { accountId: acc.id, firstName: name } },
      }),
    });
  const stored = (name: string) => t.db.contact.count({ where: { accountId: acc.id, firstName: name } });

  it('with the session cookie from another site: 403 {"errors":[{"message":"Forbidden: cross-site request","extensions":{"code":"FORBIDDEN"}}]}, nothing written', async () => {
    const name = unique('cross');
    const r = await create(name, { cookie: `session=${acc.owner.token}`, origin: 'https://evil.example' });
    expect(r.status).toBe(403);
    const body = (await r.json()) as { data?: unknown; errors: { message: string; extensions: { code: string } }[] };
    expect(body.errors).toHaveLength(1);
    expect(body.errors[0]!.message).toBe('Forbidden: cross-site request');
    expect(body.errors[0]!.extensions.code).toBe('FORBIDDEN');
    expect(body.data ?? null).toBeNull();
    expect(await stored(name)).toBe(0);
  });

  it('with no Origin or Referer at all, a cookie POST holding a mutation is refused the same way', async () => {
    const name = unique('bare');
    const r = await create(name, { cookie: `session=${acc.owner.token}` });
    expect(r.status).toBe(403);
    expect(await stored(name)).toBe(0);
  });

  it('from an allowed origin with the cookie, or from anywhere with a bearer token, the mutation runs', async () => {
    const a = unique('allowed');
    expect((await create(a, { cookie: `session=${acc.owner.token}`, origin: TEST_ORIGIN })).status).toBe(200);
    const b = unique('bearer');
    expect((await create(b, { authorization: `Bearer ${acc.owner.token}`, origin: 'https://evil.example' })).status).toBe(200);
    expect([await stored(a), await stored(b)]).toEqual([1, 1]);
  });

  it('a cross-site cookie POST holding only a query is not refused as a whole', async () => {
    const r = await fetch(`${t.baseUrl}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie: `session=${acc.owner.token}`, origin: 'https://evil.example' },
      body: JSON.stringify({ query: '{ __typename }' }),
    });
    expect(r.status).toBe(200);
  });
});
