import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createAccount, createUser, type TestAccount } from '../factories/index.js';
import { createTestApp, type GqlResult, type TestApp, type TestUser, errorOf } from '../helpers/app.js';

const CREATE = /* GraphQL */ `
  mutation CreatePipelineStage($input: CreatePipelineStageInput!) {
    createPipelineStage(input: $input) { id accountId name position createdAt }
  }
`;
const LIST = /* GraphQL */ `
  query PipelineStages($accountId: ID!) {
    pipelineStages(accountId: $accountId) { id name position }
  }
`;

let t: TestApp;
let acc: TestAccount;

beforeAll(async () => {
  t = await createTestApp();
  acc = await createAccount(t);
});
afterAll(() => t?.close());

const expectCode = (result: GqlResult, code: string) => expect(errorOf(result).extensions?.code).toBe(code);
const expectDetails = (result: GqlResult, details: Record<string, string[]>) => {
  expect(errorOf(result).extensions).toMatchObject({ code: 'BAD_USER_INPUT', details });
};

const create = (account: TestAccount, input: Record<string, unknown>, as: TestUser | null = account.owner) =>
  t.gql(CREATE, { input: { accountId: account.id, ...input } }, { as });
const list = (account: TestAccount, as: TestUser | null = account.owner) => t.gql(LIST, { accountId: account.id }, { as });

describe('Mutation.createPipelineStage', () => {
  test('without a position the first stage gets 0 and each next one goes after the last', async () => {
    const fresh = await createAccount(t);
    const first = await create(fresh, { name: '  Lead  ' });
    expect(first.errors).toBeUndefined();
    expect(first.data.createPipelineStage).toMatchObject({ accountId: fresh.id, name: 'Lead', position: 0 });
    expect((await create(fresh, { name: 'Far', position: 10 })).data.createPipelineStage.position).toBe(10);
    expect((await create(fresh, { name: 'Next' }, fresh.member)).data.createPipelineStage.position).toBe(11);
  });

  test('an explicit position is kept, even if another stage already holds it', async () => {
    const fresh = await createAccount(t);
    await create(fresh, { name: 'A', position: 3 });
    const twin = await create(fresh, { name: 'B', position: 3 });
    expect(twin.data.createPipelineStage.position).toBe(3);
  });

  test('a blank name is Required; a name over 100 characters is refused', async () => {
    expectDetails(await create(acc, { name: ' ' }), { name: ['Required'] });
    expectDetails(await create(acc, { name: 'n'.repeat(101) }), { name: ['Must be at most 100 characters'] });
    expect((await create(acc, { name: 'n'.repeat(100) })).errors).toBeUndefined();
  });

  test('position is an integer from 0', async () => {
    expectDetails(await create(acc, { name: 'x', position: -1 }), { position: ['Must be from 0 to 1000000'] });
    expectDetails(await create(acc, { name: 'x', position: 1_000_001 }), { position: ['Must be from 0 to 1000000'] });
    // GraphQL's Int refuses a fraction before any resolver runs.
    expect((await create(acc, { name: 'x', position: 1.5 })).errors?.length).toBeGreaterThan(0);
  });

  test('a member may create a stage; an outsider is FORBIDDEN; anonymous is UNAUTHENTICATED', async () => {
    expect((await create(acc, { name: 'By member' }, acc.member)).errors).toBeUndefined();
    expectCode(await create(acc, { name: 'By outsider' }, acc.outsider), 'FORBIDDEN');
    expectCode(await create(acc, { name: 'By nobody' }, null), 'UNAUTHENTICATED');
    expectCode(await create(acc, { name: 'By stranger' }, await createUser(t)), 'FORBIDDEN');
    expect(await t.db.pipelineStage.count({ where: { name: { in: ['By outsider', 'By nobody', 'By stranger'] } } })).toBe(0);
  });

  test('validation comes before access: an outsider with a bad name gets BAD_USER_INPUT', async () => {
    expectDetails(await create(acc, { name: '' }, acc.outsider), { name: ['Required'] });
  });

  test('an accountId that is not a UUID is BAD_USER_INPUT on accountId', async () => {
    expectDetails(await t.gql(CREATE, { input: { accountId: 'x', name: 'x' } }, { as: acc.owner }), { accountId: ['Must be a UUID'] });
  });
});

describe('Query.pipelineStages', () => {
  test('stages come in position order, then oldest first, and only this account', async () => {
    const fresh = await createAccount(t);
    const other = await createAccount(t);
    const base = Date.UTC(2024, 0, 1);
    const seed = (name: string, position: number, minute: number) =>
      t.db.pipelineStage.create({ data: { accountId: fresh.id, name, position, createdAt: new Date(base + minute * 60_000) } });
    await seed('Won', 9, 0);
    await seed('Proposal (newer)', 2, 5);
    await seed('Lead', 0, 3);
    await seed('Proposal (older)', 2, 1);
    await t.db.pipelineStage.create({ data: { accountId: other.id, name: 'Not yours', position: 1 } });
    const result = await list(fresh);
    expect(result.errors).toBeUndefined();
    expect(result.data.pipelineStages.map((s: { name: string }) => s.name)).toEqual(['Lead', 'Proposal (older)', 'Proposal (newer)', 'Won']);
  });

  test('an account without stages lists none', async () => {
    expect((await list(await createAccount(t))).data.pipelineStages).toEqual([]);
  });

  test('owner and member list stages; an outsider is FORBIDDEN; anonymous is UNAUTHENTICATED', async () => {
    await create(acc, { name: 'Visible' });
    expect((await list(acc)).data.pipelineStages.length).toBeGreaterThan(0);
    expect((await list(acc, acc.member)).data.pipelineStages).toEqual((await list(acc)).data.pipelineStages);
    expectCode(await list(acc, acc.outsider), 'FORBIDDEN');
    expectCode(await list(acc, null), 'UNAUTHENTICATED');
  });

  test('an accountId that is not a UUID is BAD_USER_INPUT; an unknown account is FORBIDDEN', async () => {
    expectDetails(await t.gql(LIST, { accountId: 'x' }, { as: acc.owner }), { accountId: ['Must be a UUID'] });
    expectCode(await t.gql(LIST, { accountId: '00000000-0000-4000-8000-000000000000' }, { as: acc.owner }), 'FORBIDDEN');
  });
});
