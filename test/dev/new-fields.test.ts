// docs/fields.md#adding-a-field-to-a-record, proved on a real branch (test/helpers/branch.ts) as a
// developer makes one: a throwaway field for contacts (`preferredName`, which a lead form may fill,
// so the form's enum of fields takes the value too), then one for deals (`lossReason`) and one for
// companies (`tagline`). Each change is one model line, the column and its migration; after each,
// `npm run generate`, and its own diff (against the branch's previous commit) names exactly the files
// the doc shows. The branch, with both, then type-checks and runs each change's fixture
// (test/fixtures/*.fixture.ts) against a database migrated with the columns (PGlite, or PostgreSQL
// when DATABASE_URL is set). One branch for both: a copy, a type-check and a migrated template once
// rather than twice (each is most of the time: docs/fields.md#adding-a-field-to-a-record).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeBranch, runFixtures, type Branch, type FixtureRun } from '../helpers/branch.js';

const CONTACT_MIGRATION = 'prisma/migrations/29991231000000_contact_preferred_name/migration.sql';
const RECORDS_MIGRATION = 'prisma/migrations/29991231000001_deal_loss_reason_company_tagline/migration.sql';
const CONTACT_FIXTURE = 'test/fixtures/new-contact-field.fixture.ts';
const RECORDS_FIXTURE = 'test/fixtures/new-record-fields.fixture.ts';

async function addContactField(branch: Branch): Promise<string[]> {
  await branch.insertAfter(
    'src/contacts/contact.model.ts',
    "  { name: 'ownerId', type: 'ID', rule: uuid.nullish(), description: { create: OWNER, update: OWNER } },\n",
    "  { name: 'preferredName', type: 'String', rule: optionalText(50), max: 50, csv: 'Preferred Name', import: true, form: 'nickname', createAnswer: true },\n",
  );
  await branch.insertAfter('prisma/schema.prisma', '  ownerId     String?       @map("owner_id") @db.Uuid\n', '  preferredName String?     @map("preferred_name") @db.VarChar(50)\n');
  await branch.insertAfter('prisma/schema.prisma', '  email\n  phone\n  company\n', '  preferred_name\n');
  await branch.write(CONTACT_MIGRATION, 'ALTER TABLE "contacts" ADD COLUMN "preferred_name" VARCHAR(50);\nALTER TYPE "contact_field" ADD VALUE \'preferred_name\';\n');
  await branch.run('npm', ['run', 'generate']);
  return branch.changed();
}

async function addDealAndCompanyFields(branch: Branch): Promise<string[]> {
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
  await branch.write(RECORDS_MIGRATION, 'ALTER TABLE "deals" ADD COLUMN "loss_reason" VARCHAR(120);\nALTER TABLE "companies" ADD COLUMN "tagline" VARCHAR(120);\n');
  await branch.run('npm', ['run', 'generate']);
  return branch.changed();
}

let branch: Branch;
let contactDiff: string[];
let recordsDiff: string[];
let runs: Record<string, FixtureRun>;
beforeAll(async () => {
  branch = await makeBranch('crm-new-fields-');
  contactDiff = await addContactField(branch);
  await branch.commit('a contact field');
  recordsDiff = await addDealAndCompanyFields(branch);
  runs = await runFixtures(branch, [CONTACT_FIXTURE, RECORDS_FIXTURE]);
}, 900_000); // a ceiling against a hang: it generates twice, type-checks and migrates a database of its own
afterAll(() => branch?.remove());

describe('fields added on a branch', () => {
  it('a contact field takes one spec line, the column and its migration, and reaches GraphQL, REST, the CSV export, imports, a lead form, events and the account export', () => {
    expect(contactDiff).toEqual([
      CONTACT_MIGRATION,
      'prisma/schema.prisma',
      'schema.graphql',
      'src/contacts/contact.model.ts',
      'src/rest/operations/contact.fields.graphql',
      'src/rest/operations/generated.ts',
    ]);
    expect(runs[CONTACT_FIXTURE]).toEqual({ tests: 8, failures: [] });
  });

  it('a deal field and a company field each take one model line, the column and its migration, and reach GraphQL, REST (list, by id, create, batch), imports, events and the account export', () => {
    expect(recordsDiff).toEqual([
      RECORDS_MIGRATION,
      'prisma/schema.prisma',
      'schema.graphql',
      'src/companies/company.model.ts',
      'src/deals/deal.model.ts',
      'src/rest/operations/company.fields.graphql',
      'src/rest/operations/deal.fields.graphql',
      'src/rest/operations/generated.ts',
    ]);
    expect(runs[RECORDS_FIXTURE]).toEqual({ tests: 10, failures: [] });
  });
});
