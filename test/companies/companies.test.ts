import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, createUser, type TestAccount } from '../factories/index.js';
import { createTestApp, errorOf, type TestApp } from '../helpers/app.js';

// docs/decisions.md §21: companies, their domains, owners, and contacts linked by e-mail domain.

const CREATE = 'mutation ($input: CreateCompanyInput!) { createCompany(input: $input) { id name domain ownerId owner { id } } }';
const UPDATE = 'mutation ($id: ID!, $input: UpdateCompanyInput!) { updateCompany(id: $id, input: $input) { id domain ownerId } }';
const CREATE_CONTACT = 'mutation ($input: CreateContactInput!) { createContact(input: $input) { id companyId ownerId linkedCompany { id domain } owner { id } } }';
const UPDATE_CONTACT = 'mutation ($id: ID!, $input: UpdateContactInput!) { updateContact(id: $id, input: $input) { id companyId ownerId } }';
const CREATE_DEAL = 'mutation ($input: CreateDealInput!) { createDeal(input: $input) { id companyId ownerId company { id } owner { id } } }';
const UPSERT_CONTACTS =
  'mutation ($a: ID!, $inputs: [BatchContactInput!]!) { upsertContacts(accountId: $a, matchOn: EMAIL, inputs: $inputs) { items { status details contact { id companyId } } } }';

let t: TestApp;
let acc: TestAccount;
beforeAll(async () => {
  t = await createTestApp();
  acc = await createAccount(t);
});
afterAll(() => t?.close());

const details = (r: unknown) => errorOf(r as never).extensions?.details;
const company = async (input: Record<string, unknown>, account = acc) => {
  const r = await t.gql(CREATE, { input: { accountId: account.id, name: 'Acme', ...input } }, { as: account.owner });
  expect(r.errors).toBeUndefined();
  return r.data.createCompany as { id: string; domain: string | null };
};
const domainOf = () => `${randomUUID().slice(0, 8)}.example.org`;
/** The company_id a contact's `contact.created` event shows. */
const createdEventCompany = async (contactId: string) => {
  const event = await t.db.event.findFirstOrThrow({ where: { subjectId: contactId, type: 'contact.created' } });
  return (event.data as { object: { company_id: string | null } }).object.company_id;
};

describe('a company domain is normalised and unique in the account', () => {
  it('`https://www.X/` and `X/` are stored as the lower-case host', async () => {
    const host = domainOf();
    expect((await company({ domain: `https://www.${host.toUpperCase()}/about` })).domain).toBe(host);
    expect((await company({ domain: `${domainOf().toUpperCase()}/` })).domain).toMatch(/^[a-z0-9]+\.example\.org$/);
  });

  it('a duplicate domain (as written differently) is a 400 on domain, on create and on update; nothing is written', async () => {
    const host = domainOf();
    await company({ domain: host });
    const before = await t.db.company.count({ where: { accountId: acc.id } });
    expect(details(await t.gql(CREATE, { input: { accountId: acc.id, name: 'Again', domain: `HTTPS://${host}/` } }, { as: acc.owner }))).toEqual({
      domain: ['Already used by another company'],
    });
    const other = await company({ domain: domainOf() });
    expect(details(await t.gql(UPDATE, { id: other.id, input: { domain: host } }, { as: acc.owner }))).toEqual({ domain: ['Already used by another company'] });
    expect(await t.db.company.count({ where: { accountId: acc.id } })).toBe(before + 1);
  });

  it('the same domain in another account is fine; a domain that is not a host name is a 400 naming it', async () => {
    const host = domainOf();
    await company({ domain: host });
    const elsewhere = await createAccount(t);
    expect((await company({ domain: host }, elsewhere)).domain).toBe(host);
    expect(details(await t.gql(CREATE, { input: { accountId: acc.id, name: '', domain: 'not a host' } }, { as: acc.owner }))).toEqual({
      name: ['Required'],
      domain: ['Must be a host name such as acme.com'],
    });
  });
});

