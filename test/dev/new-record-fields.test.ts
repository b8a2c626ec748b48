// docs/fields.md#adding-a-field-to-a-record for deals and companies, proved on a real branch
// (test/helpers/branch.ts): each takes the throwaway field as a developer adds it (one line in its
// model, the column and its migration), the branch regenerates, type-checks, and runs
// test/fixtures/new-record-fields.fixture.ts against a database migrated with the columns.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeBranch, runFixture, type Branch } from '../helpers/branch.js';

const MIGRATION = 'prisma/migrations/29991231000000_deal_loss_reason_company_tagline/migration.sql';

let branch: Branch;
beforeAll(async () => {
  branch = await makeBranch('crm-new-fields-');
}, 120_000);
afterAll(() => branch?.remove());

describe('a field added to deals and one to companies on a branch', () => {
  it('each takes one model line, the column and its migration, and reaches GraphQL, REST (list, by id, create, batch), imports, events and the account export', async () => {
    await branch.insertAfter(
      'src/deals/deal.model.ts',
      "  { name: 'ownerId', type: 'ID', rule: optionalUuid, description: { create: OWNER, update: OWNER } },\n",
      "  { name: 'lossReason', type: 'String', rule: optionalText(120), max: 120, import: true, createAnswer: true },\n",
    );
    await branch.insertAfter(
      'src/companies/company.model.ts',
      "  { name: 'ownerId', type: 'ID', rule: optionalUuid, import: true, description: { create: OWNER, update: OWNER, batch: OWNER } },\n",
      "  { name: 'tagline', type: 'String', rule: optionalText(120), max: 120, import: true },\n",
    );
    // The model's imports, as the developer's editor adds them.
    await branch.insertAfter('src/deals/deal.model.ts', "import { day, externalId, money, optionalUuid, requiredText, TYPE_MESSAGES } from '../validation.js';\n", "import { optionalText } from '../validation.js';\n");
    await branch.insertAfter('prisma/schema.prisma', '  stageId           String?    @map("stage_id") @db.Uuid\n', '  lossReason        String?    @map("loss_reason") @db.VarChar(120)\n');
    await branch.insertAfter('prisma/schema.prisma', '  website    String?  @db.VarChar(2048)\n', '  tagline    String?  @db.VarChar(120)\n');
    await branch.write(MIGRATION, 'ALTER TABLE "deals" ADD COLUMN "loss_reason" VARCHAR(120);\nALTER TABLE "companies" ADD COLUMN "tagline" VARCHAR(120);\n');

    await branch.run('npm', ['run', 'generate']);
    expect(await branch.changed()).toEqual([
      MIGRATION,
      'prisma/schema.prisma',
      'schema.graphql',
      'src/companies/company.model.ts',
      'src/deals/deal.model.ts',
      'src/rest/operations/company.fields.graphql',
      'src/rest/operations/deal.fields.graphql',
      'src/rest/operations/generated.ts',
    ]);
    expect(await runFixture(branch, 'test/fixtures/new-record-fields.fixture.ts')).toMatch(/Tests\s+10 passed \(10\)/);
  }, 600_000); // a ceiling against a hang: it generates, type-checks and migrates a database of its own
});
