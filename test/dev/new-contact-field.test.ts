// docs/fields.md#adding-a-field-to-a-record, proved on a real branch (test/helpers/branch.ts): the
// throwaway field `preferredName` is added as a developer adds it (one spec line, the column and its
// migration; a lead form may fill it, so the form's enum of fields takes the value too), the branch
// regenerates, type-checks, and runs test/fixtures/new-contact-field.fixture.ts against a database
// migrated with the column (PGlite, or PostgreSQL when DATABASE_URL is set).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeBranch, runFixture, type Branch } from '../helpers/branch.js';

const MIGRATION = 'prisma/migrations/29991231000000_contact_preferred_name/migration.sql';

let branch: Branch;
beforeAll(async () => {
  branch = await makeBranch('crm-new-field-');
}, 120_000);
afterAll(() => branch?.remove());

describe('a field added to contacts on a branch', () => {
  it('takes one spec line, the column and its migration, and reaches GraphQL, REST, the CSV export, imports, a lead form, events and the account export', async () => {
    await branch.insertAfter(
      'src/contacts/contact.model.ts',
      "  { name: 'ownerId', type: 'ID', rule: uuid.nullish(), description: { create: OWNER, update: OWNER } },\n",
      "  { name: 'preferredName', type: 'String', rule: optionalText(50), max: 50, csv: 'Preferred Name', import: true, form: 'nickname', createAnswer: true },\n",
    );
    await branch.insertAfter('prisma/schema.prisma', '  ownerId     String?       @map("owner_id") @db.Uuid\n', '  preferredName String?     @map("preferred_name") @db.VarChar(50)\n');
    await branch.insertAfter('prisma/schema.prisma', '  email\n  phone\n  company\n', '  preferred_name\n');
    await branch.write(MIGRATION, 'ALTER TABLE "contacts" ADD COLUMN "preferred_name" VARCHAR(50);\nALTER TYPE "contact_field" ADD VALUE \'preferred_name\';\n');

    await branch.run('npm', ['run', 'generate']);
    expect(await branch.changed()).toEqual([
      MIGRATION,
      'prisma/schema.prisma',
      'schema.graphql',
      'src/contacts/contact.model.ts',
      'src/rest/operations/contact.fields.graphql',
      'src/rest/operations/generated.ts',
    ]);
    expect(await runFixture(branch, 'test/fixtures/new-contact-field.fixture.ts')).toMatch(/Tests\s+8 passed \(8\)/);
  }, 600_000); // a ceiling against a hang: it generates, type-checks and migrates a database of its own
});