describe('contacts link to the company of their e-mail domain, never by free mail', () => {
  it('a contact created without companyId whose e-mail domain is a company domain is linked to it, and its event says so', async () => {
    const host = domainOf();
    const { id } = await company({ domain: host });
    const r = await t.gql(CREATE_CONTACT, { input: { accountId: acc.id, firstName: 'Ada', email: `Ada@${host.toUpperCase()}` } }, { as: acc.member });
    expect(r.errors).toBeUndefined();
    expect(r.data.createContact.linkedCompany).toEqual({ id, domain: host });
    expect(await createdEventCompany(r.data.createContact.id)).toBe(id);
  });

  it('in one batch each new contact links to its own domain\'s company, or to none', async () => {
    const [a, b] = [await company({ domain: domainOf() }), await company({ domain: domainOf() })];
    const inputs = [
      { firstName: 'Ann', email: `ann@${a.domain}` }, { firstName: 'Ben', email: `ben@${b.domain}` },
      { firstName: 'Cat', email: `cat@${domainOf()}` }, { firstName: 'Dan', email: `dan.${randomUUID().slice(0, 8)}@gmail.com` }, { firstName: 'Eve', email: `eve@${a.domain}`, companyId: b.id },
    ];
    const up = await t.gql(UPSERT_CONTACTS, { a: acc.id, inputs }, { as: acc.member });
    expect(up.errors).toBeUndefined();
    const contacts = up.data.upsertContacts.items.map((i: { contact: { id: string; companyId: string | null } }) => i.contact);
    expect(contacts.map((c: { companyId: string | null }) => c.companyId)).toEqual([a.id, b.id, null, null, b.id]);
    expect(await Promise.all(contacts.map((c: { id: string }) => createdEventCompany(c.id)))).toEqual([a.id, b.id, null, null, b.id]);
  });

  it('an explicit companyId wins over the e-mail domain; an upserted new contact links too', async () => {
    const [a, b] = [await company({ domain: domainOf() }), await company({ domain: domainOf() })];
    const r = await t.gql(CREATE_CONTACT, { input: { accountId: acc.id, firstName: 'Bo', email: `bo@${a.domain}`, companyId: b.id } }, { as: acc.member });
    expect(r.data.createContact.companyId).toBe(b.id);
    const up = await t.gql(UPSERT_CONTACTS, { a: acc.id, inputs: [{ firstName: 'Cy', email: `cy@${a.domain}` }] }, { as: acc.member });
    expect(up.errors).toBeUndefined();
    expect(up.data.upsertContacts.items[0]).toMatchObject({ status: 'CREATED', contact: { companyId: a.id } });
  });

  it('a company carrying a free-mail domain never links contacts', async () => {
    const free = await t.db.company.findFirst({ where: { accountId: acc.id, domain: 'gmail.com' } });
    const { id } = free ?? (await company({ name: 'Google', domain: 'gmail.com' }));
    const r = await t.gql(CREATE_CONTACT, { input: { accountId: acc.id, firstName: 'Di', email: 'di@gmail.com' } }, { as: acc.member });
    expect(r.data.createContact.companyId).toBeNull();
    expect(id).toBeTruthy();
  });
});

describe('an owner must be the account owner or a member', () => {
  it('the owner and a member may own records; an outsider is a 400 "Not a member of this account" on ownerId', async () => {
    expect((await company({ ownerId: acc.member.id })).domain).toBeNull();
    const r = await t.gql(CREATE_CONTACT, { input: { accountId: acc.id, firstName: 'Ed', ownerId: acc.owner.id } }, { as: acc.member });
    expect(r.data.createContact.owner).toEqual({ id: acc.owner.id });
    for (const [query, input] of [
      [CREATE, { name: 'X' }],
      [CREATE_CONTACT, { firstName: 'X' }],
      [CREATE_DEAL, { title: 'X' }],
    ] as const) {
      expect(details(await t.gql(query, { input: { accountId: acc.id, ...input, ownerId: acc.outsider.id } }, { as: acc.member }))).toEqual({
        ownerId: ['Not a member of this account'],
      });
    }
    const contact = r.data.createContact.id as string;
    expect(details(await t.gql(UPDATE_CONTACT, { id: contact, input: { ownerId: randomUUID() } }, { as: acc.member }))).toEqual({
      ownerId: ['Not a member of this account'],
    });
  });
});

describe("another account's company is refused", () => {
  it('on a contact and on a deal: a 400 on companyId, and nothing is written', async () => {
    const elsewhere = await createAccount(t);
    const theirs = await company({ domain: domainOf() }, elsewhere);
    const before = await t.db.contact.count({ where: { accountId: acc.id } });
    expect(details(await t.gql(CREATE_CONTACT, { input: { accountId: acc.id, firstName: 'F', companyId: theirs.id } }, { as: acc.member }))).toEqual({
      companyId: ['Not found in this account'],
    });
    expect(details(await t.gql(CREATE_DEAL, { input: { accountId: acc.id, title: 'D', companyId: theirs.id } }, { as: acc.member }))).toEqual({
      companyId: ['Not found in this account'],
    });
    expect(await t.db.contact.count({ where: { accountId: acc.id } })).toBe(before);
    const ours = await company({});
    const deal = await t.gql(CREATE_DEAL, { input: { accountId: acc.id, title: 'D', companyId: ours.id, ownerId: acc.member.id } }, { as: acc.member });
    expect(deal.data.createDeal).toMatchObject({ company: { id: ours.id }, owner: { id: acc.member.id } });
  });
});

