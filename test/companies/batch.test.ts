/**
 * docs/decisions.md §21 (upsertCompanies) on §16's batch path: Mutation.upsertCompanies and
 * POST /api/v1/companies/batch. Who may call them: test/security/access-matrix.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, createApiKey, createMember, unique, type TestAccount } from '../factories/index.js';
import { createTestApp, errorOf, type TestApp, type TestUser } from '../helpers/app.js';
import { skipIfMissing, unsetVariables } from '../helpers/prerequisites.js';
import { roundTrips } from '../helpers/round-trips.js';

let t: TestApp;
let acc: TestAccount;
/** The REST cases' caller: batches share one bucket of 30 a minute per user, and the GraphQL cases use acc.member's. */
let restUser: TestUser;
beforeAll(async () => {
  t = await createTestApp();
  acc = await createAccount(t);
  restUser = await createMember(t, acc.id);
});
afterAll(() => t?.close());

const UPSERT = `mutation ($a: ID!, $m: CompanyMatch!, $i: [BatchCompanyInput!]!, $all: Boolean) {
  upsertCompanies(accountId: $a, matchOn: $m, inputs: $i, allOrNothing: $all) {
    created updated unchanged failed items { index status id details company { id name domain externalId ownerId } } } }`;
const upsert = (matchOn: 'DOMAIN' | 'EXTERNAL_ID', inputs: Record<string, unknown>[], allOrNothing = false, as: TestUser = acc.member, account = acc.id) =>
  t.gql(UPSERT, { a: account, m: matchOn, i: inputs, all: allOrNothing }, { as });
const ok = async (r: ReturnType<typeof upsert>) => {
  const result = await r;
  expect(result.errors).toBeUndefined();
  return result.data.upsertCompanies;
};
const domainOf = () => `${unique('d').toLowerCase()}.example.org`;
const post = (body: Record<string, unknown>, as: TestUser = restUser, headers: Record<string, string> = {}) =>
  t.rest('POST', '/api/v1/companies/batch', { as, headers, body: { account_id: acc.id, ...body } });
const eventsOf = (ids: string[]) => t.db.event.findMany({ where: { subjectId: { in: ids } }, orderBy: { occurredAt: 'asc' } });

