// A record's shapes are a function of its model and of the fields one account defined for it
// (src/model/shapes.ts, docs/fields.md#an-accounts-own-fields): a field defined at run time for one
// account is in that account's shapes and in no other's, and a change of its definitions is seen.
import { describe, expect, it } from 'vitest';
import { AccountShapes, shapesOf, type CustomFieldDefinition, type DefinitionsSource } from '../../src/model/shapes.js';
import { CONTACT_MODEL } from '../../src/contacts/contact.model.js';
import { DEAL_MODEL } from '../../src/deals/deal.model.js';

const TIER: CustomFieldDefinition = { key: 'tier', label: 'Tier', type: 'SELECT', options: ['gold', 'silver'], required: false, archived: false, position: 1 };
const A = '00000000-0000-4000-8000-00000000000a';
const B = '00000000-0000-4000-8000-00000000000b';

/** Definitions kept in memory, as §23's table keeps them: a version per account that moves with every change. */
function memorySource() {
  const defined = new Map<string, CustomFieldDefinition[]>();
  const versions = new Map<string, number>();
  let reads = 0;
  const source: DefinitionsSource = {
    version: async (accountId) => String(versions.get(accountId) ?? 0),
    definitions: async (accountId) => (reads++, defined.get(accountId) ?? []),
  };
  const define = (accountId: string, field: CustomFieldDefinition) => {
    defined.set(accountId, [...(defined.get(accountId) ?? []), field]);
    versions.set(accountId, (versions.get(accountId) ?? 0) + 1);
  };
  return { source, define, reads: () => reads };
}

describe("a record's shapes per account", () => {
  it("a field defined at run time for one account is in that account's create rule, import columns and CSV, and in no other account's", async () => {
    const { source, define } = memorySource();
    const shapes = new AccountShapes(source);
    define(A, TIER);
    const [a, b] = [await shapes.of(A, CONTACT_MODEL), await shapes.of(B, CONTACT_MODEL)];

    expect(a.fields.map((f) => f.name)).toContain('tier');
    expect(b.fields.map((f) => f.name)).not.toContain('tier');
    expect(a.csvColumns.map((c) => c.label).at(-1)).toBe('Tier');
    expect(b.csvColumns.map((c) => c.label)).not.toContain('Tier');
    expect(a.importColumns.fields.tier).toBe('customFields.tier');
    expect(a.importColumns.aliases.Tier).toBe('tier');
    expect(b.importColumns.fields).not.toHaveProperty('tier');

    const input = { accountId: A, firstName: 'Ada', customFields: { tier: 'gold' } };
    expect(a.create.safeParse(input).success).toBe(true);
    expect(a.create.safeParse({ ...input, customFields: { tier: 'bronze' } }).success).toBe(false);
    expect(a.create.parse(input)).toMatchObject({ customFields: { tier: 'gold' } });
    expect(b.create.parse(input)).not.toHaveProperty('customFields'); // no field of that account: no part of its input
  });

  it('a change to the definitions is seen at the next read, and an unchanged version derives nothing again', async () => {
    const { source, define, reads } = memorySource();
    const shapes = new AccountShapes(source);
    const before = await shapes.of(A, DEAL_MODEL);
    expect(await shapes.of(A, DEAL_MODEL)).toBe(before);
    expect(reads()).toBe(1);
    define(A, { ...TIER, key: 'region', label: 'Region', type: 'TEXT', options: null });
    const after = await shapes.of(A, DEAL_MODEL);
    expect(after.fields.map((f) => f.name)).toContain('region');
    expect(before.fields.map((f) => f.name)).not.toContain('region');
  });

  it("judges each type with create's words, names an unknown key, and requires a required field", () => {
    const shapes = shapesOf(CONTACT_MODEL, [
      { ...TIER, key: 'score', label: 'Score', type: 'NUMBER', options: null },
      { ...TIER, key: 'renewal', label: 'Renewal', type: 'DATE', options: null, required: true, position: 2 },
    ]);
    const judged = shapes.create.safeParse({ accountId: A, firstName: 'Ada', customFields: { score: 1.1234567, renewal: '2026-02-30', nope: 1 } });
    expect(judged.success).toBe(false);
    const issues = Object.fromEntries(judged.error!.issues.map((issue) => [issue.path.join('.') || String((issue as { keys?: string[] }).keys), issue.message]));
    expect(issues).toMatchObject({ 'customFields.score': 'Must have at most 6 decimals', 'customFields.renewal': 'Must be a real date in the form YYYY-MM-DD' });
    expect(Object.values(issues)).toContain('Unknown field');
    expect(shapes.create.safeParse({ accountId: A, firstName: 'Ada', customFields: {} }).error!.issues.map((i) => i.message)).toContain('Required');
    expect(shapes.create.safeParse({ accountId: A, firstName: 'Ada', customFields: { renewal: '2026-02-28', score: 2.5 } }).success).toBe(true);
  });

  it('an archived field is no field: left out of every shape', () => {
    const shapes = shapesOf(CONTACT_MODEL, [{ ...TIER, archived: true }]);
    expect(shapes.fields.map((f) => f.name)).not.toContain('tier');
    expect(shapes.csvColumns.map((c) => c.label)).not.toContain('Tier');
  });
});
