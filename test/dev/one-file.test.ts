import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GraphQLSchema, isObjectType } from 'graphql/index.js';
import { schema } from '../../src/schema.js';
import { createAccount, createContact } from '../factories/index.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

// The file test/dev/root-run.test.ts starts with a plain `npx vitest run` from the root, as an IDE
// does: no test/vitest.config.ts, so no global setup and Vitest's own module resolution.
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t?.close());

describe('one graphql module for the code and its libraries', () => {
  it('the schema Pothos builds is made of the graphql classes this code imports', () => {
    expect(schema).toBeInstanceOf(GraphQLSchema);
    expect(isObjectType(schema.getType('Contact'))).toBe(true);
  });

  it('an error the code throws is the GraphQLError Yoga knows: a query and a refusal answer as documented', async () => {
    const a = await createAccount(t);
    const contact = await createContact(t, a);
    const found = await t.gql('query ($id: ID!) { contact(id: $id) { id } }', { id: contact.id }, { as: a.owner });
    expect(found.data).toEqual({ contact: { id: contact.id } });
    // Masking lets through only what is a GraphQLError to Yoga: from another graphql it is INTERNAL_SERVER_ERROR.
    const refused = await t.gql('mutation ($input: AddTeamMemberInput!) { addTeamMember(input: $input) { userId } }',
      { input: { accountId: a.id, userId: randomUUID() } }, { as: a.outsider });
    expect(refused.errors?.[0]).toMatchObject({ message: 'Forbidden: no access to this account', extensions: { code: 'FORBIDDEN' } });
  });
});