describe('upsertCompanies', () => {
  it('matches on the domain as normalised: a match updates only the fields given (UNCHANGED when none differ), no match creates', async () => {
    const host = domainOf();
    const first = await ok(upsert('DOMAIN', [{ name: 'Acme', domain: `https://www.${host.toUpperCase()}/about`, industry: 'Tools' }]));
    expect(first).toMatchObject({ created: 1, items: [{ status: 'CREATED', company: { name: 'Acme', domain: host } }] });
    const id = first.items[0].id as string;
    const again = await ok(upsert('DOMAIN', [{ domain: `${host}/`, phone: '+1 555 0100' }]));
    expect(again).toMatchObject({ updated: 1, items: [{ status: 'UPDATED', id, company: { name: 'Acme' } }] });
    const same = await ok(upsert('DOMAIN', [{ domain: host.toUpperCase(), industry: 'Tools' }]));
    expect(same).toMatchObject({ unchanged: 1, items: [{ status: 'UNCHANGED', id }] });
    expect(await t.db.company.count({ where: { accountId: acc.id, domain: host } })).toBe(1);
  });

  it('every company written has its company.created or company.updated event; an unchanged one has none', async () => {
    const [a, b] = [domainOf(), domainOf()];
    const created = await ok(upsert('DOMAIN', [{ name: 'A', domain: a }, { name: 'B', domain: b }]));
    const ids = created.items.map((i: { id: string }) => i.id);
    await ok(upsert('DOMAIN', [{ domain: a, name: 'A2' }, { domain: b, name: 'B' }]));
    const events = await eventsOf(ids);
    expect(events.map((e) => [e.subjectId, e.type])).toEqual([
      [ids[0], 'company.created'],
      [ids[1], 'company.created'],
      [ids[0], 'company.updated'],
    ]);
    expect(events[2]!.data).toMatchObject({ object: { name: 'A2', domain: a }, previous: { name: 'A' } });
  });

  it('matches on the external id exactly, and then may change the domain', async () => {
    const ext = unique('ext');
    const host = domainOf();
    const first = await ok(upsert('EXTERNAL_ID', [{ name: 'Ext', externalId: ext }]));
    const moved = await ok(upsert('EXTERNAL_ID', [{ externalId: ext, domain: host }]));
    expect(moved.items[0]).toMatchObject({ status: 'UPDATED', id: first.items[0].id, company: { domain: host, externalId: ext } });
    expect((await ok(upsert('EXTERNAL_ID', [{ name: 'Other', externalId: ext.toUpperCase() }]))).created).toBe(1);
  });

  it('a domain another company holds fails its item on domain; the others are written', async () => {
    const [held, free] = [domainOf(), domainOf()];
    await ok(upsert('DOMAIN', [{ name: 'Holder', domain: held }]));
    const r = await ok(upsert('EXTERNAL_ID', [{ name: 'Taker', externalId: unique('e'), domain: `WWW.${held}` }, { name: 'Free', externalId: unique('e'), domain: free }]));
    expect(r).toMatchObject({ created: 1, failed: 1 });
    expect(r.items[0]).toEqual({ index: 0, status: 'FAILED', id: null, company: null, details: { domain: ['Already used by another company'] } });
    expect(await t.db.company.count({ where: { accountId: acc.id, domain: held } })).toBe(1);
  });

  it('two items with one domain (as written differently): the later fails with Duplicate in this batch', async () => {
    const host = domainOf();
    const r = await ok(upsert('DOMAIN', [{ name: 'One', domain: host }, { name: 'Two', domain: `http://${host.toUpperCase()}` }]));
    expect(r.items.map((i: { status: string }) => i.status)).toEqual(['CREATED', 'FAILED']);
    expect(r.items[1].details).toEqual({ domain: ['Duplicate in this batch'] });
    const ext = await ok(upsert('EXTERNAL_ID', [{ name: 'One', externalId: unique('x'), domain: domainOf() }, { name: 'Two', externalId: unique('x'), domain: host }]));
    expect(ext.items[1].details).toEqual({ domain: ['Already used by another company'] });
  });

  it('a domain that is not a host name, a missing domain, a missing name and an owner who is not a member fail their items by REST name', async () => {
    const r = await ok(
      upsert('DOMAIN', [
        { name: 'Bad', domain: 'not a host' },
        { name: 'None' },
        { domain: domainOf() },
        { name: 'Stranger', domain: domainOf(), ownerId: acc.outsider.id },
        { name: 'Member', domain: domainOf(), ownerId: acc.member.id },
      ]),
    );
    expect(r.items.map((i: { details: unknown }) => i.details)).toEqual([
      { domain: ['Must be a host name such as acme.com'] },
      { domain: ['Required'] },
      { name: ['Required'] },
      { owner_id: ['Not a member of this account'] },
      null,
    ]);
    expect(r.items[4].company.ownerId).toBe(acc.member.id);
  });

  it('allOrNothing: one failure writes nothing, and every item reports', async () => {
    const host = domainOf();
    const r = await ok(upsert('DOMAIN', [{ name: 'Kept back', domain: host }, { name: 'Bad', domain: '-' }], true));
    expect(r).toMatchObject({ created: 0, failed: 2 });
    expect(r.items[0].details).toEqual({ all_or_nothing: ['Not written: another record of the batch failed'] });
    expect(await t.db.company.count({ where: { accountId: acc.id, domain: host } })).toBe(0);
  });

  it('concurrent upserts of one new domain create exactly one company', async () => {
    const host = domainOf();
    const results = await Promise.all(Array.from({ length: 4 }, (_, i) => ok(upsert('DOMAIN', [{ name: `Racer ${i}`, domain: host }]))));
    expect(results.map((r) => r.created + r.updated + r.unchanged)).toEqual([1, 1, 1, 1]);
    expect(results.reduce((n, r) => n + r.created, 0)).toBe(1);
    expect(await t.db.company.count({ where: { accountId: acc.id, domain: host } })).toBe(1);
  });

  it('an outsider is refused and nothing is written; a key needs companies:write, and reads the records only with companies:read', async () => {
    const host = domainOf();
    expect(errorOf(await upsert('DOMAIN', [{ name: 'X', domain: host }], false, acc.outsider)).extensions?.code).toBe('FORBIDDEN');
    expect(errorOf(await upsert('DOMAIN', [{ name: 'X', domain: host }], false, await createApiKey(t, acc, ['CONTACTS_WRITE']))).extensions?.code).toBe('FORBIDDEN');
    expect(await t.db.company.count({ where: { accountId: acc.id, domain: host } })).toBe(0);
    const writer = await ok(upsert('DOMAIN', [{ name: 'Keyed', domain: host }], false, await createApiKey(t, acc, ['COMPANIES_WRITE'])));
    expect(writer.items[0]).toMatchObject({ status: 'CREATED', company: null });
    expect(writer.items[0].id).toEqual(expect.any(String));
  });

  it('1 to 100 inputs: none or 101 is a 400 naming inputs', async () => {
    const names = (r: Awaited<ReturnType<typeof upsert>>) => Object.keys(errorOf(r).extensions?.details ?? {});
    expect(names(await upsert('DOMAIN', []))).toEqual(['inputs']);
    expect(names(await upsert('DOMAIN', Array.from({ length: 101 }, () => ({ name: 'M', domain: domainOf() }))))).toEqual(['inputs']);
  });
});

