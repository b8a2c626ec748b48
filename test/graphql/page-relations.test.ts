import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createAccount, createContact, type TestAccount } from '../factories/index.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

// docs/connections.md#cost-of-a-page: a page's to-one relations are built in its one statement, each
// as far as its selected fields need (src/graphql/selection.ts); what it answers is the record's own.

let t: TestApp;
let acc: TestAccount;
let dealId: string;
beforeAll(async () => {
  t = await createTestApp();
  acc = await createAccount(t);
  const contact = await createContact(t, acc);
  const stage = await t.db.pipelineStage.create({ data: { accountId: acc.id, name: 'Won', position: 3 } });
  dealId = (await t.db.deal.create({ data: { accountId: acc.id, title: 'D', contactId: contact.id, stageId: stage.id } })).id;
  await t.db.deal.create({ data: { accountId: acc.id, title: 'Alone' } });
});
afterAll(() => t?.close());

const CONTACT = 'id firstName lastName email phone contactType createdAt updatedAt';
const STAGE = 'id name position createdAt';

describe("a page's deal carries its contact and stage as the deal read by id does, whatever fields are asked", () => {
  const byId = async () => {
    const r = await t.gql(`query ($id: ID!) { deal(id: $id) { contact { ${CONTACT} } stage { ${STAGE} } } }`, { id: dealId }, { as: acc.member });
    expect(r.errors).toBeUndefined();
    return r.data.deal;
  };
  const page = async (selection: string, fragments = '') => {
    const r = await t.gql(`query ($a: ID!) { deals(accountId: $a) { nodes { id title ${selection} } } } ${fragments}`, { a: acc.id }, { as: acc.member });
    expect(r.errors).toBeUndefined();
    return r.data.deals.nodes as Record<string, any>[];
  };
  const pick = (o: Record<string, unknown>, fields: string) => Object.fromEntries(fields.split(' ').map((f) => [f, o[f]]));

  test('three of the contact fields, or all of them, through aliases and fragments', async () => {
    const whole = await byId();
    const few = await page('c: contact { id firstName lastName } stage { name }');
    expect(few.find((d) => d.id === dealId)).toEqual({ id: dealId, title: 'D', c: pick(whole.contact, 'id firstName lastName'), stage: { name: 'Won' } });
    expect(few.find((d) => d.title === 'Alone')).toMatchObject({ c: null, stage: null });
    const all = await page('...D contact { id }', `fragment D on Deal { contact { ${CONTACT} __typename } stage { ... on PipelineStage { ${STAGE} } } }`);
    expect(all.find((d) => d.id === dealId)).toEqual({ id: dealId, title: 'D', contact: { ...whole.contact, __typename: 'Contact' }, stage: whole.stage });
  });

  test('a field that is not a plain column (a nested relation) still answers', async () => {
    const [deal] = (await page('contact { id deals(first: 5) { totalCount } }')).filter((d) => d.id === dealId);
    expect(deal!.contact.deals.totalCount).toBe(1);
  });
});