describe('ownership is released when a member is removed or leaves', () => {
  it("their contacts, deals and companies become unowned, each with a *.updated event naming the previous owner", async () => {
    const team = await createAccount(t);
    const leaver = await createUser(t);
    await t.db.teamMember.create({ data: { accountId: team.id, userId: leaver.id } });
    const owned = { accountId: team.id, ownerId: leaver.id };
    const [contact, deal, firm] = await Promise.all([
      t.gql(CREATE_CONTACT, { input: { ...owned, firstName: 'G' } }, { as: team.owner }),
      t.gql(CREATE_DEAL, { input: { ...owned, title: 'G' } }, { as: team.owner }),
      t.gql(CREATE, { input: { ...owned, name: 'G' } }, { as: team.owner }),
    ]);
    const kept = await t.gql(CREATE_CONTACT, { input: { accountId: team.id, firstName: 'H', ownerId: team.member.id } }, { as: team.owner });
    const ids = [contact.data.createContact.id, deal.data.createDeal.id, firm.data.createCompany.id];

    const r = await t.gql('mutation ($a: ID!) { leaveAccount(accountId: $a) }', { a: team.id }, { as: leaver });
    expect(r.errors).toBeUndefined();
    expect((await t.db.contact.findUniqueOrThrow({ where: { id: ids[0] } })).ownerId).toBeNull();
    expect((await t.db.deal.findUniqueOrThrow({ where: { id: ids[1] } })).ownerId).toBeNull();
    expect((await t.db.company.findUniqueOrThrow({ where: { id: ids[2] } })).ownerId).toBeNull();
    expect((await t.db.contact.findUniqueOrThrow({ where: { id: kept.data.createContact.id } })).ownerId).toBe(team.member.id);
    const events = await t.db.event.findMany({ where: { accountId: team.id, subjectId: { in: ids }, type: { endsWith: '.updated' } } });
    expect(events.map((e) => e.type).sort()).toEqual(['company.updated', 'contact.updated', 'deal.updated']);
    for (const e of events) expect((e.data as { previous: unknown }).previous).toEqual({ owner_id: leaver.id });

    // removeTeamMember releases the same way.
    await t.db.teamMember.create({ data: { accountId: team.id, userId: leaver.id } });
    await t.gql(CREATE_CONTACT, { input: { ...owned, firstName: 'I' } }, { as: team.owner });
    await t.gql('mutation ($a: ID!, $u: ID!) { removeTeamMember(accountId: $a, userId: $u) { id } }', { a: team.id, u: leaver.id }, { as: team.owner });
    expect(await t.db.contact.count({ where: { accountId: team.id, ownerId: leaver.id } })).toBe(0);
  });
});

describe('a company lists its contacts and deals; deleting it unlinks them', () => {
  it('Company.contacts and Company.deals are connections; deleteCompany leaves the records unlinked', async () => {
    const firm = await company({ domain: domainOf() });
    await t.gql(CREATE_CONTACT, { input: { accountId: acc.id, firstName: 'J', email: `j@${firm.domain}` } }, { as: acc.member });
    await t.gql(CREATE_DEAL, { input: { accountId: acc.id, title: 'J', companyId: firm.id } }, { as: acc.member });
    const read = await t.gql(
      'query ($id: ID!) { company(id: $id) { contacts(first: 10) { totalCount nodes { firstName } } deals(first: 10) { totalCount nodes { title } } } }',
      { id: firm.id },
      { as: acc.member },
    );
    expect(read.errors).toBeUndefined();
    expect(read.data.company).toEqual({ contacts: { totalCount: 1, nodes: [{ firstName: 'J' }] }, deals: { totalCount: 1, nodes: [{ title: 'J' }] } });
    const del = await t.gql('mutation ($id: ID!) { deleteCompany(id: $id) { id } }', { id: firm.id }, { as: acc.member });
    expect(del.errors).toBeUndefined();
    expect(await t.db.contact.count({ where: { accountId: acc.id, companyId: firm.id } })).toBe(0);
    expect((await t.gql('query ($id: ID!) { company(id: $id) { id } }', { id: firm.id }, { as: acc.member })).data.company).toBeNull();
  });

  it('Account.companies filters by search, domain and ownerId', async () => {
    const host = domainOf();
    const firm = await company({ name: 'Zebra Findable', domain: host, ownerId: acc.member.id });
    const q = 'query ($a: ID!, $f: CompanyFilter) { account(id: $a) { companies(first: 5, filter: $f) { totalCount nodes { id } } } }';
    for (const filter of [{ search: 'zebra find' }, { domain: `https://www.${host}/` }, { ownerId: acc.member.id, search: host }]) {
      const r = await t.gql(q, { a: acc.id, f: filter }, { as: acc.member });
      expect(r.errors, JSON.stringify(filter)).toBeUndefined();
      expect(r.data.account.companies.nodes).toEqual([{ id: firm.id }]);
    }
  });
});
