// A record's shapes are a function of its model and of the fields one account defined for it
// (src/model/shapes.ts, docs/fields.md#an-accounts-own-fields): a field defined at run time for one
// account is in that account's shapes and in no other's, and a change of its definitions is seen.
import { describe, expect, it } from 'vitest';
import { AccountShapes, customValueRule, plainlyValid, shapesOf, type CustomFieldDefinition, type CustomFieldType, type DefinitionsSource, type StoredDefinition } from '../../src/model/shapes.js';
import { CONTACT_MODEL } from '../../src/contacts/contact.model.js';
import { DEAL_MODEL } from '../../src/deals/deal.model.js';

const TIER: CustomFieldDefinition = { key: 'tier', label: 'Tier', type: 'SELECT', options: ['gold', 'silver'], required: false, archived: false, position: 1 };
const A = '00000000-0000-4000-8000-00000000000a';
const B = '00000000-0000-4000-8000-00000000000b';

/** Definitions kept in memory, as §23's table keeps them: each with the record it is for and when it last changed. */
function memorySource() {
  const defined = new Map<string, StoredDefinition[]>();
  let reads = 0;
  const source: DefinitionsSource = async (_db, accountId) => (reads++, defined.get(accountId) ?? []);
  const define = (accountId: string, field: CustomFieldDefinition, object = 'CONTACT') =>
    defined.set(accountId, [...(defined.get(accountId) ?? []), { ...field, object, updatedAt: new Date() }]);
  return { source, define, reads: () => reads };
}

const db = {} as never; // the memory source reads no database: a handle only