describe('POST /api/v1/companies/batch', () => {
  it('answers as /contacts/batch: 200 {data: [{index, status, id, data | details}], created, updated, unchanged, failed}, by REST names', async () => {
    const host = domainOf();
    const r = await post({ mode: 'upsert', match_on: 'domain', records: [{ name: 'Acme', domain: `https://${host}/`, external_id: unique('r') }, { name: 'Acme', domain: host }, { name: 'X', favourite: 1 }] });
    expect(r.status, r.text).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual(['created', 'data', 'failed', 'unchanged', 'updated']);
    expect(r.body).toMatchObject({ created: 1, updated: 0, unchanged: 0, failed: 2 });
    expect(r.body.data[0]).toMatchObject({ index: 0, status: 'created', data: { name: 'Acme', domain: host, phone: null, owner_id: null } });
    expect(r.body.data[0].id).toBe(r.body.data[0].data.id);
    expect(r.body.data[1]).toEqual({ index: 1, status: 'failed', details: { domain: ['Duplicate in this batch'] } });
    expect(r.body.data[2]).toEqual({ index: 2, status: 'failed', details: { favourite: ['Unknown field'] } });
  });

  it('mode defaults to upsert and is the only one; match_on is domain or external_id, and required', async () => {
    const ext = unique('r');
    expect((await post({ match_on: 'external_id', records: [{ name: 'Default', external_id: ext }] })).body).toMatchObject({ created: 1 });
    const refused = async (body: Record<string, unknown>) => {
      const r = await post(body);
      expect(r.status, r.text).toBe(400);
      return r.body.details;
    };
    expect(await refused({ mode: 'create', match_on: 'domain', records: [{ name: 'A' }] })).toEqual({ mode: ['Must be one of: upsert'] });
    expect(await refused({ match_on: 'email', records: [{ name: 'A' }] })).toEqual({ match_on: ['Must be one of: domain, external_id'] });
    expect(await refused({ records: [{ name: 'A' }] })).toEqual({ match_on: ['Required'] });
    expect(await refused({ match_on: 'domain', records: [] })).toEqual({ records: ['Must have 1 to 100 records'] });
  });

  it('all_or_nothing: a taken domain writes nothing, and every record reports failed', async () => {
    const [held, fresh] = [domainOf(), domainOf()];
    await post({ match_on: 'domain', records: [{ name: 'Holder', domain: held }] });
    const r = await post({ match_on: 'external_id', all_or_nothing: true, records: [{ name: 'New', external_id: unique('r'), domain: fresh }, { name: 'Taker', external_id: unique('r'), domain: held }] });
    expect(r.body).toMatchObject({ created: 0, failed: 2 });
    expect(r.body.data.map((i: { details: unknown }) => i.details)).toEqual([
      { all_or_nothing: ['Not written: another record of the batch failed'] },
      { domain: ['Already used by another company'] },
    ]);
    expect(await t.db.company.count({ where: { accountId: acc.id, domain: fresh } })).toBe(0);
  });

  it('Idempotency-Key: a retry gets the first answer and writes nothing again', async () => {
    const host = domainOf();
    const headers = { 'idempotency-key': unique('key') };
    const body = { match_on: 'domain', records: [{ name: 'Once', domain: host }] };
    const first = await post(body, restUser, headers);
    const second = await post(body, restUser, headers);
    expect([first.status, second.status]).toEqual([200, 200]);
    expect(second.body).toEqual(first.body);
    expect(first.body.created).toBe(1);
    expect(await t.db.company.count({ where: { accountId: acc.id, domain: host } })).toBe(1);
  });
});

// Counted on pg's client, as test/graphql/batches.test.ts counts the contacts' (PostgreSQL only).
describe.skipIf(skipIfMissing(unsetVariables('DATABASE_URL')))('a companies batch: round trips do not grow with it', () => {
  it('upserting 100 companies by domain costs the statements of upserting one: access, BEGIN, lock, read, write, COMMIT', async () => {
    const batchOf = (n: number) => Array.from({ length: n }, () => ({ name: 'Round', domain: domainOf(), externalId: unique('rt') }));
    // A member of its own: the file's other batches have used much of acc.member's 30 a minute.
    const member = await createMember(t, acc.id);
    await ok(upsert('DOMAIN', batchOf(1), false, member));
    const one = await roundTrips(() => ok(upsert('DOMAIN', batchOf(1), false, member)));
    expect(await roundTrips(() => ok(upsert('DOMAIN', batchOf(100), false, member)))).toBe(one);
    expect(one).toBe(6);
  });
});