describe("a record's shapes per account", () => {
  it("a field defined at run time for one account is in that account's create rule, import columns and CSV, and in no other account's", async () => {
    const { source, define } = memorySource();
    const shapes = new AccountShapes(source);
    define(A, TIER);
    const [a, b] = [await shapes.of(db, A, CONTACT_MODEL), await shapes.of(db, B, CONTACT_MODEL)];

    expect(a.fields.map((f) => f.name)).toContain('tier');
    expect(b.fields.map((f) => f.name)).not.toContain('tier');
    expect(a.csvColumns.map((c) => c.label).at(-1)).toBe('Tier');
    expect(b.csvColumns.map((c) => c.label)).not.toContain('Tier');
    expect(a.importColumns.fields['custom_fields.tier']).toBe('customFields.tier');
    expect(a.importColumns.aliases).toMatchObject({ tier: 'custom_fields.tier', Tier: 'custom_fields.tier' });
    expect(b.importColumns.fields).not.toHaveProperty('custom_fields.tier');

    const input = { accountId: A, firstName: 'Ada', customFields: { tier: 'gold' } };
    expect(a.judge(input.customFields, 'create').details).toEqual({});
    expect(a.judge({ tier: 'bronze' }, 'create').details).not.toEqual({});
    expect(a.judge(input.customFields, 'create').values).toEqual({ tier: 'gold' });
    expect(b.judge(input.customFields, 'create').details).toEqual({ 'customFields.tier': ['Unknown field'] }); // no field of that account
  });

  it('definitions are read once while fresh; a change is seen once forgotten, and a record whose definitions did not change keeps its shapes', async () => {
    const { source, define, reads } = memorySource();
    const shapes = new AccountShapes(source);
    const before = await shapes.of(db, A, DEAL_MODEL);
    const contacts = await shapes.of(db, A, CONTACT_MODEL);
    expect(await shapes.of(db, A, DEAL_MODEL)).toBe(before);
    expect(reads()).toBe(1);
    define(A, { ...TIER, key: 'region', label: 'Region', type: 'TEXT', options: null }, 'DEAL');
    expect(await shapes.of(db, A, DEAL_MODEL)).toBe(before); // fresh: not read again
    shapes.forget(A);
    const after = await shapes.of(db, A, DEAL_MODEL);
    expect(reads()).toBe(2);
    expect(after.fields.map((f) => f.name)).toContain('region');
    expect(before.fields.map((f) => f.name)).not.toContain('region');
    expect(await shapes.of(db, A, CONTACT_MODEL)).toBe(contacts);
  });

  it('stale definitions are read again after the freshness window, with nothing forgotten', async () => {
    const { source, define, reads } = memorySource();
    const shapes = new AccountShapes(source, { freshMs: 0 });
    await shapes.of(db, A, CONTACT_MODEL);
    define(A, TIER);
    expect((await shapes.of(db, A, CONTACT_MODEL)).fields.map((f) => f.name)).toContain('tier');
    expect(reads()).toBe(2);
  });

  it("the items of one batch share one read of stale definitions on their database handle; another handle (another transaction) reads its own", async () => {
    const { source, reads } = memorySource();
    const shapes = new AccountShapes(source, { freshMs: 0 });
    await Promise.all(Array.from({ length: 100 }, () => shapes.of(db, A, CONTACT_MODEL)));
    expect(reads()).toBe(1);
    const other = {} as never;
    await Promise.all([shapes.of(db, A, CONTACT_MODEL), shapes.of(other, A, CONTACT_MODEL)]);
    expect(reads()).toBe(3);
  });

  it('a read begun before a change is not joined after forget(), nor kept: the change is seen at once', async () => {
    const { source, define, reads } = memorySource();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    // The first read takes the definitions as they were, then waits (a slow read in flight during the change).
    const slowFirst: DefinitionsSource = async (d, accountId) => {
      const first = reads() === 0;
      const definitions = await source(d, accountId);
      if (first) await gate;
      return definitions;
    };
    const shapes = new AccountShapes(slowFirst, { freshMs: 60_000 });
    const before = shapes.of(db, A, CONTACT_MODEL);
    define(A, TIER);
    shapes.forget(A);
    const after = await shapes.of(db, A, CONTACT_MODEL);
    expect(after.fields.map((f) => f.name)).toContain('tier');
    release();
    expect((await before).fields.map((f) => f.name)).not.toContain('tier');
    expect((await shapes.of(db, A, CONTACT_MODEL)).fields.map((f) => f.name)).toContain('tier');
    expect(reads()).toBe(2);
  });

  it('judges a create and an update patch key by key, naming customFields.<key>', () => {
    const shapes = shapesOf(CONTACT_MODEL, [TIER, { ...TIER, key: 'renewal', label: 'Renewal', type: 'DATE', options: null, required: true }]);
    expect(shapes.judge({ tier: 'bronze', nope: 1 }, 'create').details).toEqual({
      'customFields.tier': ['Must be one of: gold, silver'],
      'customFields.nope': ['Unknown field'],
      'customFields.renewal': ['Required'],
    });
    expect(shapes.judge({ tier: null, renewal: '2026-03-01' }, 'create')).toEqual({ values: { renewal: '2026-03-01' }, details: {} });
    expect(shapes.judge({ tier: null }, 'update')).toEqual({ values: { tier: null }, details: {} });
    expect(shapes.judge({ renewal: null }, 'update').details).toEqual({ 'customFields.renewal': ['Required'] });
    expect(shapes.visible({ tier: 'gold', gone: 'x' })).toEqual({ tier: 'gold' });
  });

  it("judges each type with create's words, names an unknown key, and requires a required field", () => {
    const shapes = shapesOf(CONTACT_MODEL, [
      { ...TIER, key: 'score', label: 'Score', type: 'NUMBER', options: null },
      { ...TIER, key: 'renewal', label: 'Renewal', type: 'DATE', options: null, required: true, position: 2 },
    ]);
    const issues = shapes.judge({ score: 1.1234567, renewal: '2026-02-30', nope: 1 }, 'create').details;
    expect(issues).toMatchObject({ 'customFields.score': ['Must have at most 6 decimals'], 'customFields.renewal': ['Must be a real date in the form YYYY-MM-DD'] });
    expect(Object.values(issues).flat()).toContain('Unknown field');
    expect(Object.values(shapes.judge({}, 'create').details).flat()).toContain('Required');
    expect(shapes.judge({ renewal: '2026-02-28', score: 2.5 }, 'create').details).toEqual({});
  });

  it('a value told plainly valid without the rule is one the rule passes, unchanged; every other goes to the rule', () => {
    const samples: unknown[] = [
      'gold', 'silver', 'bronze', '', ' gold', 'x'.repeat(1000), 'x'.repeat(1001), '2027-03-01', '2027-02-30', '2027-3-1', ' 2027-03-01', '0001-01-01', '9999-12-31',
      0, -5, 2.5, 1.123456, 1.1234567, 1e21, 1e308, -1e308, Number.NaN, Infinity, true, false, null, undefined, {}, [], ['a'], ['a', 'b'], ['a', 'a'], ['a', 1], ['z'],
      'https://example.com', 'a@example.com', '+1 555 0100', 'a\u0000b', 'a\ud800b', 'https://example.com/a\u0000b',
    ];
    const types: CustomFieldType[] = ['TEXT', 'NUMBER', 'DATE', 'BOOLEAN', 'SELECT', 'MULTI_SELECT', 'URL', 'EMAIL', 'PHONE'];
    let told = 0;
    for (const type of types) {
      const options = type === 'SELECT' ? ['gold', 'silver'] : type === 'MULTI_SELECT' ? ['a', 'b'] : null;
      for (const required of [false, true]) {
        const field: CustomFieldDefinition = { ...TIER, type, options, required };
        const plain = plainlyValid(field);
        for (const value of samples) {
          if (!plain?.(value)) continue;
          told++;
          const judged = customValueRule(field).safeParse(value);
          expect({ type, value, judged: judged.success && judged.data }).toEqual({ type, value, judged: value });
        }
      }
    }
    // Every type but the three the rule alone reads has values told plainly (so the shortcut is taken).
    expect(types.filter((type) => samples.some((v) => plainlyValid({ type, options: type === 'SELECT' ? ['gold', 'silver'] : ['a', 'b'] })?.(v)))).toEqual(types.slice(0, 6));
    expect(told).toBeGreaterThan(20);
  });

  it('a value the database cannot keep (a NUL, an unpaired surrogate) is refused by every type that takes text, by name', () => {
    const types: CustomFieldType[] = ['TEXT', 'DATE', 'SELECT', 'MULTI_SELECT', 'URL', 'EMAIL', 'PHONE'];
    const shapes = shapesOf(CONTACT_MODEL, types.map((type, position) => ({ ...TIER, key: type.toLowerCase(), type, options: ['x', 'y'], position })));
    for (const bad of ['a\u0000b', 'a\ud800b', 'https://example.com/a\u0000b', 'a\u0000b@example.com']) {
      const given = Object.fromEntries(types.map((type) => [type.toLowerCase(), type === 'MULTI_SELECT' ? [bad] : bad]));
      const { details } = shapes.judge(given, 'create');
      expect(Object.keys(details).sort()).toEqual(types.map((type) => `customFields.${type.toLowerCase()}`).sort());
    }
    expect(shapes.judge({ text: 'a\u0000b' }, 'update').details).toEqual({ 'customFields.text': ['Must not contain NUL characters or unpaired surrogates'] });
  });

  it('an archived field is no field: left out of every shape', () => {
    const shapes = shapesOf(CONTACT_MODEL, [{ ...TIER, archived: true }]);
    expect(shapes.fields.map((f) => f.name)).not.toContain('tier');
    expect(shapes.csvColumns.map((c) => c.label)).not.toContain('Tier');
  });
});
